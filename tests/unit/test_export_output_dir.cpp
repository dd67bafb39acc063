// The export stays inside --out: a symbolic link where it writes (CMakeLists.txt, manifest.json,
// runners/) is refused and the file it points to is left alone (the export used to write through
// it), a failed export writes nothing, and files it replaces are reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "export/export.hpp"
#include "export/output_dir.hpp"
#include "test_dir.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;
using exporter::OutputDir;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The error export_kernels or commit() throws, "(no error)" when none.
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

class ExportOutputDir : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fresh_test_dir("kforge_export_outdir");
    out_ = root_ / "out";
    outside_ = root_ / "outside";
    fs::create_directories(out_);
    fs::create_directories(outside_);
    std::ofstream(outside_ / "victim.txt") << "precious\n";
    family_ = load_family(fs::path(KFORGE_TEST_DIR) / "families" / "export_fixture" / "export_fixture.json");
  }
  void TearDown() override { fs::remove_all(root_); }

  ExportInput input() const {
    EvaluationRecord r;
    r.id = 7;
    r.family = family_.name;
    r.config = parse_assignment("BLOCK=128,LOAD=plain,VEC=2");
    r.shape = parse_shape(family_, "R=64,C=1024,dtype=f16");
    r.device = {"NVIDIA H100 80GB HBM3", 90, 132, "580.65"};
    r.status = Status::Ok;
    TimingStats t;
    t.median_us = 4.0;
    r.timing = t;
    ExportInput in;
    in.family = &family_;
    in.winners = {r};
    in.out_dir = out_;
    in.name = "k";
    return in;
  }

  fs::path root_, out_, outside_;
  Family family_;
};

TEST_F(ExportOutputDir, LinkedCMakeListsIsRefusedAndItsTargetKept) {
  fs::create_symlink(outside_ / "victim.txt", out_ / "CMakeLists.txt");
  const std::string msg = error_of([&] { export_kernels(input()); });
  EXPECT_NE(msg.find((out_ / "CMakeLists.txt").string() + " is a symbolic link"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_EQ(read_text(outside_ / "victim.txt"), "precious\n");
  // Refused before anything is written: only the link is there.
  EXPECT_EQ(std::distance(fs::directory_iterator(out_), fs::directory_iterator()), 1);
  EXPECT_TRUE(fs::is_symlink(out_ / "CMakeLists.txt"));
}

TEST_F(ExportOutputDir, LinkedManifestIsRefused) {
  fs::create_symlink(outside_ / "victim.txt", out_ / "manifest.json");
  EXPECT_NE(error_of([&] { export_kernels(input()); }).find("symbolic link"), std::string::npos);
  EXPECT_EQ(read_text(outside_ / "victim.txt"), "precious\n");
  EXPECT_FALSE(fs::exists(out_ / "k.cu"));
}

TEST_F(ExportOutputDir, LinkedRunnersFolderIsRefused) {
  fs::create_symlink(outside_, out_ / "runners");
  const std::string msg = error_of([&] { export_kernels(input()); });
  EXPECT_NE(msg.find((out_ / "runners").string() + " is a symbolic link"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(outside_ / "k_runner.cu"));
  EXPECT_EQ(std::distance(fs::directory_iterator(outside_), fs::directory_iterator()), 1);
}

TEST_F(ExportOutputDir, LinkToNothingIsRefusedNotCreated) {
  // A dangling link: writing through it would create a file outside --out.
  fs::create_symlink(outside_ / "new.txt", out_ / "CMakeLists.txt");
  EXPECT_NE(error_of([&] { export_kernels(input()); }).find("symbolic link"), std::string::npos);
  EXPECT_FALSE(fs::exists(outside_ / "new.txt"));
}

TEST_F(ExportOutputDir, ReplacedFilesAreReported) {
  const ExportOutput first = export_kernels(input());
  EXPECT_TRUE(first.replaced.empty());
  std::ofstream(out_ / "mine.txt") << "kept\n";  // not the export's: neither touched nor reported
  const ExportOutput second = export_kernels(input());
  const std::vector<std::string>& r = second.replaced;
  EXPECT_EQ(r.size(), second.files.size());
  EXPECT_NE(std::find(r.begin(), r.end(), "CMakeLists.txt"), r.end());
  EXPECT_NE(std::find(r.begin(), r.end(), "runners/k_runner.cu"), r.end());
  EXPECT_EQ(read_text(out_ / "mine.txt"), "kept\n");
}

TEST_F(ExportOutputDir, FailedExportWritesNothing) {
  ExportInput in = input();
  in.out_dir = out_ / "new" / "deeper";
  in.winners[0].shape = parse_shape(family_, "R=64,C=1023,dtype=f16");  // violates C % VEC == 0
  EXPECT_NE(error_of([&] { export_kernels(in); }).find("C % VEC == 0"), std::string::npos);
  EXPECT_FALSE(fs::exists(out_ / "new"));
}

TEST(ExportOutputDirCommit, PathsOutOfTheFolderAreRefused) {
  const fs::path dir = fresh_test_dir("kforge_outdir_paths");
  for (const char* rel : {"../x", "a/../../x", "/etc/x", "a//b", "a/", "", "."}) {
    OutputDir out(dir / "o");
    EXPECT_NE(error_of([&] { out.add(rel, "x"); }).find("not a relative path of plain names"), std::string::npos)
        << rel;
  }
  fs::remove_all(dir);
}

TEST(ExportOutputDirCommit, OutMayItselfBeALinkTheUserChose) {
  const fs::path dir = fresh_test_dir("kforge_outdir_root_link");
  fs::create_directories(dir / "real");
  fs::create_symlink(dir / "real", dir / "link");
  OutputDir out(dir / "link");
  out.add("runners/a.cu", "a");
  out.add("b.h", "b");
  const OutputDir::Written w = out.commit();
  EXPECT_EQ(w.files.size(), 2u);
  EXPECT_EQ(read_text(dir / "real" / "runners" / "a.cu"), "a");
  EXPECT_EQ(read_text(dir / "real" / "b.h"), "b");
  fs::remove_all(dir);
}

TEST(ExportOutputDirCommit, ANonFileWhereAFileGoesIsRefused) {
  const fs::path dir = fresh_test_dir("kforge_outdir_nonfile");
  fs::create_directories(dir / "CMakeLists.txt");
  std::ofstream(dir / "runners") << "a file where a folder goes\n";
  OutputDir a(dir);
  a.add("CMakeLists.txt", "x");
  EXPECT_NE(error_of([&] { a.commit(); }).find("is not a regular file"), std::string::npos);
  OutputDir b(dir);
  b.add("runners/r.cu", "x");
  EXPECT_NE(error_of([&] { b.commit(); }).find("is not a folder"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kf
