// The export's workspace query and CMake subproject: `<name>_workspace_size` run on the host
// (compiled with nvcc, no GPU), and the generated CMakeLists naming each kernel's real target.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "export/export.hpp"
#include "test_dir.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string nvcc_path() {
  if (std::system("nvcc --version > /dev/null 2>&1") == 0) return "nvcc";
  if (fs::exists("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return "";
}

EvaluationRecord toy_winner(const Family& f, const std::string& config) {
  EvaluationRecord r;
  r.id = 1;
  r.family = f.name;
  r.config = parse_assignment(config);
  r.shape = parse_shape(f, "N=4096,dtype=f16");
  r.device = {"NVIDIA H100 80GB HBM3", 90, 132, ""};
  r.status = Status::Ok;
  TimingStats t;
  t.median_us = 3.0;
  r.timing = t;
  return r;
}

TEST(ExportWorkspace, SizeOfTheScratchBuffersRunsOnTheHost) {
  const std::string nvcc = nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found on PATH or in /usr/local/cuda/bin";
  const Family toy = load_family(fs::path(KFORGE_TEST_DIR) / "families" / "toy" / "toy.json");
  ExportInput in;
  in.family = &toy;
  in.winners = {toy_winner(toy, "BLOCK=128,VEC=2,MODE=plain")};
  in.out_dir = fresh_test_dir("kforge_export_workspace");
  in.name = "toy_k";
  const ExportOutput out = export_kernels(in);
  EXPECT_EQ(out.manifest["workspace_signature"], "size_t toy_k_workspace_size(long long N, const char* dtype)");
  // toy's one scratch buffer is a single i32 counter: 4 bytes, rounded up to 256.
  std::ofstream(in.out_dir / "main.cpp") << "#include <cstdio>\n#include \"toy_k.h\"\n"
                                             "int main() { std::printf(\"%zu %d\\n\", toy_k_workspace_size(4096, \"f16\"),"
                                             " (int)(toy_k_workspace_size(4096, nullptr) == (size_t)-1)); }\n";
  const std::string cmd = "cd " + in.out_dir.string() + " && " + nvcc + " -arch=sm_90 -I. -o ws toy_k.cu main.cpp > log.txt 2>&1 && ./ws > ws.txt";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_text(in.out_dir / "log.txt");
  EXPECT_EQ(read_text(in.out_dir / "ws.txt"), "256 1\n");
}

TEST(ExportCMake, EachKernelBuildsForItsOwnTarget) {
  const Family toy = load_family(fs::path(KFORGE_TEST_DIR) / "families" / "toy" / "toy.json");
  ExportInput in;
  in.family = &toy;
  // unrolled with VEC=4 renders for sm_90a (toy's arch_suffix); the other for sm_90.
  EvaluationRecord a = toy_winner(toy, "BLOCK=128,VEC=4,MODE=unrolled");
  EvaluationRecord b = toy_winner(toy, "BLOCK=128,VEC=2,MODE=plain");
  b.shape = parse_shape(toy, "N=1024,dtype=f16");
  in.winners = {a, b};
  in.out_dir = fresh_test_dir("kforge_export_cmake");
  const ExportOutput out = export_kernels(in);
  EXPECT_EQ(out.manifest["cmake"]["target"], "kforge::toy");
  const std::string cmake = read_text(in.out_dir / "CMakeLists.txt");
  EXPECT_NE(cmake.find("add_library(kforge::toy ALIAS kforge_toy)"), std::string::npos) << cmake;
  // One word per option: CMake expands no SHELL: in a source's COMPILE_OPTIONS, and
  // "SHELL:-gencode arch=..." reached nvcc as it is ("A single input file is required").
  EXPECT_NE(cmake.find("toy_N4096_f16.cu PROPERTIES COMPILE_OPTIONS \"--generate-code=arch=compute_90a,code=sm_90a;"),
            std::string::npos) << cmake;
  EXPECT_EQ(cmake.find("SHELL:"), std::string::npos) << cmake;
  EXPECT_EQ(cmake.find("-gencode "), std::string::npos) << cmake;
  EXPECT_NE(cmake.find("toy_N1024_f16.cu PROPERTIES COMPILE_OPTIONS \"-arch=sm_90"), std::string::npos) << cmake;
  EXPECT_NE(cmake.find("runners/toy_N4096_f16_runner.cu"), std::string::npos) << cmake;
  EXPECT_NE(out.manifest["dispatcher"]["commands"]["object"].get<std::string>().find("code=sm_90a"), std::string::npos);
}

}  // namespace
}  // namespace kf
