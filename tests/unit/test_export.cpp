// Export: expression translation (checked against the evaluator by compiling and running the
// translated code on the host), files and manifest, and the generated code compiled with nvcc
// (its host-only entry points run here, with no GPU).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "export/commands.hpp"
#include "export/cxx_expr.hpp"
#include "export/export.hpp"
#include "export/kernel_model.hpp"
#include "export/tensor_map_gen.hpp"
#include "family/tensor_map.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;
using exporter::CxxExpr;
using exporter::CxxType;

fs::path fixture_spec() { return fs::path(KFORGE_TEST_DIR) / "families" / "export_fixture" / "export_fixture.json"; }

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary);
  out << s;
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("kforge_test_export_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Runs a shell command, capturing its output into `log`; returns the exit status.
int run(const std::string& cmd, std::string* log = nullptr) {
  const std::string out = (fs::temp_directory_path() / ("kforge_test_export_cmd_" + std::to_string(::getpid()))).string();
  const int rc = std::system((cmd + " > " + out + " 2>&1").c_str());
  if (log) *log = read(out);
  fs::remove(out);
  return rc;
}

std::string find_nvcc() {
  if (std::system("nvcc --version > /dev/null 2>&1") == 0) return "nvcc";
  if (fs::exists("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return "";
}

#define REQUIRE_NVCC(var)                                                             \
  const std::string var = find_nvcc();                                                \
  if (var.empty()) GTEST_SKIP() << "nvcc not found on PATH or in /usr/local/cuda/bin"

// ---------------------------------------------------------------------------------------------
// Expression translation

TEST(ExportCxx, TranslationMatchesEvaluator) {
  if (std::system("c++ --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no host C++ compiler (c++) on PATH";
  const Scope scope = {{"A", int64_t{3}}, {"MODE", std::string("mma")}, {"M", int64_t{1000}},
                       {"N", int64_t{37}}, {"dtype", std::string("f16")}, {"device.cc", int64_t{90}}};
  const exporter::NameResolver names = [](const std::string& n) -> std::optional<CxxExpr> {
    if (n == "A") return CxxExpr{"3LL", CxxType::Int};
    if (n == "MODE") return CxxExpr{"std::string_view(\"mma\")", CxxType::Str};
    if (n == "M" || n == "N") return CxxExpr{"d_" + n, CxxType::Int};
    if (n == "dtype") return CxxExpr{"d_dtype", CxxType::Str};
    if (n == "device.cc") return CxxExpr{"dev_cc", CxxType::Int};
    return std::nullopt;
  };
  const std::vector<std::string> exprs = {
      "M / 7", "M % 7", "-M / 7", "(M - 2000) % 7", "ceil_div(M, 64)", "ceil_div(-M, 64)", "ceil_div(M, 2.5)",
      "min(M, N, 3)", "max(M, 2.5)", "max(A, N, M, 4)", "sqrt(N)", "rsqrt(4)", "log2(M)", "pow(2, 10)",
      "abs(-M)", "abs(-2.5)", "floor(2.7)", "ceil(N)", "ceil(-2.5)", "sizeof_dtype(dtype)",
      "sizeof_dtype('bf16')", "MODE == 'mma' ? 1 : 2", "MODE != 'mma' && M > 3", "!M || N", "M < N",
      "1.5 * M", "M / 0", "M % 0", "sqrt(-1)", "9223372036854775807 + M", "M * 9223372036854775807",
      "-9223372036854775807 - M", "1 ? 2 : 3", "dtype == 'f16'", "1.0 / sqrt(N)", "M >= 1000.0", "-(-M)",
      "+M", "ceil_div(M, 0)", "log2(0)", "1e3 + .5", "M - N * 2 + 1 == 927", "sizeof_dtype('x')",
      "device.cc >= 80 && A * 16 <= 64", "M / 2.0 / 0", "M % 3.5", "(A + 1) * (A - 1) / 2", "0 || 0.0",
      "N > 10 ? M / 8 : M / 16", "MODE == \"mma\""};
  std::ostringstream prog;
  prog << "#include <climits>\n#include <cmath>\n#include <cstdio>\n#include <string_view>\n"
       << exporter::cxx_expr_helpers() << "\nint main() {\n  const long long d_M = 1000, d_N = 37, dev_cc = 90;\n"
       << "  const std::string_view d_dtype(\"f16\");\n";
  for (const auto& e : exprs) {
    const CxxExpr c = exporter::translate_expr(e, names);
    prog << "  { bool kfx_bad = false; const auto v = " << c.code << "; if (kfx_bad) std::printf(\"bad\\n\"); else ";
    if (c.type == CxxType::Int) prog << "std::printf(\"%lld\\n\", static_cast<long long>(v)); }\n";
    if (c.type == CxxType::Real) prog << "std::printf(\"%.17g\\n\", static_cast<double>(v)); }\n";
    if (c.type == CxxType::Str) prog << "std::printf(\"%.*s\\n\", static_cast<int>(v.size()), v.data()); }\n";
  }
  prog << "  return 0;\n}\n";
  const fs::path dir = temp_dir("cxx");
  write(dir / "t.cpp", prog.str());
  std::string log;
  ASSERT_EQ(run("c++ -std=c++17 -Wall -Wextra -Werror -o " + (dir / "t").string() + " " + (dir / "t.cpp").string(), &log), 0)
      << log;
  ASSERT_EQ(run((dir / "t").string(), &log), 0) << log;
  std::istringstream lines(log);
  for (const auto& e : exprs) {
    std::string got;
    ASSERT_TRUE(std::getline(lines, got)) << e;
    Value want;
    try {
      want = Expr::parse(e).eval(scope);
    } catch (const ExprError&) {
      EXPECT_EQ(got, "bad") << e;
      continue;
    }
    if (is_string(want)) {
      EXPECT_EQ(got, std::get<std::string>(want)) << e;
    } else if (is_int(want) && got.find_first_of(".en") == std::string::npos) {
      EXPECT_EQ(got, std::to_string(std::get<int64_t>(want))) << e;
    } else {
      EXPECT_DOUBLE_EQ(std::stod(got), as_double(want)) << e;
    }
  }
  fs::remove_all(dir);
}

TEST(ExportCxx, TypeAndNameErrorsAtTranslation) {
  const exporter::NameResolver names = [](const std::string& n) -> std::optional<CxxExpr> {
    if (n == "M") return CxxExpr{"d_M", CxxType::Int};
    if (n == "S") return CxxExpr{"d_S", CxxType::Str};
    return std::nullopt;
  };
  for (const char* bad : {"'a' + 1", "S < 'b'", "S ? 1 : 2", "M ? 'a' : 1", "sizeof_dtype(3)", "min(1)", "nope + 1",
                          "sqrt(S)", "M +", "(M", "foo(1)", "!S", "1 == S"}) {
    EXPECT_THROW(exporter::translate_expr(bad, names), ExprError) << bad;
  }
  try {
    exporter::translate_expr("M + nope", names);
    FAIL();
  } catch (const ExprError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown name 'nope'"), std::string::npos) << e.what();
  }
}

TEST(ExportCxx, Literals) {
  EXPECT_EQ(exporter::cxx_int_literal(42), "42LL");
  EXPECT_EQ(exporter::cxx_int_literal(INT64_MIN), "(-9223372036854775807LL - 1)");
  EXPECT_EQ(exporter::cxx_real_literal(2.0), "2.0");
  EXPECT_EQ(exporter::cxx_real_literal(0.5), "0.5");
  EXPECT_EQ(exporter::cxx_string_literal("a\"b"), "std::string_view(\"a\\\"b\")");
}

// ---------------------------------------------------------------------------------------------
// Names and small pieces

TEST(ExportNames, RenameIsTokenLevel) {
  EXPECT_EQ(exporter::rename_identifier("void k(); k_v2(); my_k(); k(1); k", "k", "x"), "void x(); k_v2(); my_k(); x(1); x");
  EXPECT_TRUE(exporter::is_c_identifier("gemm_M4096"));
  EXPECT_FALSE(exporter::is_c_identifier("4gemm"));
  EXPECT_FALSE(exporter::is_c_identifier("a-b"));
  EXPECT_EQ(exporter::c_identifier("sdpa-fwd"), "sdpa_fwd");
}

TEST(ExportNames, NvccFlagsKeepSharedOptions) {
  const auto f = exporter::nvcc_flags({"--std=c++17", "-I/x", "-I", "/y", "-DFOO=1", "--use_fast_math", "-default-device",
                                       "--maxrregcount=128"});
  EXPECT_EQ(f, (std::vector<std::string>{"--std=c++17", "-DFOO=1", "--use_fast_math", "--maxrregcount=128"}));
}

// An arch-specific target (sm_90a, for wgmma) must not also get compute_90 PTX, which cannot hold
// its instructions: plain -arch=sm_90a would embed it and fail in ptxas.
TEST(ExportNames, ArchSpecificTargetsGetAGencodeFlag) {
  EXPECT_EQ(exporter::nvcc_arch_flag("sm_90"), "-arch=sm_90");
  EXPECT_EQ(exporter::nvcc_arch_flag("sm_89"), "-arch=sm_89");
  EXPECT_EQ(exporter::nvcc_arch_flag("sm_90a"), "-gencode arch=compute_90a,code=sm_90a");
  EXPECT_EQ(exporter::object_command("k", "sm_90a", {"--std=c++17"}),
            "nvcc -O3 -gencode arch=compute_90a,code=sm_90a --std=c++17 -c k.cu");
}

// ---------------------------------------------------------------------------------------------
// Export of the fixture family

EvaluationRecord winner(const Family& f, const std::string& config, const std::string& shape, double median_us) {
  EvaluationRecord r;
  r.id = 7;
  r.campaign_id = 3;
  r.family = f.name;
  r.config = parse_assignment(config);
  r.shape = parse_shape(f, shape);
  r.device = {"NVIDIA H100 80GB HBM3", 90, 132, "580.65"};
  r.status = Status::Ok;
  r.max_abs = 0.001;
  r.rel_l2 = 0.0002;
  TimingStats t;
  t.median_us = median_us;
  t.p10_us = median_us * 0.98;
  t.p90_us = median_us * 1.03;
  t.reps = 20;
  r.timing = t;
  KernelRecord k;
  k.variant_hash = "abc";
  k.arch = "sm_90";
  k.ok = true;
  k.registers = 24;
  r.kernel = k;
  return r;
}

class ExportFixture : public ::testing::Test {
 protected:
  void SetUp() override { family = load_family(fixture_spec()); }
  Family family;
};

TEST_F(ExportFixture, SingleWinnerFilesAndManifest) {
  ExportInput in;
  in.family = &family;
  in.winners = {winner(family, "BLOCK=128,LOAD=plain,VEC=2", "R=64,C=1024,dtype=f16", 4.0)};
  in.out_dir = temp_dir("single");
  in.base_arch = "sm_90";
  in.db_path = "results.db";
  const ExportOutput out = export_kernels(in);
  const std::string name = "export_fixture_R64_C1024_f16";
  for (const char* suffix : {".cu", ".h", ".cubin"})
    EXPECT_TRUE(fs::exists(in.out_dir / (name + suffix))) << suffix;
  // The runner (a main()) in its own folder, so a project can glob the top-level .cu files.
  EXPECT_TRUE(fs::exists(in.out_dir / "runners" / (name + "_runner.cu")));
  EXPECT_FALSE(fs::exists(in.out_dir / (name + "_runner.cu")));
  EXPECT_TRUE(fs::exists(in.out_dir / "CMakeLists.txt"));
  ASSERT_FALSE(out.files.empty());
  EXPECT_EQ(out.files.back().filename(), "manifest.json");
  EXPECT_EQ(nlohmann::json::parse(read(in.out_dir / "manifest.json")), out.manifest);

  const auto& m = out.manifest;
  EXPECT_EQ(m["format"], "kforge-export/2");
  EXPECT_EQ(m["cmake"]["target"], "kforge::export_fixture");
  EXPECT_EQ(m["runner"], "runners/" + name + "_runner.cu");
  EXPECT_EQ(m["workspace_signature"], "size_t " + name + "_workspace_size(long long R, long long C, const char* dtype)");
  EXPECT_EQ(m["family"], "export_fixture");
  EXPECT_EQ(m["name"], name);
  EXPECT_EQ(m["entry"], name + "_kernel");
  EXPECT_EQ(m["cubin"], name + ".cubin");
  EXPECT_EQ(m["arch"], "sm_90");
  EXPECT_EQ(m["config"]["BLOCK"], 128);
  EXPECT_EQ(m["config"]["LOAD"], "plain");
  EXPECT_EQ(m["shape"]["C"], 1024);
  EXPECT_EQ(m["device"]["sm_count"], 132);
  EXPECT_EQ(m["launch"]["grid"], (std::vector<unsigned>{4, 64, 1}));
  EXPECT_EQ(m["launch"]["block"], (std::vector<unsigned>{128, 1, 1}));
  EXPECT_EQ(m["launch"]["smem"], 1024);
  ASSERT_EQ(m["args"].size(), 6u);
  EXPECT_EQ(m["args"][0]["kind"], "buffer");
  EXPECT_EQ(m["args"][0]["name"], "X");
  EXPECT_EQ(m["args"][0]["dtype"], "f16");
  EXPECT_EQ(m["args"][0]["count"], 65536);
  EXPECT_EQ(m["args"][1]["dtype"], "f32");
  EXPECT_EQ(m["args"][3]["kind"], "i32");
  EXPECT_EQ(m["args"][3]["value"], 64);
  EXPECT_EQ(m["args"][5]["kind"], "f32");
  EXPECT_DOUBLE_EQ(m["args"][5]["value"].get<double>(), 0.03125);
  EXPECT_EQ(m["signature"], "cudaError_t " + name +
                                "(const __half* X, const float* bias, __half* Y, long long R, long long C, "
                                "const char* dtype, cudaStream_t stream)");
  EXPECT_DOUBLE_EQ(m["timing"]["median_us"].get<double>(), 4.0);
  EXPECT_NEAR(m["timing"]["tflops"].get<double>(), 2.0 * 64 * 1024 / 4.0e-6 / 1e12, 1e-9);
  EXPECT_EQ(m["kernel"]["registers"], 24);
  EXPECT_NE(m["supports"]["text"].get<std::string>().find("dtype = f16 (baked in)"), std::string::npos);
  EXPECT_EQ(m["supports"]["constraints"].size(), 4u);
  EXPECT_EQ(m["commands"]["build"], "nvcc -O3 -arch=sm_90 --std=c++17 -I. -o " + name + "_runner " + name +
                                        ".cu runners/" + name + "_runner.cu");
  EXPECT_EQ(m["commands"]["ncu"], "ncu --set full -k " + name + "_kernel -c 1 ./" + name + "_runner");
  EXPECT_EQ(m["provenance"]["kforge_version"], KFORGE_VERSION);
  EXPECT_EQ(m["provenance"]["database"], "results.db");
  EXPECT_EQ(m["provenance"]["created_utc"].get<std::string>().size(), 20u);
  EXPECT_TRUE(m["dispatcher"].is_null());
  ASSERT_EQ(m["kernels"].size(), 1u);

  const std::string cu = read(in.out_dir / (name + ".cu"));
  EXPECT_NE(cu.find(name + "_kernel(const elem_t*"), std::string::npos);
  EXPECT_EQ(cu.find("scale_bias("), std::string::npos) << "the entry must be renamed";
  EXPECT_NE(cu.find("#define KF_BLOCK 128"), std::string::npos);
  EXPECT_NE(cu.find("C % VEC == 0"), std::string::npos) << "constraints are quoted next to their code";
  const std::string cubin = read(in.out_dir / (name + ".cubin"));
  EXPECT_EQ(cubin.substr(0, 4), "\x7f" "ELF");
  EXPECT_NE(cubin.find(name + "_kernel"), std::string::npos);
  const std::string h = read(in.out_dir / (name + ".h"));
  // 16-bit types: the CUDA ones in C++, their bit patterns in C (the header compiles as both).
  EXPECT_NE(h.find("#include <cuda_fp16.h>"), std::string::npos);
  EXPECT_NE(h.find("typedef __half kforge_f16;"), std::string::npos);
  EXPECT_NE(h.find("typedef uint16_t kforge_f16;"), std::string::npos);
  EXPECT_NE(h.find("const kforge_f16* X"), std::string::npos) << h;
  fs::remove_all(in.out_dir);
}

TEST_F(ExportFixture, DefaultArchAndNameComeFromTheWinner) {
  ExportInput in;
  in.family = &family;
  in.winners = {winner(family, "BLOCK=64,LOAD=ldg,VEC=4", "R=8,C=256,dtype=f32", 2.0)};
  in.winners[0].device.cc = 89;
  in.out_dir = temp_dir("defaults");
  in.name = "my_scale";
  const ExportOutput out = export_kernels(in);
  EXPECT_EQ(out.manifest["arch"], "sm_89");
  EXPECT_EQ(out.manifest["name"], "my_scale");
  EXPECT_TRUE(fs::exists(in.out_dir / "my_scale.cu"));
  EXPECT_EQ(default_export_name(family, parse_shape(family, "R=8,C=256,dtype=f32")), "export_fixture_R8_C256_f32");
  fs::remove_all(in.out_dir);
}

TEST_F(ExportFixture, RejectsBadInput) {
  const auto expect_error = [&](ExportInput in, const std::string& words) {
    in.family = &family;
    if (in.out_dir.empty()) in.out_dir = temp_dir("bad");
    try {
      export_kernels(in);
      ADD_FAILURE() << "no error; expected one mentioning '" << words << "'";
    } catch (const std::runtime_error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(words), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
    }
    fs::remove_all(in.out_dir);
  };
  const EvaluationRecord good = winner(family, "BLOCK=128,LOAD=plain,VEC=2", "R=64,C=1024,dtype=f16", 4.0);
  expect_error({}, "no winning evaluation");
  ExportInput other;
  other.winners = {good};
  other.winners[0].family = "gemm";
  expect_error(other, "family 'gemm'");
  ExportInput failed;
  failed.winners = {good};
  failed.winners[0].status = Status::WrongResult;
  expect_error(failed, "wrong_result");
  ExportInput twice;
  twice.winners = {good, good};
  expect_error(twice, "two winners");
  ExportInput badname;
  badname.winners = {good};
  badname.name = "1st";
  expect_error(badname, "not a C identifier");
  ExportInput violating;
  violating.winners = {good};
  violating.winners[0].shape = parse_shape(family, "R=64,C=1023,dtype=f16");
  expect_error(violating, "C % VEC == 0");
  ExportInput noarch;
  noarch.winners = {good};
  noarch.winners[0].device.cc = 0;
  expect_error(noarch, "architecture");
}

TEST_F(ExportFixture, GeneratedCodeCompilesAndSupportsMatchesKforge) {
  REQUIRE_NVCC(nvcc);
  ExportInput in;
  in.family = &family;
  in.winners = {winner(family, "BLOCK=128,LOAD=plain,VEC=2", "R=64,C=1024,dtype=f16", 4.0)};
  in.out_dir = temp_dir("compile");
  in.base_arch = "sm_90";
  in.name = "sb";
  export_kernels(in);
  const std::string dir = in.out_dir.string();
  std::string log;
  for (const char* arch : {"sm_90", "sm_89"}) {
    EXPECT_EQ(run("cd " + dir + " && " + nvcc + " -arch=" + arch + " -Xcompiler -Wall,-Wextra -c sb.cu -o sb_" + arch +
                      ".o",
                  &log),
              0)
        << log;
    EXPECT_EQ(log.find("warning"), std::string::npos) << log;
  }
  EXPECT_EQ(run("cd " + dir + " && " + nvcc + " -arch=sm_90 -I. -c runners/sb_runner.cu", &log), 0) << log;

  // _supports, run on the host, must agree with kforge's own checks for every shape here.
  struct Case {
    std::string shape;
    std::string dev;  // "" for the export target (NULL)
  };
  const std::vector<Case> cases = {
      {"R=64,C=1024,dtype=f16", ""},  {"R=64,C=2048,dtype=f16", ""},  {"R=1,C=2,dtype=f16", ""},
      {"R=64,C=1024,dtype=f32", ""},  {"R=64,C=1024,dtype=bf16", ""}, {"R=64,C=1023,dtype=f16", ""},
      {"R=65535,C=16,dtype=f16", ""}, {"R=65536,C=16,dtype=f16", ""}, {"R=30000,C=65536,dtype=f16", ""},
      {"R=16384,C=65536,dtype=f16", ""}, {"R=64,C=1024,dtype=f16", "small_smem"},
      {"R=64,C=1024,dtype=f16", "few_threads"}};
  std::ostringstream prog;
  prog << "#include <cstdio>\n#include \"sb.h\"\n"
       << "int main() {\n  kforge_device_info small_smem = {90, 132, 512, 512, 0, 1024, 65536, 65536, 0};\n"
       << "  kforge_device_info few_threads = {90, 132, 232448, 49152, 0, 64, 65536, 65536, 0};\n"
       << "  (void)small_smem; (void)few_threads;\n";
  for (const auto& c : cases) {
    const Shape s = parse_shape(family, c.shape);
    prog << "  std::printf(\"%d\\n\", sb_supports(" << as_int(s.at("R")) << ", " << as_int(s.at("C")) << ", \""
         << to_string(s.at("dtype")) << "\", " << (c.dev.empty() ? "NULL" : "&" + c.dev) << "));\n";
  }
  // Outside the dims' declared ranges and a bad enum: rejected before anything else.
  prog << "  std::printf(\"%d %d %d %d\\n\", sb_supports(0, 1024, \"f16\", NULL), sb_supports(64, 2000000, \"f16\", NULL),"
       << " sb_supports(64, 1024, \"f64\", NULL), sb_supports(64, 1024, NULL, NULL));\n  return 0;\n}\n";
  write(in.out_dir / "supports_main.cpp", prog.str());
  ASSERT_EQ(run("cd " + dir + " && " + nvcc + " -o supports_main supports_main.cpp sb_sm_90.o", &log), 0) << log;
  ASSERT_EQ(run(dir + "/supports_main", &log), 0) << log;

  const Config config = parse_assignment("BLOCK=128,LOAD=plain,VEC=2");
  std::istringstream lines(log);
  for (const auto& c : cases) {
    DeviceLimits d = DeviceLimits::for_arch("sm_90");
    d.sm_count = 132;
    if (c.dev == "small_smem") d.smem_optin = d.smem_per_block = 512;
    if (c.dev == "few_threads") d.max_threads = 64;
    const Shape s = parse_shape(family, c.shape);
    bool want = s.at("dtype") == Value(std::string("f16")) && !violated_constraint(family, config, s, d);
    if (want) {
      const ResolvedLaunch l = resolve_launch(family.kernel.launch, make_scope(family, config, s, d));
      want = l.grid[1] <= 65535 && l.block[0] <= static_cast<unsigned>(d.max_threads);
    }
    std::string got;
    ASSERT_TRUE(std::getline(lines, got));
    EXPECT_EQ(got, want ? "1" : "0") << c.shape << " " << c.dev;
  }
  std::string last;
  std::getline(lines, last);
  EXPECT_EQ(last, "0 0 0 0");
  fs::remove_all(in.out_dir);
}

TEST_F(ExportFixture, SeveralWinnersGetADispatcher) {
  REQUIRE_NVCC(nvcc);
  ExportInput in;
  in.family = &family;
  in.winners = {winner(family, "BLOCK=128,LOAD=plain,VEC=2", "R=64,C=1024,dtype=f16", 4.0),
                winner(family, "BLOCK=256,LOAD=ldg,VEC=4", "R=4096,C=4096,dtype=f16", 90.0),
                winner(family, "BLOCK=64,LOAD=plain,VEC=1", "R=64,C=1024,dtype=f32", 5.0)};
  in.out_dir = temp_dir("dispatch");
  in.base_arch = "sm_90";
  const ExportOutput out = export_kernels(in);
  const auto& m = out.manifest;
  ASSERT_EQ(m["kernels"].size(), 3u);
  EXPECT_EQ(m["kernels"][1]["name"], "export_fixture_R4096_C4096_f16");
  EXPECT_FALSE(m.contains("entry")) << "per-kernel fields stay in kernels[] when there are several";
  ASSERT_TRUE(m["dispatcher"].is_object());
  EXPECT_EQ(m["dispatcher"]["name"], "export_fixture_dispatch");
  // X and Y differ in element type between the kernels: the dispatcher takes void pointers.
  EXPECT_EQ(m["dispatcher"]["signature"],
            "cudaError_t export_fixture_dispatch(const void* X, const float* bias, void* Y, long long R, long long C, "
            "const char* dtype, cudaStream_t stream)");
  EXPECT_TRUE(fs::exists(in.out_dir / "export_fixture_dispatch.h"));

  const std::string dir = in.out_dir.string();
  std::string log;
  ASSERT_EQ(run("cd " + dir + " && " + nvcc +
                    " -arch=sm_90 -Xcompiler -Wall,-Wextra -c export_fixture_dispatch.cu export_fixture_R64_C1024_f16.cu "
                    "export_fixture_R4096_C4096_f16.cu export_fixture_R64_C1024_f32.cu",
                &log),
            0)
      << log;
  EXPECT_EQ(log.find("warning"), std::string::npos) << log;
  write(in.out_dir / "select_main.cpp",
        "#include <cstdio>\n#include \"export_fixture_dispatch.h\"\n"
        "#define S(r, c, t) export_fixture_dispatch_select(r, c, t, NULL)\n"
        "int main() {\n"
        "  std::printf(\"%d %d %d %d %d %d %d %d %d\\n\", S(64, 1024, \"f16\"), S(4096, 4096, \"f16\"),\n"
        "              S(2000, 4096, \"f16\"), S(64, 1026, \"f16\"), S(4096, 4098, \"f16\"), S(64, 1025, \"f16\"),\n"
        "              S(64, 1024, \"f32\"), S(64, 1024, \"bf16\"), S(64, 1024, NULL));\n"
        "  return 0;\n}\n");
  ASSERT_EQ(run("cd " + dir + " && " + nvcc +
                    " -o select_main select_main.cpp export_fixture_dispatch.o export_fixture_R64_C1024_f16.o "
                    "export_fixture_R4096_C4096_f16.o export_fixture_R64_C1024_f32.o",
                &log),
            0)
      << log;
  ASSERT_EQ(run(dir + "/select_main", &log), 0) << log;
  // exact, exact, nearest (1), nearest refuses C % 4 so the other f16 one, both refuse C odd,
  // the f32 kernel, no bf16 kernel, null enum.
  EXPECT_EQ(log, "0 1 1 0 0 -1 2 -1 -1\n");
  fs::remove_all(in.out_dir);
}

// ---------------------------------------------------------------------------------------------
// tensor_map arguments

// The launcher's plan-time rules (generated C++) against kforge's (tensor_map_geometry), on a
// seeded table of geometries around every limit: the same verdicts and the same strides.
TEST(ExportTensorMap, LauncherRulesMatchKforge) {
  REQUIRE_NVCC(nvcc);
  struct Case {
    DType dtype;
    int64_t elems;
    std::vector<int64_t> dims, box;
    int swizzle;
  };
  std::mt19937_64 rng(11);
  const auto pick = [&](const std::vector<int64_t>& v) { return v[rng() % v.size()]; };
  const std::vector<int64_t> dim_values = {1, 3, 8, 36, 64, 100, 512, 65536, 1 << 20, int64_t{1} << 32,
                                           (int64_t{1} << 32) + 1, 0, -1};
  const std::vector<int64_t> box_values = {0, 1, 4, 8, 16, 32, 64, 128, 256, 257};
  const DType dtypes[] = {DType::F16, DType::BF16, DType::F32, DType::I32};
  const int swizzles[] = {0, 32, 64, 128};
  std::vector<Case> cases;
  for (int n = 0; n < 600; ++n) {
    Case c;
    c.dtype = dtypes[rng() % 4];
    c.swizzle = swizzles[rng() % 4];
    const size_t rank = 1 + rng() % 5;
    // Mostly plausible values, so that the later rules are reached too.
    for (size_t i = 0; i < rank; ++i) {
      c.dims.push_back(rng() % 3 ? pick({8, 64, 100, 512, 4096}) : pick(dim_values));
      c.box.push_back(rng() % 3 ? pick({1, 8, 16, 32, 64}) : pick(box_values));
    }
    // The buffer: exactly the view, one element short, much larger, or tiny.
    const int64_t cap = int64_t{1} << 62;
    int64_t exact = 1;
    for (int64_t d : c.dims)
      if (d > 0) exact = exact > cap / d ? cap : exact * d;
    const int64_t choices[] = {exact, exact - 1, cap, 1};
    c.elems = choices[rng() % 4];
    cases.push_back(c);
  }
  std::ostringstream prog;
  prog << "#include <cstdint>\n#include <cstdio>\n#include <cuda_runtime.h>\n"
       << exporter::tensor_map_includes() << exporter::tensor_map_helpers() << "\nint main() {\n";
  for (const Case& c : cases) {
    const auto list = [](const std::vector<int64_t>& v) {
      std::string out;
      for (int64_t x : v) out += (out.empty() ? "" : ", ") + exporter::cxx_int_literal(x);
      return out;
    };
    prog << "  {\n    const long long dims[] = {" << list(c.dims) << "}, box[] = {" << list(c.box) << "};\n"
         << "    kfx_tensor_map_t t;\n    if (kfx_tensor_map_plan(" << c.dims.size() << ", dims, box, "
         << dtype_size(c.dtype) << ", " << c.swizzle << ", " << exporter::cxx_int_literal(c.elems) << ", t))\n"
         << "      std::printf(\"ok %llu %llu %llu %llu\\n\", (unsigned long long)t.strides[0], "
            "(unsigned long long)t.strides[1], (unsigned long long)t.strides[2], (unsigned long long)t.strides[3]);\n"
         << "    else\n      std::printf(\"refused\\n\");\n  }\n";
  }
  prog << "  return 0;\n}\n";
  const fs::path dir = temp_dir("tmap_rules");
  write(dir / "t.cu", prog.str());
  std::string log;
  ASSERT_EQ(run("cd " + dir.string() + " && " + nvcc + " -Xcompiler -Wall,-Wextra -o t t.cu", &log), 0) << log;
  EXPECT_EQ(log.find("warning"), std::string::npos) << log;
  ASSERT_EQ(run((dir / "t").string(), &log), 0) << log;
  std::istringstream lines(log);
  int accepted = 0;
  for (const Case& c : cases) {
    std::string got;
    ASSERT_TRUE(std::getline(lines, got));
    std::string want;
    try {
      const TensorMapGeometry g = tensor_map_geometry("t", c.dtype, static_cast<uint64_t>(c.elems), c.dims, c.box,
                                                      c.swizzle);
      want = "ok " + std::to_string(g.strides[0]) + " " + std::to_string(g.strides[1]) + " " +
             std::to_string(g.strides[2]) + " " + std::to_string(g.strides[3]);
      ++accepted;
    } catch (const ExprError&) {
      want = "refused";
    }
    std::string dims;
    for (int64_t d : c.dims) dims += std::to_string(d) + " ";
    EXPECT_EQ(got, want) << "dims " << dims << "elems " << c.elems << " swizzle " << c.swizzle;
  }
  EXPECT_GT(accepted, 50) << "the table should reach the accepting path often";
  EXPECT_LT(accepted, 550) << "and the refusing one";
  fs::remove_all(dir);
}

fs::path tma_spec() { return fs::path(KFORGE_TEST_DIR) / "families" / "tma_fixture" / "tma_fixture.json"; }

class ExportTensorMapFixture : public ::testing::Test {
 protected:
  void SetUp() override { family = load_family(tma_spec()); }
  Family family;
};

TEST_F(ExportTensorMapFixture, ManifestHeaderAndSource) {
  ExportInput in;
  in.family = &family;
  in.winners = {winner(family, "BOX_R=16,THREADS=128", "B=2,R=64,C=256,dtype=f16", 3.0)};
  in.out_dir = temp_dir("tmap_manifest");
  in.base_arch = "sm_90";
  in.name = "tm";
  const ExportOutput out = export_kernels(in);
  const auto& m = out.manifest;
  ASSERT_EQ(m["args"].size(), 6u);
  EXPECT_EQ(m["args"][0], nlohmann::json::parse(R"({"kind": "tensor_map", "name": "X", "dtype": "f16",
      "dims": [256, 64, 2], "box": [64, 16, 1], "swizzle": 128, "strides": [512, 32768],
      "dims_expr": ["C", "R", "B"], "box_expr": ["box_c", "BOX_R", "1"]})"));
  EXPECT_EQ(m["args"][1]["kind"], "buffer");
  // The launcher takes the buffer itself; the map is its business.
  EXPECT_EQ(m["signature"], "cudaError_t tm(const __half* X, __half* Y, long long B, long long R, long long C, "
                            "const char* dtype, cudaStream_t stream)");
  EXPECT_NE(m["supports"]["text"].get<std::string>().find("tensor maps within"), std::string::npos);
  EXPECT_EQ(m["commands"]["build"].get<std::string>().find("-lcuda"), std::string::npos);

  const std::string h = read(in.out_dir / "tm.h");
  EXPECT_NE(h.find(" *   X: dims {C, R, B}, box {box_c, BOX_R, 1}, swizzle 128\n"), std::string::npos) << h;
  EXPECT_NE(h.find("or for a buffer a tensor map cannot address"), std::string::npos) << h;
  const std::string cu = read(in.out_dir / "tm.cu");
  EXPECT_NE(cu.find("#include <cudaTypedefs.h>"), std::string::npos);
  EXPECT_NE(cu.find("cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\""), std::string::npos);
  EXPECT_NE(cu.find("  // Argument 0: X (f16), dims {C, R, B}, box {box_c, BOX_R, 1}, swizzle 128.\n"), std::string::npos)
      << cu;
  EXPECT_NE(cu.find("kfx_encode_tensor_map(m0, kf_X, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, CU_TENSOR_MAP_SWIZZLE_128B, p.t0)"),
            std::string::npos)
      << cu;
  EXPECT_NE(cu.find("(kfx_map_arg{m0}, kf_Y, p.a2, p.a3, p.a4, p.a5)"), std::string::npos) << cu;
  // Families without tensor maps keep their launchers as they were.
  const Family plain = load_family(fixture_spec());
  ExportInput pin;
  pin.family = &plain;
  pin.winners = {winner(plain, "BLOCK=128,LOAD=plain,VEC=2", "R=64,C=1024,dtype=f16", 4.0)};
  pin.out_dir = in.out_dir / "plain";
  pin.base_arch = "sm_90";
  pin.name = "sb";
  export_kernels(pin);
  EXPECT_EQ(read(pin.out_dir / "sb.cu").find("CUtensorMap"), std::string::npos);
  fs::remove_all(in.out_dir);
}

TEST_F(ExportTensorMapFixture, AMapKforgeCannotEncodeFailsTheExport) {
  ExportInput in;
  in.family = &family;
  // The constraints hold, but dims[2]'s stride, 2^20 * 2^20 halves, reaches 2^40 bytes.
  in.winners = {winner(family, "BOX_R=32,THREADS=128", "B=2,R=1048576,C=1048576,dtype=f16", 3.0)};
  in.out_dir = temp_dir("tmap_bad");
  in.base_arch = "sm_90";
  try {
    export_kernels(in);
    ADD_FAILURE() << "exported";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "export: tensor_map argument 0 (buffer X): the stride of dims[2] reaches 2^40 bytes");
  }
  fs::remove_all(in.out_dir);
}

// The generated launcher and runner build with the manifest's nvcc command, and _supports (the
// plan, with the tensor map rules) agrees with kforge on shapes each rule decides.
TEST_F(ExportTensorMapFixture, GeneratedCodeCompilesAndSupportsMatchesKforge) {
  REQUIRE_NVCC(nvcc);
  ExportInput in;
  in.family = &family;
  in.winners = {winner(family, "BOX_R=16,THREADS=128", "B=2,R=64,C=256,dtype=f16", 3.0)};
  in.out_dir = temp_dir("tmap_compile");
  in.base_arch = "sm_90";
  in.name = "tm";
  const ExportOutput out = export_kernels(in);
  const std::string dir = in.out_dir.string();
  std::string log;
  EXPECT_EQ(run("cd " + dir + " && " + out.manifest["commands"]["object"].get<std::string>() +
                    " -Xcompiler -Wall,-Wextra -o tm_sm_90.o",
                &log),
            0)
      << log;
  EXPECT_EQ(log.find("warning"), std::string::npos) << log;
  EXPECT_EQ(run("cd " + dir + " && " + out.manifest["commands"]["build"].get<std::string>(), &log), 0) << log;

  const std::vector<std::string> shapes = {
      "B=2,R=64,C=256,dtype=f16", "B=3,R=5,C=72,dtype=f16", "B=1,R=1,C=8,dtype=f16",
      "B=2,R=64,C=36,dtype=f16",   // C * 2 bytes is no multiple of 16: a constraint
      "B=2,R=64,C=256,dtype=f32",  // specialized for f16
      "B=2,R=1048560,C=1048576,dtype=f16", "B=1,R=1048560,C=1048568,dtype=f16",  // dims[2]'s stride >= 2^40
      "B=2,R=1048560,C=524288,dtype=f16",  // that stride just below 2^40
      "B=65535,R=16,C=64,dtype=f16",
      "B=1,R=1048576,C=8,dtype=f16"};  // 65536 row blocks: too tall a grid
  std::ostringstream prog;
  prog << "#include <cstdio>\n#include \"tm.h\"\nint main() {\n";
  for (const auto& text : shapes) {
    const Shape s = parse_shape(family, text);
    prog << "  std::printf(\"%d\\n\", tm_supports(" << as_int(s.at("B")) << ", " << as_int(s.at("R")) << ", "
         << as_int(s.at("C")) << ", \"" << to_string(s.at("dtype")) << "\", NULL));\n";
  }
  prog << "  return 0;\n}\n";
  write(in.out_dir / "supports_main.cpp", prog.str());
  ASSERT_EQ(run("cd " + dir + " && " + nvcc + " -o supports_main supports_main.cpp tm_sm_90.o", &log), 0) << log;
  ASSERT_EQ(run(dir + "/supports_main", &log), 0) << log;

  const Config config = parse_assignment("BOX_R=16,THREADS=128");
  DeviceLimits d = DeviceLimits::for_arch("sm_90");
  d.sm_count = 132;
  std::istringstream lines(log);
  int refused_by_map = 0;
  for (const auto& text : shapes) {
    const Shape s = parse_shape(family, text);
    bool want = s.at("dtype") == Value(std::string("f16")) && !violated_constraint(family, config, s, d);
    if (want) {
      const Scope scope = make_scope(family, config, s, d);
      const ResolvedLaunch l = resolve_launch(family.kernel.launch, scope);
      want = l.grid[1] <= 65535 && l.grid[2] <= 65535;
      const ArgSpec& a = family.kernel.args[0];
      std::vector<int64_t> dims, box;
      for (const Expr& e : a.dims) dims.push_back(e.eval_int(scope));
      for (const Expr& e : a.box) box.push_back(e.eval_int(scope));
      try {
        tensor_map_geometry("X", DType::F16, static_cast<uint64_t>(family.buffer("X")->count.eval_int(scope)), dims,
                            box, a.swizzle);
      } catch (const ExprError&) {
        refused_by_map += want;
        want = false;
      }
    }
    std::string got;
    ASSERT_TRUE(std::getline(lines, got));
    EXPECT_EQ(got, want ? "1" : "0") << text;
  }
  EXPECT_EQ(refused_by_map, 2) << "two shapes pass every other check and fail only the map's stride limit";
  fs::remove_all(in.out_dir);
}

// Two tensor-map kernels and their dispatcher link into one program (the helpers are file-local).
TEST_F(ExportTensorMapFixture, DispatcherOverTensorMapKernelsLinks) {
  REQUIRE_NVCC(nvcc);
  ExportInput in;
  in.family = &family;
  in.winners = {winner(family, "BOX_R=16,THREADS=128", "B=2,R=64,C=256,dtype=f16", 3.0),
                winner(family, "BOX_R=8,THREADS=64", "B=2,R=64,C=256,dtype=f32", 3.0)};
  in.out_dir = temp_dir("tmap_dispatch");
  in.base_arch = "sm_90";
  export_kernels(in);
  const std::string dir = in.out_dir.string();
  write(in.out_dir / "select_main.cpp",
        "#include <cstdio>\n#include \"tma_fixture_dispatch.h\"\n"
        "int main() {\n"
        "  std::printf(\"%d %d %d\\n\", tma_fixture_dispatch_select(2, 64, 256, \"f16\", NULL),\n"
        "              tma_fixture_dispatch_select(2, 64, 256, \"f32\", NULL),\n"
        "              tma_fixture_dispatch_select(2, 64, 36, \"f16\", NULL));\n"
        "  return 0;\n}\n");
  std::string log;
  ASSERT_EQ(run("cd " + dir + " && " + nvcc +
                    " -arch=sm_90 -Xcompiler -Wall,-Wextra -o select_main select_main.cpp tma_fixture_dispatch.cu "
                    "tma_fixture_B2_R64_C256_f16.cu tma_fixture_B2_R64_C256_f32.cu",
                &log),
            0)
      << log;
  EXPECT_EQ(log.find("warning"), std::string::npos) << log;
  ASSERT_EQ(run(dir + "/select_main", &log), 0) << log;
  EXPECT_EQ(log, "0 1 -1\n");
  fs::remove_all(in.out_dir);
}

// The real gemm family exercises derived values, string params, device limits and tensor maps in the
// translation; its exports must compile: the first pre-Hopper default (mma.sync) for sm_90, and the first
// default, the Hopper path, for sm_90a (persistent: one CTA per SM of the device it was measured on).
TEST(ExportGemm, DefaultConfigCompiles) {
  REQUIRE_NVCC(nvcc);
  const Family gemm = load_family(fs::path(KFORGE_SOURCE_DIR) / "search_spaces" / "gemm.json");
  Config mma;
  for (const auto& c : gemm.defaults)
    if (std::get<std::string>(c.at("MMA")) == "mma") {
      mma = c;
      break;
    }
  ASSERT_FALSE(mma.empty());
  ASSERT_EQ(std::get<std::string>(gemm.defaults.at(0).at("MMA")), "wgmma");
  ASSERT_EQ(std::get<int64_t>(gemm.defaults.at(0).at("PERSIST")), 1);
  const struct {
    Config config;
    const char* arch;
    std::vector<unsigned> grid;
  } cases[] = {{mma, "sm_90", {32, 32, 1}}, {gemm.defaults.at(0), "sm_90a", {132, 1, 1}}};
  for (const auto& k : cases) {
    EvaluationRecord w;
    w.family = "gemm";
    w.config = k.config;
    w.shape = parse_shape(gemm, "M=4096,N=4096,K=4096,dtype=f16");
    w.device = {"NVIDIA H100", 90, 132, ""};
    ExportInput in;
    in.family = &gemm;
    in.winners = {w};
    in.out_dir = temp_dir("gemm");
    const ExportOutput out = export_kernels(in);
    EXPECT_EQ(out.manifest["launch"]["grid"], k.grid) << k.arch;
    std::string log;
    // (-gencode, as the manifest's commands: nvcc's -arch=sm_90a also builds compute_90 PTX, which cannot hold wgmma)
    const std::string target = std::string(k.arch).substr(3);
    EXPECT_EQ(run("cd " + in.out_dir.string() + " && " + nvcc + " -gencode arch=compute_" + target + ",code=sm_" + target +
                      " -std=c++17 -c gemm_M4096_N4096_K4096_f16.cu",
                  &log),
              0)
        << k.arch << ": " << log;
    fs::remove_all(in.out_dir);
  }
}

}  // namespace
}  // namespace kf

namespace kf {
namespace {

// tools/report.py over a database written by Store: the page (and, with matplotlib, the
// plots) must come out; without matplotlib the page says the plots were skipped.
TEST(ReportTool, WritesPageFromStore) {
  if (std::system("python3 --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "python3 not on PATH";
  const fs::path dir = temp_dir("report");
  const Family f = load_family(fixture_spec());
  {
    Store store(dir / "results.db");
    CampaignRecord c;
    c.family = f.name;
    c.strategy = "random";
    c.shapes = {parse_shape(f, "R=64,C=1024,dtype=f16")};
    c.status = "done";
    const int64_t id = store.create_campaign(c);
    int n = 0;
    for (const char* cfg : {"BLOCK=64,LOAD=plain,VEC=1", "BLOCK=128,LOAD=plain,VEC=2", "BLOCK=256,LOAD=ldg,VEC=4"}) {
      EvaluationRecord e = winner(f, cfg, "R=64,C=1024,dtype=f16", 10.0 - ++n);
      e.campaign_id = id;
      store.add_evaluation(e);
    }
    EvaluationRecord bad = winner(f, "BLOCK=64,LOAD=ldg,VEC=1", "R=64,C=1024,dtype=f16", 0);
    bad.campaign_id = id;
    bad.status = Status::CompileError;
    bad.timing.reset();
    store.add_evaluation(bad);
    BaselineRecord b;
    b.family = f.name;
    b.shape = c.shapes[0];
    b.device = bad.device;
    b.backend = "torch";
    b.median_us = 9.0;
    store.add_baseline(b);
  }
  std::string log;
  ASSERT_EQ(run("python3 " + (fs::path(KFORGE_SOURCE_DIR) / "tools" / "report.py").string() + " " +
                    (dir / "results.db").string() + " --out " + (dir / "out").string(),
                &log),
            0)
      << log;
  const std::string page = read(dir / "out" / "index.html");
  EXPECT_NE(page.find("BLOCK=256,LOAD=ldg,VEC=4"), std::string::npos) << "the best config is listed";
  EXPECT_NE(page.find("compile_error"), std::string::npos);
  EXPECT_NE(page.find("torch"), std::string::npos);
  if (std::system("python3 -c 'import matplotlib' > /dev/null 2>&1") == 0) {
    for (const char* png : {"convergence_1.png", "status.png", "params_export_fixture.png", "baselines_export_fixture.png"})
      EXPECT_TRUE(fs::exists(dir / "out" / png)) << png;
  } else {
    EXPECT_NE(page.find("plots were skipped"), std::string::npos);
  }
  fs::remove_all(dir);
}

// Options and names were pasted into the manifest's shell lines unquoted: an option such as
// -DX=$(touch /tmp/pwned) ran a command when the line was copied into a shell.
TEST(ExportNames, ShellCommandsQuoteOptionsAndNames) {
  EXPECT_EQ(kf::shell_quote("--std=c++17"), "--std=c++17");
  EXPECT_EQ(kf::shell_quote("a b"), "'a b'");
  EXPECT_EQ(kf::shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(kf::shell_quote(""), "''");
  const std::string cmd = exporter::object_command("k", "sm_90", {"-DX=$(touch /tmp/pwned)", "-DY=1;rm"});
  EXPECT_EQ(cmd, "nvcc -O3 -arch=sm_90 '-DX=$(touch /tmp/pwned)' '-DY=1;rm' -c k.cu");
  // Run through a shell, each flag stays one word and nothing is executed.
  const std::string echo = "sh -c " + kf::shell_quote("printf '%s\\n' " + cmd.substr(5));
  FILE* p = popen(echo.c_str(), "r");
  ASSERT_TRUE(p);
  std::string out;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  EXPECT_NE(out.find("-DX=$(touch /tmp/pwned)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("-DY=1;rm\n"), std::string::npos) << out;
}

// The exported headers are a C ABI: they must compile as C11 (they used __half, a C++ type) and
// as C++, and the launchers refuse NULL or misaligned buffers with their own error code.
TEST_F(ExportFixture, HeadersCompileAsCAndCxxAndLaunchersCheckPointers) {
  if (std::system("gcc --version > /dev/null 2>&1") != 0 || std::system("g++ --version > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "gcc/g++ not found";
#ifdef KFORGE_CUDA_INCLUDE
  const std::string cuda_include = KFORGE_CUDA_INCLUDE;
#else
  const std::string cuda_include = "/usr/local/cuda/include";
#endif
  if (!fs::exists(fs::path(cuda_include) / "cuda_runtime.h")) GTEST_SKIP() << "no cuda_runtime.h in " << cuda_include;
  ExportInput in;
  in.family = &family;
  in.winners = {winner(family, "BLOCK=128,LOAD=plain,VEC=2", "R=64,C=1024,dtype=f16", 4.0),
                winner(family, "BLOCK=64,LOAD=plain,VEC=1", "R=64,C=1024,dtype=f32", 5.0),
                winner(family, "BLOCK=128,LOAD=plain,VEC=2", "R=64,C=1024,dtype=bf16", 4.0)};
  in.out_dir = temp_dir("c_header");
  in.base_arch = "sm_90";
  export_kernels(in);
  const std::string dir = in.out_dir.string();
  std::string log;
  int headers = 0;
  std::vector<fs::path> header_files;
  for (const auto& e : fs::directory_iterator(in.out_dir))
    if (e.path().extension() == ".h") header_files.push_back(e.path());
  for (const fs::directory_entry e : std::vector<fs::directory_entry>(header_files.begin(), header_files.end())) {
    ++headers;
    const std::string h = e.path().string();
    // Included by a C and a C++ file, twice (the header guards itself).
    const std::string stem = e.path().stem().string();
    std::ofstream(in.out_dir / (stem + "_use.c")) << "#include \"" << stem << ".h\"\n#include \"" << stem << ".h\"\n";
    std::ofstream(in.out_dir / (stem + "_use.cpp")) << "#include \"" << stem << ".h\"\n#include \"" << stem << ".h\"\n";
    EXPECT_EQ(run("cd " + dir + " && gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I" + cuda_include + " " +
                      stem + "_use.c",
                  &log),
              0)
        << h << ":\n" << log;
    EXPECT_EQ(run("cd " + dir + " && g++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I" + cuda_include + " " + stem +
                      "_use.cpp",
                  &log),
              0)
        << h << ":\n" << log;
    const std::string text = read(e.path());
    EXPECT_NE(text.find("cudaErrorInvalidDevicePointer"), std::string::npos) << "error codes documented in " << h;
  }
  EXPECT_EQ(headers, 4);  // three kernels and the dispatcher
  const std::string src = read(in.out_dir / "export_fixture_R64_C1024_f16.cu");
  for (const char* buffer : {"kf_X", "kf_bias", "kf_Y"})
    EXPECT_NE(src.find(std::string("if (") + buffer + " == nullptr || (reinterpret_cast<uintptr_t>(" + buffer +
                       ") & 15u) != 0) return cudaErrorInvalidDevicePointer;"),
              std::string::npos)
        << buffer;
  // The checks come after the shape (so "unsupported shape" stays cudaErrorInvalidValue, which
  // the dispatcher relies on) and before anything is launched.
  EXPECT_LT(src.find("return cudaErrorInvalidValue;\n  // Buffers"), src.find("<<<"));
  const std::string nvcc = find_nvcc();
  if (nvcc.empty()) return;
  EXPECT_EQ(run("cd " + dir + " && " + nvcc + " -arch=sm_90 -Xcompiler -Wall,-Wextra -c export_fixture_R64_C1024_f16.cu "
                    "export_fixture_dispatch.cu",
                &log),
            0)
      << log;
}

}  // namespace
}  // namespace kf
