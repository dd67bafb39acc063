// Export on a GPU: the exported launchers (and the dispatcher) are built with plain nvcc into
// a generated program that runs them next to the family's reference kernel, on the exported
// shape and on other shapes they accept, and compares the outputs within the family's
// tolerance; a shape they refuse must return cudaErrorInvalidValue.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <tuple>

#include "export/cxx_expr.hpp"
#include "export/export.hpp"
#include "export/kernel_model.hpp"
#include "family/render.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int run(const std::string& cmd, std::string* log) {
  const std::string out = (fs::temp_directory_path() / ("kforge_gpu_export_cmd_" + std::to_string(::getpid()))).string();
  const int rc = std::system((cmd + " > " + out + " 2>&1").c_str());
  *log = read(out);
  fs::remove(out);
  return rc;
}

std::string find_nvcc() {
  if (std::system("nvcc --version > /dev/null 2>&1") == 0) return "nvcc";
  if (fs::exists("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return "";
}

// Code that runs `call` (a launcher call over buffers named b_<buffer>) and the reference on
// `shape`, then compares every output buffer.
std::string check_block(const Family& f, const Shape& shape, const std::string& label, const std::string& call_name,
                        const DeviceLimits& d) {
  const Scope ref_scope = make_reference_scope(f, shape, d);
  std::ostringstream o;
  o << "  {\n    std::printf(\"case " << label << "\\n\");\n";
  for (const BufferSpec& b : f.buffers) {
    const std::string ctype = exporter::ctype_of(b.dtype.eval_string(ref_scope));
    const int64_t n = b.count.eval_int(ref_scope);
    if (b.role == BufferRole::Input) {
      o << "    " << ctype << "* b_" << b.name << " = upload<" << ctype << ">(" << n << ", " << b.init.lo << ", "
        << b.init.hi << ");\n";
    } else {
      const bool zero = b.role == BufferRole::Scratch;
      o << "    " << ctype << "* b_" << b.name << " = fresh<" << ctype << ">(" << n << ", " << zero << ");\n";
      o << "    " << ctype << "* r_" << b.name << " = fresh<" << ctype << ">(" << n << ", " << zero << ");\n";
    }
  }
  o << "    CHECK(" << call_name << "(";
  for (const BufferSpec& b : f.buffers) o << "b_" << b.name << ", ";
  for (const DimSpec& dim : f.dims)
    o << (dim.is_enum ? "\"" + to_string(shape.at(dim.name)) + "\"" : std::to_string(as_int(shape.at(dim.name))))
      << ", ";
  o << "0));\n";
  const ResolvedLaunch l = resolve_launch(f.reference.launch, ref_scope);
  o << "    " << f.reference.entry << "<<<dim3(" << l.grid[0] << ", " << l.grid[1] << ", " << l.grid[2] << "), dim3("
    << l.block[0] << ", " << l.block[1] << ", " << l.block[2] << "), " << l.smem << ">>>(";
  for (size_t i = 0; i < f.reference.args.size(); ++i) {
    const ArgSpec& a = f.reference.args[i];
    o << (i ? ", " : "");
    if (a.kind == ArgSpec::Kind::Buffer) {
      o << (f.buffer(a.buffer)->role == BufferRole::Input ? "b_" : "r_") << a.buffer;
    } else if (a.kind == ArgSpec::Kind::F32) {
      o << "static_cast<float>(" << exporter::cxx_real_literal(static_cast<float>(a.value.eval_double(ref_scope))) << ")";
    } else {
      o << a.value.eval_int(ref_scope) << (a.kind == ArgSpec::Kind::I64 ? "LL" : "");
    }
  }
  o << ");\n    CHECK(cudaGetLastError());\n    CHECK(cudaDeviceSynchronize());\n";
  const Tolerance tol = f.tolerance_for(shape);
  for (const BufferSpec& b : f.buffers) {
    if (b.role != BufferRole::Output) continue;
    o << "    compare(\"" << b.name << "\", b_" << b.name << ", r_" << b.name << ", " << b.count.eval_int(ref_scope)
      << ", " << tol.max_abs << ", " << tol.rel_l2 << ");\n";
  }
  for (const BufferSpec& b : f.buffers) {
    o << "    CHECK(cudaFree(b_" << b.name << "));\n";
    if (b.role != BufferRole::Input) o << "    CHECK(cudaFree(r_" << b.name << "));\n";
  }
  o << "  }\n";
  return o.str();
}

const char* kPrelude = R"CXX(#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define CHECK(call)                                                                          \
  do {                                                                                       \
    const cudaError_t e_ = (call);                                                           \
    if (e_ != cudaSuccess) {                                                                 \
      std::printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

static int failures = 0;
static std::mt19937 rng(7);
static float to_f(__half v) { return __half2float(v); }
static float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
static float to_f(float v) { return v; }
static float to_f(int v) { return static_cast<float>(v); }
template <typename T> T from_f(float v);
template <> __half from_f<__half>(float v) { return __float2half(v); }
template <> __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16(v); }
template <> float from_f<float>(float v) { return v; }
template <> int from_f<int>(float v) { return static_cast<int>(std::floor(v)); }

template <typename T> T* upload(size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<T> h(n);
  for (auto& x : h) x = from_f<T>(u(rng));
  T* d = nullptr;
  CHECK(cudaMalloc(&d, n * sizeof(T)));
  CHECK(cudaMemcpy(d, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
// Outputs start as NaN (all bits set), so an element nobody writes fails the comparison.
template <typename T> T* fresh(size_t n, bool zero) {
  T* d = nullptr;
  CHECK(cudaMalloc(&d, n * sizeof(T)));
  CHECK(cudaMemset(d, zero ? 0 : 0xFF, n * sizeof(T)));
  return d;
}
template <typename T> void compare(const char* name, const T* got_d, const T* want_d, size_t n, double max_abs, double rel_l2) {
  std::vector<T> got(n), want(n);
  CHECK(cudaMemcpy(got.data(), got_d, n * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(want.data(), want_d, n * sizeof(T), cudaMemcpyDeviceToHost));
  double worst = 0, num = 0, den = 0;
  bool finite = true;
  for (size_t i = 0; i < n; ++i) {
    const double g = to_f(got[i]), w = to_f(want[i]);
    if (!std::isfinite(g)) finite = false;
    worst = std::fmax(worst, std::fabs(g - w));
    num += (g - w) * (g - w);
    den += w * w;
  }
  const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  const bool ok = finite && worst <= max_abs && rel <= rel_l2;
  std::printf("  %s: max_abs %.3g rel_l2 %.3g finite %d -> %s\n", name, worst, rel, finite ? 1 : 0, ok ? "ok" : "FAIL");
  if (!ok) ++failures;
}
)CXX";

class ExportGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0)
      GTEST_SKIP() << "no CUDA device (" << (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") << ")";
    nvcc = find_nvcc();
    if (nvcc.empty()) GTEST_SKIP() << "nvcc not found on PATH or in /usr/local/cuda/bin";
    cudaDeviceProp p{};
    ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
    arch = "sm_" + std::to_string(p.major * 10 + p.minor);
    limits = DeviceLimits::for_arch(arch);
    family = load_family(fs::path(KFORGE_TEST_DIR) / "families" / "export_fixture" / "export_fixture.json");
    dir = fs::temp_directory_path() / ("kforge_gpu_export_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override {
    if (!dir.empty()) fs::remove_all(dir);
  }

  EvaluationRecord winner(const std::string& config, const std::string& shape) {
    EvaluationRecord r;
    r.family = family.name;
    r.config = parse_assignment(config);
    r.shape = parse_shape(family, shape);
    r.device = {"test device", limits.cc(), limits.sm_count, ""};
    return r;
  }

  // Builds main.cu (prelude + reference + body) with the given exported sources and runs it.
  // The reference is rendered for `ref_shape` (it specializes nothing).
  void build_and_run(const std::string& body, const std::string& includes, const std::string& sources,
                     const std::string& ref_shape = "R=1,C=1,dtype=f16") {
    const Variant ref = render_reference(family, parse_shape(family, ref_shape));
    std::ofstream(dir / "main.cu") << kPrelude << "\n// The family's reference kernel.\n"
                                   << ref.source << "\n" << includes << "\nint main() {\n" << body
                                   << "  std::printf(\"%d failures\\n\", failures);\n  return failures ? 1 : 0;\n}\n";
    std::string log;
    ASSERT_EQ(run("cd " + dir.string() + " && " + nvcc + " -O2 -arch=" + arch + " -o main main.cu " + sources, &log), 0)
        << log;
    ASSERT_EQ(run(dir.string() + "/main", &log), 0) << log;
    std::printf("%s", log.c_str());
  }

  std::string nvcc, arch;
  DeviceLimits limits;
  Family family;
  fs::path dir;
};

TEST_F(ExportGpu, LaunchersMatchReferenceAndRefuseUnsupportedShapes) {
  std::string includes, sources, body;
  struct Export {
    std::string name, config, shape;
    std::vector<std::string> also;  // other shapes the launcher accepts
  };
  const std::vector<Export> exports = {
      {"k_f16", "BLOCK=128,LOAD=ldg,VEC=2", "R=64,C=1024,dtype=f16", {"R=3,C=1000,dtype=f16", "R=1,C=2,dtype=f16"}},
      {"k_bf16", "BLOCK=256,LOAD=plain,VEC=4", "R=32,C=4096,dtype=bf16", {"R=5,C=1028,dtype=bf16"}},
      {"k_f32", "BLOCK=64,LOAD=plain,VEC=1", "R=16,C=777,dtype=f32", {"R=65535,C=3,dtype=f32"}}};
  for (const auto& e : exports) {
    ExportInput in;
    in.family = &family;
    in.winners = {winner(e.config, e.shape)};
    in.out_dir = dir;
    in.name = e.name;
    in.base_arch = arch;
    export_kernels(in);
    includes += "#include \"" + e.name + ".h\"\n";
    sources += " " + e.name + ".cu";
    body += check_block(family, parse_shape(family, e.shape), e.name + " " + e.shape, e.name, limits);
    for (const auto& s : e.also)
      body += check_block(family, parse_shape(family, s), e.name + " " + s, e.name, limits);
  }
  // Refused: another dtype, a column count VEC does not divide, a grid too tall.
  body +=
      "  if (k_f16(nullptr, nullptr, nullptr, 64, 1024, \"f32\", 0) != cudaErrorInvalidValue) ++failures;\n"
      "  if (k_bf16(nullptr, nullptr, nullptr, 64, 1026, \"bf16\", 0) != cudaErrorInvalidValue) ++failures;\n"
      "  if (k_f32(nullptr, nullptr, nullptr, 65536, 8, \"f32\", 0) != cudaErrorInvalidValue) ++failures;\n"
      // A supported shape with a NULL or misaligned buffer: refused as a bad pointer, not launched.
      "  if (k_f32(nullptr, nullptr, nullptr, 16, 777, \"f32\", 0) != cudaErrorInvalidDevicePointer) ++failures;\n"
      "  {\n    float* x = fresh<float>(16 * 777 + 4, true);\n"
      "    if (k_f32(x + 1, x, x, 16, 777, \"f32\", 0) != cudaErrorInvalidDevicePointer) ++failures;\n"
      "    if (k_f32(x, x, x + 2, 16, 777, \"f32\", 0) != cudaErrorInvalidDevicePointer) ++failures;\n"
      "    CHECK(cudaFree(x));\n  }\n"
      "  CHECK(cudaGetLastError());  // a refusal leaves no error behind\n";
  build_and_run(body, includes, sources);
}

TEST_F(ExportGpu, DispatcherRunsTheNearestAcceptingKernel) {
  ExportInput in;
  in.family = &family;
  in.winners = {winner("BLOCK=128,LOAD=plain,VEC=2", "R=64,C=1024,dtype=f16"),
                winner("BLOCK=256,LOAD=ldg,VEC=4", "R=512,C=8192,dtype=f16"),
                winner("BLOCK=128,LOAD=plain,VEC=1", "R=64,C=1024,dtype=f32")};
  in.out_dir = dir;
  in.base_arch = arch;
  export_kernels(in);
  std::string body;
  for (const char* s : {"R=64,C=1024,dtype=f16", "R=300,C=8190,dtype=f16", "R=512,C=8192,dtype=f16",
                        "R=7,C=333,dtype=f32"})
    body += check_block(family, parse_shape(family, s), std::string("dispatch ") + s, "export_fixture_dispatch", limits);
  body += "  if (export_fixture_dispatch(nullptr, nullptr, nullptr, 64, 1025, \"f16\", 0) != cudaErrorInvalidValue) ++failures;\n";
  build_and_run(body, "#include \"export_fixture_dispatch.h\"\n",
                " export_fixture_dispatch.cu export_fixture_R64_C1024_f16.cu export_fixture_R512_C8192_f16.cu "
                "export_fixture_R64_C1024_f32.cu");
}

// A launcher with a tensor_map argument encodes the map from the caller's buffer and passes it
// by value: the kernel reads its input only through it (tma_fixture, sm_90 or newer).
TEST_F(ExportGpu, TensorMapLauncherMatchesReference) {
  if (limits.cc() < 90) GTEST_SKIP() << "TMA needs sm_90 or newer; device 0 is " << arch;
  family = load_family(fs::path(KFORGE_TEST_DIR) / "families" / "tma_fixture" / "tma_fixture.json");
  std::string includes, sources, body;
  for (const auto& [name, config, shape] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"tm_f16", "BOX_R=16,THREADS=128", "B=2,R=64,C=256,dtype=f16"},
           {"tm_f32", "BOX_R=32,THREADS=64", "B=3,R=100,C=200,dtype=f32"}}) {
    ExportInput in;
    in.family = &family;
    in.winners = {winner(config, shape)};
    in.out_dir = dir;
    in.name = name;
    in.base_arch = arch;
    export_kernels(in);
    includes += "#include \"" + name + ".h\"\n";
    sources += " " + name + ".cu";
    body += check_block(family, parse_shape(family, shape), name + " " + shape, name, limits);
  }
  // Other shapes the launchers accept: ragged boxes at every edge.
  body += check_block(family, parse_shape(family, "B=3,R=5,C=72,dtype=f16"), "tm_f16 ragged", "tm_f16", limits);
  body += check_block(family, parse_shape(family, "B=1,R=33,C=8,dtype=f32"), "tm_f32 ragged", "tm_f32", limits);
  // Refused: a column count whose rows are no multiple of 16 bytes; a misaligned buffer.
  body +=
      "  if (tm_f16(nullptr, nullptr, 2, 64, 36, \"f16\", 0) != cudaErrorInvalidValue) ++failures;\n"
      "  {\n    __half* x = fresh<__half>(4096, true);\n"
      "    if (tm_f16(x + 1, x, 1, 8, 64, \"f16\", 0) != cudaErrorInvalidDevicePointer) ++failures;\n"
      "    CHECK(cudaFree(x));\n  }\n"
      "  CHECK(cudaGetLastError());  // a refusal leaves no error behind\n";
  build_and_run(body, includes, sources, "B=1,R=1,C=8,dtype=f16");
}

}  // namespace
}  // namespace kf
