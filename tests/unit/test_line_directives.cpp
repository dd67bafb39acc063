// #line directives in rendered sources: compiler messages name the template file and line,
// while variant hashes stay what they were without the directives.
#include <gtest/gtest.h>

#include <fstream>

#include "compile/compiler.hpp"
#include "compile/error_groups.hpp"
#include "family/render.hpp"
#include "test_dir.hpp"
#include "util/hash.hpp"

using namespace kf;
namespace fs = std::filesystem;

namespace {

const Family& toy() {
  static const Family f = load_family(fs::path(KFORGE_TEST_DIR) / "families" / "toy" / "toy.json");
  return f;
}
const Config kConfig = {{"BLOCK", int64_t(128)}, {"VEC", int64_t(2)}, {"MODE", std::string("plain")}};
const Shape kShape = {{"N", int64_t(4096)}, {"dtype", std::string("f16")}};

}  // namespace

TEST(LineDirectives, NameEachFileAndTheLineAfterAnInclude) {
  const Variant v = render_variant(toy(), kConfig, kShape);
  const std::string main_file = toy().kernel.template_path.string();
  EXPECT_NE(v.source.find("#line 1 \"" + main_file + "\"\n"), std::string::npos);
  // kernel.cu includes local.cuh on its line 2: back in kernel.cu, the next line is 3.
  EXPECT_NE(v.source.find("// ---- end local.cuh ----\n#line 3 \"" + main_file + "\"\n"), std::string::npos);
  EXPECT_EQ(strip_line_directives(v.source).find("#line"), std::string::npos);
}

TEST(LineDirectives, LeaveTheVariantHashAsItWasWithoutThem) {
  // The hash as render computed it before it added #line: header, defines, inlined template.
  const Variant v = render_variant(toy(), kConfig, kShape);
  std::string old_source = "// kforge toy " + to_string(kConfig) + " [dtype=f16]\n" +
                           render_defines(kConfig, {{"dtype", std::string("f16")}}) +
                           inline_includes(toy().kernel.template_path, toy().include_dirs);
  EXPECT_EQ(strip_line_directives(v.source), old_source);
  std::string data = old_source;
  for (const auto& o : v.options) data += '\0' + o;
  data += '\0';
  data += v.arch_suffix;
  EXPECT_EQ(v.hash, content_hash(data));
}

TEST(LineDirectives, NvrtcErrorsNameTheTemplateFileAndLine) {
  const fs::path dir = fresh_test_dir("kforge_line_directives");
  const fs::path broken = dir / "broken.cu";
  std::ofstream(broken) << "// a template with a mistake on line 4\n#include \"local.cuh\"\n\n"
                           "extern \"C\" __global__ void toy_scale() { int x = no_such_name; (void)x; }\n";
  Family f = toy();
  f.kernel.template_path = broken;
  f.include_dirs.push_back(toy().kernel.template_path.parent_path());
  const CompiledKernel k = compile_variant(render_variant(f, kConfig, kShape), "sm_90", nullptr);
  ASSERT_FALSE(k.ok);
  EXPECT_NE(k.log.find(broken.string() + "(4): error"), std::string::npos) << k.log;
}

TEST(CompileErrorGroups, EachDistinctErrorOnceWithItsCount) {
  CompileErrorGroups g;
  g.add("A=1", "t.cu(4): error: identifier \"x\" is undefined\n1 error detected");
  g.add("A=2", "t.cu(4): error: identifier \"x\" is undefined\n1 error detected");
  g.add("A=3", "t.cu(9): error: too many resources\n");
  g.add("A=4", "t.cu(4): error: identifier \"x\" is undefined\n1 error detected");
  EXPECT_EQ(g.groups(), 2u);
  const std::string text = g.format();
  EXPECT_NE(text.find("compile error in A=1 (and 2 more configs):"), std::string::npos) << text;
  EXPECT_NE(text.find("compile error in A=3:"), std::string::npos) << text;
  EXPECT_EQ(g.format(1).find("A=3"), std::string::npos);
  EXPECT_NE(g.format(1).find("1 more distinct compile errors not shown"), std::string::npos);
}
