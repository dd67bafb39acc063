// A spec reads kernel sources from its own folder, the kernel_templates tree beside it and its
// include dirs (which lie in those two) only: a template path, an include dir, a quoted #include or a
// link inside the trees that leads elsewhere is refused in one line naming the spec and the path.
// Before, "template": "../../../../etc/passwd" was read and compiled.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "family/family.hpp"
#include "family/render.hpp"
#include "family/template_roots.hpp"
#include "test_dir.hpp"

using namespace kf;
namespace fs = std::filesystem;
using OJson = nlohmann::ordered_json;

namespace {

const fs::path kToyDir = fs::path(KFORGE_TEST_DIR) / "families" / "toy";

// The toy spec, its templates copied beside it in dir/spec/ (relative paths as shipped), with
// `mutate` applied; returns the spec's path.
fs::path toy_in(const fs::path& dir, const std::function<void(OJson&)>& mutate) {
  const fs::path folder = dir / "spec";
  fs::create_directories(folder);
  for (const char* f : {"kernel.cu", "reference.cu", "local.cuh", "include"})
    fs::copy(kToyDir / f, folder / f, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  std::ifstream in(kToyDir / "toy.json");
  OJson j = OJson::parse(in);
  mutate(j);
  const fs::path path = folder / "toy.json";
  std::ofstream(path) << j.dump(2);
  return path;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no SpecError)";
}

// The error names the spec and the path, on one line.
void expect_refused(const std::string& msg, const fs::path& spec, const std::string& path) {
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_EQ(msg.rfind(spec.string(), 0), 0u) << msg;
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("outside the spec's folder and the template trees"), std::string::npos) << msg;
}

const Config kConfig = {{"BLOCK", Value{int64_t{128}}}, {"VEC", Value{int64_t{2}}}, {"MODE", Value{std::string("plain")}}};
const Shape kShape = {{"N", Value{int64_t{4096}}}, {"dtype", Value{std::string("f16")}}};

}  // namespace

TEST(TemplateRoots, TemplateOutsideTheSpecFolderIsRefused) {
  const fs::path dir = fresh_test_dir("kforge_roots_template");
  const fs::path spec = toy_in(dir, [](OJson& j) { j["template"] = "../../../../../../../../../../etc/passwd"; });
  const std::string msg = error_of([&] { load_family(spec); });
  expect_refused(msg, spec, "/etc/passwd");
  EXPECT_NE(msg.find(":/template: "), std::string::npos) << msg;
  fs::remove_all(dir);
}

TEST(TemplateRoots, AbsoluteReferenceTemplateElsewhereIsRefused) {
  const fs::path dir = fresh_test_dir("kforge_roots_reference");
  std::ofstream(dir / "elsewhere.cu") << "__global__ void toy_reference() {}\n";
  const fs::path spec = toy_in(dir, [&](OJson& j) { j["reference"]["template"] = (dir / "elsewhere.cu").string(); });
  const std::string msg = error_of([&] { load_family(spec); });
  expect_refused(msg, spec, (dir / "elsewhere.cu").string());
  EXPECT_NE(msg.find("/reference/template"), std::string::npos) << msg;
  fs::remove_all(dir);
}

TEST(TemplateRoots, IncludeDirOutsideIsRefused) {
  const fs::path dir = fresh_test_dir("kforge_roots_include_dir");
  fs::create_directories(dir / "other");
  const fs::path spec = toy_in(dir, [](OJson& j) { j["include_dirs"] = OJson::array({"include", "../other"}); });
  const std::string msg = error_of([&] { load_family(spec); });
  expect_refused(msg, spec, (dir / "other").string());
  EXPECT_NE(msg.find("/include_dirs/1"), std::string::npos) << msg;
  fs::remove_all(dir);
}

TEST(TemplateRoots, LinkInTheFolderLeadingOutIsRefused) {
  const fs::path dir = fresh_test_dir("kforge_roots_link");
  const fs::path spec = toy_in(dir, [](OJson&) {});
  std::ofstream(dir / "secret.cu") << "__global__ void toy_scale() {}\n";
  fs::remove(spec.parent_path() / "kernel.cu");
  fs::create_symlink(dir / "secret.cu", spec.parent_path() / "kernel.cu");
  expect_refused(error_of([&] { load_family(spec); }), spec, "really " + (dir / "secret.cu").string());
  fs::remove_all(dir);
}

TEST(TemplateRoots, QuotedIncludeLeadingOutIsRefusedAtRender) {
  const fs::path dir = fresh_test_dir("kforge_roots_quoted");
  const fs::path spec = toy_in(dir, [](OJson&) {});
  std::ofstream(dir / "secret.cuh") << "// not the spec's\n";
  std::ofstream(spec.parent_path() / "local.cuh", std::ios::app) << "#include \"../secret.cuh\"\n";
  const Family f = load_family(spec);
  const std::string msg = error_of([&] { render_variant(f, kConfig, kShape); });
  expect_refused(msg, spec, (dir / "secret.cuh").string());
  EXPECT_NE(msg.find("included file \"../secret.cuh\""), std::string::npos) << msg;
  fs::remove_all(dir);
}

TEST(TemplateRoots, KernelTemplatesBesideTheSpecFolderAreInside) {
  // The shipped layout: search_spaces/x.json naming ../kernel_templates/... .
  const fs::path dir = fresh_test_dir("kforge_roots_shipped");
  const fs::path spec = toy_in(dir, [](OJson& j) {
    j["template"] = "../kernel_templates/kernel.cu";
    j["include_dirs"] = OJson::array({"include", "../kernel_templates"});
  });
  fs::create_directories(dir / "kernel_templates");
  fs::copy(kToyDir / "kernel.cu", dir / "kernel_templates" / "kernel.cu");
  fs::copy(kToyDir / "local.cuh", dir / "kernel_templates" / "local.cuh");
  const Family f = load_family(spec);
  EXPECT_NE(render_variant(f, kConfig, kShape).source.find("toy_scale"), std::string::npos);
  // A folder merely named like a root is not inside it (component-wise comparison).
  EXPECT_FALSE(inside_roots(dir / "kernel_templates_x", {real_path(dir / "kernel_templates")}));
  fs::remove_all(dir);
}

TEST(TemplateRoots, ShippedSpecsLoadAndRender) {
  for (const char* name : {"gemm", "sdpa_fwd", "sdpa_basic"}) {
    const Family f = load_family(fs::path(KFORGE_SOURCE_DIR) / "search_spaces" / (std::string(name) + ".json"));
    ASSERT_FALSE(f.defaults.empty()) << name;
    ASSERT_FALSE(f.suites.empty()) << name;
    const Shape s = f.suites.begin()->second.front();
    EXPECT_FALSE(render_variant(f, f.defaults.front(), s).source.empty()) << name;
  }
}
