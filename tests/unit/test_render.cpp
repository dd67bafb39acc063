// Rendering: #defines, include inlining (search order, once per file, errors) and variants.
#include <gtest/gtest.h>

#include <fstream>

#include "family/render.hpp"
#include "util/hash.hpp"

using namespace kf;
namespace fs = std::filesystem;

namespace {

const fs::path kToyDir = fs::path(KFORGE_TEST_DIR) / "families" / "toy";

const Family& toy() {
  static const Family f = load_family(kToyDir / "toy.json");
  return f;
}

Value I(int64_t v) { return Value{v}; }
Value S(const char* s) { return Value{std::string(s)}; }
Config cfg(int64_t block, int64_t vec, const char* mode) {
  return {{"BLOCK", I(block)}, {"VEC", I(vec)}, {"MODE", S(mode)}};
}
Shape shape(int64_t n, const char* dtype) { return {{"N", I(n)}, {"dtype", S(dtype)}}; }

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A scratch folder of small files for include tests.
class IncludeTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kforge_render_test_" + std::to_string(::getpid()));
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path write(const std::string& rel, const std::string& text) {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }
  fs::path root_;
};

}  // namespace

TEST(RenderDefines, IntegersAndStrings) {
  const Config c{{"BLOCK_M", I(64)}, {"MMA", S("wmma")}};
  const Shape spec{{"dtype", S("f16")}, {"D", I(64)}};
  // Params first, then specialized dims, each in name order ("D" sorts before "dtype").
  EXPECT_EQ(render_defines(c, spec),
            "#define KF_BLOCK_M 64\n#define KF_MMA_WMMA 1\n#define KF_D 64\n#define KF_DTYPE_F16 1\n");
  EXPECT_EQ(render_defines({{"dtype", S("bf16")}}, {}), "#define KF_DTYPE_BF16 1\n");
  EXPECT_EQ(render_defines({}, {}), "");
}

TEST(RenderInclude, ToyTemplateIsSelfContained) {
  const std::string src = inline_includes(toy().kernel.template_path, toy().include_dirs);
  EXPECT_EQ(count(src, "// ---- begin local.cuh ----"), 1u);
  EXPECT_EQ(count(src, "// ---- begin common/types.cuh ----"), 1u);
  EXPECT_EQ(count(src, "typedef __half elem_t;"), 1u);  // included twice, inlined once
  EXPECT_EQ(count(src, "// ---- already inlined: common/types.cuh ----"), 1u);
  EXPECT_EQ(count(src, "#include \""), 0u);
  EXPECT_EQ(count(src, "#include <cuda_fp16.h>"), 1u);  // toolkit headers stay
  EXPECT_EQ(count(src, "\n#pragma once"), 0u);
  // local.cuh includes types.cuh first, so types.cuh is inlined inside local.cuh's section.
  EXPECT_LT(src.find("begin local.cuh"), src.find("begin common/types.cuh"));
  EXPECT_LT(src.find("end common/types.cuh"), src.find("end local.cuh"));
  EXPECT_NE(src.find("extern \"C\" __global__ void toy_scale"), std::string::npos);
}

TEST_F(IncludeTree, NextToTheIncluderBeforeIncludeDirs) {
  const fs::path main = write("src/main.cu", "#include \"x.h\"\n#include \"only_in_inc.h\"\nint main_body;\n");
  write("src/x.h", "int from_src;\n");
  write("inc/x.h", "int from_inc;\n");
  write("inc/only_in_inc.h", "  #  include \"y.h\"\n");  // spaces around '#' still count
  write("inc/y.h", "int y_next_to_only_in_inc;\n");
  const std::string src = inline_includes(main, {root_ / "inc"});
  EXPECT_NE(src.find("int from_src;"), std::string::npos);
  EXPECT_EQ(src.find("int from_inc;"), std::string::npos);
  EXPECT_NE(src.find("int y_next_to_only_in_inc;"), std::string::npos);
  EXPECT_NE(src.find("int main_body;"), std::string::npos);
}

TEST_F(IncludeTree, CyclesTerminateAndEachFileAppearsOnce) {
  const fs::path a = write("a.h", "#pragma once\n#include \"b.h\"\nint a;\n");
  write("b.h", "#pragma once\n#include \"a.h\"\nint b;\n");
  const std::string src = inline_includes(a, {});
  EXPECT_EQ(count(src, "int a;"), 1u);
  EXPECT_EQ(count(src, "int b;"), 1u);
}

TEST_F(IncludeTree, MissingFileNamesIncluderAndLine) {
  const fs::path main = write("main.cu", "// a kernel\n#include <cuda_fp16.h>\n#include \"nope.cuh\"\n");
  try {
    inline_includes(main, {root_ / "inc"});
    FAIL() << "expected SpecError";
  } catch (const SpecError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(main.string() + ":3: cannot find included file \"nope.cuh\" (searched: ", 0), 0u) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos);
  }
  EXPECT_THROW(inline_includes(root_ / "absent.cu", {}), SpecError);
}

TEST(RenderVariant, SourceEntryOptionsAndSuffix) {
  const Variant v = render_variant(toy(), cfg(128, 2, "plain"), shape(4096, "f16"));
  EXPECT_EQ(v.family, "toy");
  EXPECT_EQ(v.config, cfg(128, 2, "plain"));
  EXPECT_EQ(v.specialization, (Shape{{"dtype", S("f16")}}));
  EXPECT_EQ(v.entry, "toy_scale");
  EXPECT_EQ(v.options, (std::vector<std::string>{"--std=c++17"}));
  EXPECT_EQ(v.arch_suffix, "");
  EXPECT_NE(v.source.find("#define KF_BLOCK 128\n"), std::string::npos);
  EXPECT_NE(v.source.find("#define KF_VEC 2\n"), std::string::npos);
  EXPECT_NE(v.source.find("#define KF_MODE_PLAIN 1\n"), std::string::npos);
  EXPECT_NE(v.source.find("#define KF_DTYPE_F16 1\n"), std::string::npos);
  EXPECT_EQ(v.source.find("KF_N "), std::string::npos);  // N is not specialized
  // The defines come before the template that reads them.
  EXPECT_LT(v.source.find("#define KF_BLOCK"), v.source.find("toy_scale"));
  EXPECT_EQ(v.hash.size(), 32u);
  EXPECT_EQ(render_variant(toy(), cfg(64, 4, "unrolled"), shape(4096, "f16")).arch_suffix, "a");
}

TEST(RenderVariant, HashDependsOnSourceNotOnUnspecializedDims) {
  const Variant a = render_variant(toy(), cfg(128, 2, "plain"), shape(4096, "f16"));
  EXPECT_EQ(a.hash, render_variant(toy(), cfg(128, 2, "plain"), shape(4096, "f16")).hash);
  // N is not baked into the source: one compiled kernel serves every N.
  EXPECT_EQ(a.hash, render_variant(toy(), cfg(128, 2, "plain"), shape(77, "f16")).hash);
  EXPECT_NE(a.hash, render_variant(toy(), cfg(128, 4, "plain"), shape(4096, "f16")).hash);
  EXPECT_NE(a.hash, render_variant(toy(), cfg(128, 2, "plain"), shape(4096, "f32")).hash);
  Family other = toy();
  other.compile_options.push_back("-lineinfo");
  EXPECT_NE(a.hash, render_variant(other, cfg(128, 2, "plain"), shape(4096, "f16")).hash);
}

TEST(RenderVariant, MissingSpecializedDimIsAnError) {
  EXPECT_THROW(render_variant(toy(), cfg(128, 2, "plain"), {{"N", I(8)}}), SpecError);
}

TEST(RenderReference, DimsOnly) {
  const Variant r = render_reference(toy(), shape(1000, "f32"));
  EXPECT_TRUE(r.config.empty());
  EXPECT_EQ(r.entry, "toy_reference");
  EXPECT_EQ(r.arch_suffix, "");
  EXPECT_EQ(r.specialization, (Shape{{"dtype", S("f32")}}));
  EXPECT_NE(r.source.find("#define KF_DTYPE_F32 1\n"), std::string::npos);
  EXPECT_EQ(r.source.find("KF_BLOCK"), std::string::npos);
  EXPECT_NE(r.source.find("toy_reference"), std::string::npos);
  EXPECT_EQ(count(r.source, "#include \""), 0u);
  EXPECT_NE(r.hash, render_reference(toy(), shape(1000, "f16")).hash);
  EXPECT_EQ(r.hash, render_reference(toy(), shape(8, "f32")).hash);
}
