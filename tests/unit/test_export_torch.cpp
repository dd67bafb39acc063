// `export --torch`: the op's interface derived from the family spec (attention and gemm alike),
// the generated op's checks and registrations, its loader, and (where a torch is installed, found
// without importing it) the op compiled against torch's headers. Runs on the CPU; the op itself
// runs in tools/torch_op_check.py (GPU test TorchOp.SdpaFwdAgainstTorch).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "export/export.hpp"
#include "export/kernel_model.hpp"
#include "export/launcher_gen.hpp"
#include "export/torch_gen.hpp"
#include "export/torch_model.hpp"
#include "export/workspace_gen.hpp"
#include "test_dir.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;
using namespace exporter;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Family shipped(const std::string& name) {
  return load_family(fs::path(KFORGE_SOURCE_DIR) / "search_spaces" / (name + ".json"));
}

KernelModel model_of(const Family& f, const std::string& shape, const std::string& name) {
  const Shape s = parse_shape(f, shape);
  return make_kernel_model(f, complete_stored_config(f, f.defaults.at(0)), s, name, "sm_90", DeviceLimits::for_arch("sm_90"));
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(ExportTorch, AttentionSchemaFromTheSpec) {
  const Family f = shipped("sdpa_fwd");
  const KernelModel k = model_of(f, "B=8,H=16,S=512,D=64,causal=0,dtype=f16", "sdpa_k");
  const TorchOpModel op = make_torch_op_model("sdpa_fwd", k.name, {k});
  // B, H, S, D from Q's shape, dtype from Q's dtype, causal (no tensor has it) an argument.
  EXPECT_EQ(op.schema, "sdpa_fwd(Tensor Q, Tensor K, Tensor V, bool causal=False) -> Tensor");
  EXPECT_EQ(op.scratch_count, 3);  // OPART, MLPART, CNT: one workspace
  const std::string src = generate_torch_op(op, "../sdpa_k.h", "rule");
  for (const char* want :
       {"TORCH_LIBRARY_FRAGMENT(kforge, m) { m.def(\"sdpa_fwd(Tensor Q, Tensor K, Tensor V, bool causal=False) -> Tensor\"); }",
        "TORCH_LIBRARY_IMPL(kforge, CUDA, m) { m.impl(\"sdpa_fwd\", &kfx_cuda); }",
        "TORCH_LIBRARY_IMPL(kforge, Meta, m) { m.impl(\"sdpa_fwd\", &kfx_meta); }",
        "TORCH_CHECK(t_Q.dim() == 4", "s.B = t_Q.sym_size(0);",
        // grouped-query heads and a KV cache: K and V are [B, Hkv, Skv, D], their Hkv and Skv read from K
        "s.Hkv = t_K.sym_size(1);", "s.Skv = t_K.sym_size(2);", "TORCH_CHECK(t_V.sym_size(1) == s.Hkv",
        "TORCH_CHECK(t_K.sym_size(0) == s.B",
        "TORCH_CHECK(kfx_dtype_name(t_V.scalar_type()) == s.dtype",
        "TORCH_CHECK(s.dtype == \"f16\" || s.dtype == \"bf16\"", "must be contiguous", "16-byte aligned",
        "must be a CUDA tensor", "at::cuda::getCurrentCUDAStream().stream()", "c10::cuda::CUDAGuard",
        "sdpa_k_workspace_layout(d_B, d_H, d_S, d_D, d_causal, s.dtype.c_str(), d_Hkv, d_Skv, kfx_offsets)",
        "at::zeros({static_cast<int64_t>(kfx_bytes)}", "at::empty_symint({s.B, s.H, s.S, s.D}",
        "at::Tensor o_O = at::empty({d_B, d_H, d_S, d_D}, t_Q.options().dtype(kfx_scalar_type(s.dtype)))",
        "e != cudaErrorInvalidValue", "e != cudaErrorInvalidDevicePointer", "static_cast<const kforge_f16*>(t_Q.data_ptr())",
        "reinterpret_cast<int*>(kfx_base + kfx_offsets[2])"})
    EXPECT_TRUE(has(src, want)) << "missing: " << want << "\n" << src;
  // Capturable: nothing synchronizes, nothing allocates outside torch's allocator.
  for (const char* banned : {"cudaMalloc", "cudaDeviceSynchronize", "cudaStreamSynchronize", ".cpu()", ".item<",
                             "t_Q.sym_size(0) == s.B"})  // (nor checks Q against itself)
    EXPECT_FALSE(has(src, banned)) << banned;
}

TEST(ExportTorch, GemmSchemaTakesTheOutputTypeAsAnArgument) {
  const Family f = shipped("gemm");
  const KernelModel k = model_of(f, "M=4096,N=4096,K=4096,dtype=f32", "gemm_k");
  const TorchOpModel op = make_torch_op_model("gemm", k.name, {k});
  // dtype is only C's type and b_layout no tensor's: no input carries them, so they are arguments (default: the
  // exported shape's); in_dtype is A's and B's dtype.
  EXPECT_EQ(op.schema, "gemm(Tensor A, Tensor B, str dtype=\"f32\", str b_layout=\"kn\") -> Tensor");
  EXPECT_EQ(op.scratch_count, 0);
  const std::string src = generate_torch_op(op, "../gemm_k.h", "rule");
  EXPECT_TRUE(has(src, "s.in_dtype = kfx_dtype_name(t_A.scalar_type());")) << src;
  EXPECT_TRUE(has(src, "TORCH_CHECK(kfx_dtype_name(t_B.scalar_type()) == s.in_dtype")) << src;
  EXPECT_TRUE(has(src, "TORCH_CHECK(t_B.sym_size(0) == s.K")) << src;
  EXPECT_TRUE(has(src, "s.dtype = std::string(a_dtype.data(), a_dtype.size());")) << src;
  EXPECT_TRUE(has(src, "at::Tensor o_C = at::empty({d_M, d_N}")) << src;
  EXPECT_FALSE(has(src, "_workspace_layout")) << src;  // no scratch: no workspace
}

TEST(ExportTorch, RefusesBuffersNotShapedByDims) {
  Family f = shipped("gemm");
  f.buffers[0].count = Expr::parse("M * K + 8");
  const KernelModel k = model_of(f, "M=64,N=64,K=64,dtype=f16", "gemm_k");
  try {
    make_torch_op_model("gemm", k.name, {k});
    FAIL() << "no refusal";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(has(e.what(), "export --torch: buffer A has M * K + 8 elements")) << e.what();
  }
}

// The toy family through export_kernels: one kernel, then two behind the dispatcher (the op calls
// the dispatcher and sizes its workspace by the union layout).
TEST(ExportTorch, ExportWritesOpLoaderAndManifest) {
  const Family toy = load_family(fs::path(KFORGE_TEST_DIR) / "families" / "toy" / "toy.json");
  EvaluationRecord a;
  a.family = toy.name;
  a.status = Status::Ok;
  a.config = parse_assignment("BLOCK=128,VEC=4,MODE=unrolled");  // renders for sm_90a
  a.shape = parse_shape(toy, "N=4096,dtype=f16");
  EvaluationRecord b = a;
  b.config = parse_assignment("BLOCK=128,VEC=2,MODE=plain");
  b.shape = parse_shape(toy, "N=1024,dtype=f16");
  ExportInput in;
  in.family = &toy;
  in.base_arch = "sm_90";
  in.torch = true;
  in.winners = {a, b};
  in.out_dir = fresh_test_dir("kforge_export_torch");
  const ExportOutput out = export_kernels(in);
  EXPECT_EQ(out.manifest["torch"]["op"], "kforge::toy");
  EXPECT_EQ(out.manifest["torch"]["schema"], "kforge::toy(Tensor x) -> Tensor");
  EXPECT_EQ(out.manifest["torch"]["calls"], "toy_dispatch");
  const std::string src = read_text(in.out_dir / "torch" / "toy_op.cpp");
  EXPECT_TRUE(has(src, "#include \"../toy_dispatch.h\"")) << src;
  EXPECT_TRUE(has(src, "toy_dispatch_workspace_layout(d_N, s.dtype.c_str(), kfx_offsets)")) << src;
  const std::string loader = read_text(in.out_dir / "torch" / "load.py");
  EXPECT_TRUE(has(loader, "(\"toy_N4096_f16.cu\", [\"-gencode\", \"arch=compute_90a,code=sm_90a\"")) << loader;
  EXPECT_TRUE(has(loader, "(\"toy_dispatch.cu\", [\"-gencode\", \"arch=compute_90a,code=sm_90a\"]),")) << loader;
  EXPECT_TRUE(has(loader, "cpp_extension.load(")) << loader;
  if (std::system("python3 --version > /dev/null 2>&1") == 0) {
    const std::string cmd = "python3 -m py_compile " + (in.out_dir / "torch" / "load.py").string();
    EXPECT_EQ(std::system(cmd.c_str()), 0) << loader;
  }
  // Without --torch: no torch/ folder, "torch": null.
  in.torch = false;
  in.out_dir = fresh_test_dir("kforge_export_torch_off");
  EXPECT_TRUE(export_kernels(in).manifest["torch"].is_null());
  EXPECT_FALSE(fs::exists(in.out_dir / "torch"));
}

// torch's include folder, found without importing torch (no CUDA libraries needed): "" if none.
std::string torch_include_dir() {
  const fs::path out = fs::temp_directory_path() / ("kforge_torch_dir_" + std::to_string(::getpid()));
  const std::string cmd = "python3 -c \"import importlib.util as u; s = u.find_spec('torch'); "
                          "print(s.submodule_search_locations[0] if s else '')\" > " + out.string() + " 2>/dev/null";
  std::string dir;
  if (std::system(cmd.c_str()) == 0) dir = read_text(out);
  fs::remove(out);
  while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r')) dir.pop_back();
  return dir.empty() || !fs::exists(fs::path(dir) / "include" / "torch" / "library.h") ? "" : (fs::path(dir) / "include").string();
}

TEST(ExportTorch, OpCompilesAgainstTorchHeaders) {
  const std::string inc = torch_include_dir();
  if (inc.empty()) GTEST_SKIP() << "no torch installed for python3 (the op's compile is checked where one is)";
  std::string cuda = "/usr/local/cuda/include";
  if (!fs::exists(cuda + "/cuda_runtime.h")) GTEST_SKIP() << "no CUDA headers in /usr/local/cuda/include";
  const Family f = shipped("sdpa_fwd");
  const fs::path dir = fresh_test_dir("kforge_export_torch_cxx");
  const KernelModel k = model_of(f, "B=8,H=16,S=512,D=64,causal=0,dtype=f16", "sdpa_k");
  std::ofstream(dir / "sdpa_k.h") << generate_header(k) << generate_workspace_header(k);
  fs::create_directories(dir / "torch");
  const TorchOpModel op = make_torch_op_model("sdpa_fwd", k.name, {k});
  std::ofstream(dir / "torch" / "op.cpp") << generate_torch_op(op, "../sdpa_k.h", "rule");
  // Recent torch needs C++20 (ATen.h says so), older C++17.
  const std::string std = read_text(fs::path(inc) / "ATen" / "ATen.h").find("C++20 or later") != std::string::npos ? "c++20" : "c++17";
  const std::string cmd = "cd " + (dir / "torch").string() + " && c++ -std=" + std + " -fsyntax-only -I" + inc + " -I" + inc +
                          "/torch/csrc/api/include -I" + cuda + " op.cpp > log.txt 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << read_text(dir / "torch" / "log.txt");
}


// B stored as [N][K] (a layer's weights): the op checks B's axes by the spec's "axes", so x @ W.T with N != K is
// taken, and N comes from B's first axis.
TEST(ExportTorch, GemmWithWeightsAsStoredChecksBAsNByK) {
  const Family f = shipped("gemm");
  const KernelModel k = model_of(f, "M=64,N=14336,K=4096,dtype=bf16,in_dtype=bf16,b_layout=nk", "gemm_k");
  const TorchOpModel op = make_torch_op_model("gemm", k.name, {k});
  EXPECT_EQ(op.schema, "gemm(Tensor A, Tensor B, str dtype=\"bf16\", str b_layout=\"nk\") -> Tensor");
  const std::string src = generate_torch_op(op, "../gemm_k.h", "rule");
  EXPECT_TRUE(has(src, "s.N = t_B.sym_size(0);")) << src;
  EXPECT_TRUE(has(src, "TORCH_CHECK(t_B.sym_size(1) == s.K")) << src;
  EXPECT_FALSE(has(src, "TORCH_CHECK(t_B.sym_size(0) == s.K")) << src;

  // a default-layout export keeps B as [K][N]
  const KernelModel kn = model_of(f, "M=64,N=14336,K=4096,dtype=bf16,in_dtype=bf16", "gemm_kn");
  const std::string src_kn = generate_torch_op(make_torch_op_model("gemm", kn.name, {kn}), "../gemm_kn.h", "rule");
  EXPECT_TRUE(has(src_kn, "TORCH_CHECK(t_B.sym_size(0) == s.K")) << src_kn;

  // one op over both layouts would need B's axes to follow an argument: refused, one line
  try {
    make_torch_op_model("gemm", "both", {k, kn});
    ADD_FAILURE() << "exported";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(has(e.what(), "buffer B has axes 'N, K' at one exported shape and 'K, N' at another")) << e.what();
  }
}

}  // namespace
}  // namespace kf
