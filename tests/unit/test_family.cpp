// Family specs: loading the toy spec, every class of spec error (file + JSON pointer), shapes,
// configs, scopes, constraints, spaces, launches, gate shapes and device limits.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "family/family.hpp"
#include "util/hash.hpp"

using namespace kf;
namespace fs = std::filesystem;
using OJson = nlohmann::ordered_json;

namespace {

const fs::path kToyDir = fs::path(KFORGE_TEST_DIR) / "families" / "toy";
const fs::path kToySpec = kToyDir / "toy.json";

const Family& toy() {
  static const Family f = load_family(kToySpec);
  return f;
}

Value I(int64_t v) { return Value{v}; }
Value S(const char* s) { return Value{std::string(s)}; }
Config cfg(int64_t block, int64_t vec, const char* mode) {
  return {{"BLOCK", I(block)}, {"VEC", I(vec)}, {"MODE", S(mode)}};
}
Shape shape(int64_t n, const char* dtype) { return {{"N", I(n)}, {"dtype", S(dtype)}}; }

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

template <typename F>
std::string spec_error(F f) {
  try {
    f();
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no SpecError)";
}

// Writes a mutated copy of the toy spec (named `name`, templates by absolute path) into a
// scratch folder and returns the error its loading gives, with the file's path replaced by "F".
// The toy's templates are copied beside it: a spec reads templates from its own folder only.
class MutatedSpec : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge_family_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    for (const char* f : {"kernel.cu", "reference.cu", "local.cuh", "include"})
      fs::copy(kToyDir / f, dir_ / f, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string error_after(const std::function<void(OJson&)>& mutate) {
    OJson j = OJson::parse(read(kToySpec));
    j["name"] = "mutant";
    j["template"] = (dir_ / "kernel.cu").string();
    j["reference"]["template"] = (dir_ / "reference.cu").string();
    j["include_dirs"] = OJson::array({(dir_ / "include").string()});
    mutate(j);
    const fs::path path = dir_ / "mutant.json";
    std::ofstream(path) << j.dump(2);
    std::string msg = spec_error([&] { load_family(path); });
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    if (msg.rfind(path.string(), 0) == 0) msg = "F" + msg.substr(path.string().size());
    return msg;
  }

  fs::path dir_;
};

}  // namespace

// ---- loading ------------------------------------------------------------------------------------

TEST(FamilyLoad, ToySpecFields) {
  const Family& f = toy();
  EXPECT_EQ(f.name, "toy");
  EXPECT_FALSE(f.description.empty());
  EXPECT_TRUE(f.spec_path.is_absolute());
  EXPECT_EQ(f.spec_hash, content_hash(read(kToySpec)));
  // Params keep the file's order (it decides the enumeration order).
  ASSERT_EQ(f.params.size(), 3u);
  EXPECT_EQ(f.params[0].name, "BLOCK");
  EXPECT_EQ(f.params[1].name, "VEC");
  EXPECT_EQ(f.params[2].name, "MODE");
  EXPECT_EQ(f.params[0].values, (std::vector<Value>{I(64), I(128), I(256)}));
  EXPECT_EQ(f.params[2].values, (std::vector<Value>{S("plain"), S("unrolled")}));
  ASSERT_EQ(f.defaults.size(), 1u);
  EXPECT_EQ(f.defaults[0], cfg(128, 2, "plain"));
  // Derived keep their order too (later ones read earlier ones).
  ASSERT_EQ(f.derived.size(), 3u);
  EXPECT_EQ(f.derived[0].name, "threads");
  EXPECT_EQ(f.derived[2].name, "smem_bytes");
  ASSERT_EQ(f.constraints.size(), 4u);
  EXPECT_EQ(f.constraints[1].text, "MODE == 'plain' || VEC >= 2");
  ASSERT_EQ(f.dims.size(), 2u);
  EXPECT_FALSE(f.dims[0].is_enum);
  EXPECT_EQ(f.dims[0].min, 1);
  EXPECT_EQ(f.dims[0].max, 16777216);
  EXPECT_TRUE(f.dims[1].is_enum);
  EXPECT_EQ(f.dims[1].choices, (std::vector<std::string>{"f16", "f32"}));
  EXPECT_EQ(f.specialize, (std::vector<std::string>{"dtype"}));
  EXPECT_EQ(f.suites.at("small").size(), 2u);
  EXPECT_EQ(f.suites.at("default")[0], shape(4096, "f16"));
  ASSERT_EQ(f.gate.size(), 2u);
  EXPECT_EQ(f.gate[0].overrides, (Shape{{"N", I(1001)}}));
  EXPECT_DOUBLE_EQ(f.gate[1].input_scale, 100.0);
  ASSERT_EQ(f.buffers.size(), 3u);
  EXPECT_EQ(f.buffers[0].role, BufferRole::Input);
  EXPECT_DOUBLE_EQ(f.buffers[0].init.lo, -2.0);
  EXPECT_EQ(f.buffers[1].role, BufferRole::Output);
  EXPECT_EQ(f.buffers[2].role, BufferRole::Scratch);
  EXPECT_EQ(f.buffer("y"), &f.buffers[1]);
  EXPECT_EQ(f.buffer("z"), nullptr);
  EXPECT_EQ(f.param("VEC"), &f.params[1]);
  EXPECT_EQ(f.dim("dtype"), &f.dims[1]);
  EXPECT_EQ(f.dim("BLOCK"), nullptr);
}

TEST(FamilyLoad, KernelReferenceAndPaths) {
  const Family& f = toy();
  EXPECT_EQ(f.kernel.template_path, kToyDir.lexically_normal() / "kernel.cu");
  EXPECT_TRUE(f.kernel.template_path.is_absolute());
  EXPECT_EQ(f.kernel.entry, "toy_scale");
  EXPECT_EQ(f.reference.entry, "toy_reference");
  ASSERT_EQ(f.include_dirs.size(), 1u);
  EXPECT_TRUE(fs::is_directory(f.include_dirs[0]));
  EXPECT_EQ(f.compile_options, (std::vector<std::string>{"--std=c++17"}));
  ASSERT_EQ(f.kernel.args.size(), 4u);
  EXPECT_EQ(f.kernel.args[0].kind, ArgSpec::Kind::Buffer);
  EXPECT_EQ(f.kernel.args[0].buffer, "x");
  EXPECT_EQ(f.kernel.args[2].kind, ArgSpec::Kind::I32);
  EXPECT_EQ(f.kernel.args[3].kind, ArgSpec::Kind::F32);
  // The reference's launch lists one grid and one block expression; the rest default to 1.
  EXPECT_EQ(f.reference.launch.grid[1].text(), "1");
  EXPECT_EQ(f.tolerance.size(), 2u);
  EXPECT_DOUBLE_EQ(f.tolerance_for(shape(8, "f16")).max_abs, 0.01);
  EXPECT_DOUBLE_EQ(f.tolerance_for(shape(8, "f32")).max_abs, 1e-6);  // falls back to "default"
  const Scope s = make_scope(f, cfg(64, 1, "plain"), shape(1000, "f32"), DeviceLimits::for_arch("sm_90"));
  EXPECT_DOUBLE_EQ(f.flops.eval_double(s), 1000.0);
  EXPECT_DOUBLE_EQ(f.bytes.eval_double(s), 8000.0);
}

TEST(FamilyLoad, FindAndLoadByName) {
  EXPECT_EQ(find_family_specs(kToyDir), (std::vector<fs::path>{kToySpec}));  // bad/ is a subfolder
  EXPECT_EQ(load_family_named("toy", kToyDir).name, "toy");
  EXPECT_EQ(load_family_named(kToySpec.string(), "/nonexistent").name, "toy");
  const std::string msg = spec_error([] { load_family_named("gemm", kToyDir); });
  EXPECT_NE(msg.find("unknown family 'gemm'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(known: toy)"), std::string::npos) << msg;
  EXPECT_THROW(find_family_specs(kToyDir / "missing"), SpecError);
}

// ---- malformed specs: fixtures ---------------------------------------------------------------

TEST(FamilyLoadErrors, FixtureFilesNameFileAndPointer) {
  const fs::path bad = kToyDir / "bad";
  const auto err = [&](const char* file) { return spec_error([&] { load_family(bad / file); }); };
  const std::string p = bad.string() + "/";

  std::string msg = err("bad_json.json");
  EXPECT_EQ(msg.rfind(p + "bad_json.json: invalid JSON: parse error at line 3, column", 0), 0u) << msg;

  msg = err("wrong_name.json");
  EXPECT_EQ(msg, p + "wrong_name.json:/name: name 'toy' must equal the file name without .json ('wrong_name')");

  msg = err("unknown_name.json");
  EXPECT_EQ(msg.rfind(p + "unknown_name.json:/constraints/1: unknown name 'BLOCKK' in 'BLOCKK % 64 == 0' (known: ", 0), 0u)
      << msg;

  msg = err("missing_template.json");
  EXPECT_EQ(msg.rfind(p + "missing_template.json:/template: file not found: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("no_such_kernel.cu"), std::string::npos) << msg;

  msg = err("bad_param.json");
  EXPECT_EQ(msg, p + "bad_param.json:/params/BLOCK: expected a non-empty list of ints or strings");

  for (const char* f : {"bad_json.json", "wrong_name.json", "unknown_name.json", "missing_template.json", "bad_param.json"})
    EXPECT_EQ(err(f).find('\n'), std::string::npos) << f;
  EXPECT_NE(spec_error([&] { load_family(bad / "absent.json"); }).find("absent.json: cannot read"), std::string::npos);
}

// ---- malformed specs: one mutation each -------------------------------------------------------

TEST_F(MutatedSpec, UnchangedCopyLoads) { EXPECT_EQ(error_after([](OJson&) {}), "(no SpecError)"); }

TEST_F(MutatedSpec, TopLevel) {
  EXPECT_EQ(error_after([](OJson& j) { j["constraint"] = OJson::array(); }).rfind("F:/constraint: unknown field 'constraint' (known: name,", 0), 0u);
  EXPECT_EQ(error_after([](OJson& j) { j.erase("dims"); }), "F:/dims: missing field 'dims'");
  EXPECT_EQ(error_after([](OJson& j) { j["entry"] = "toy-scale"; }),
            "F:/entry: entry 'toy-scale' is not a valid name (letters, digits, '_')");
  EXPECT_EQ(error_after([](OJson& j) { j["include_dirs"][0] = "/no/such/dir"; }),
            "F:/include_dirs/0: directory not found: /no/such/dir");
  EXPECT_EQ(error_after([](OJson& j) { j["compile_options"] = OJson::array({1}); }),
            "F:/compile_options/0: expected a string, got an integer");
  EXPECT_EQ(error_after([](OJson& j) { j["_comment"] = "ignored"; }), "(no SpecError)");
}

TEST_F(MutatedSpec, Params) {
  EXPECT_EQ(error_after([](OJson& j) { j["params"]["MODE"][1] = 3; }),
            "F:/params/MODE/1: expected a string like the other values, got an integer");
  EXPECT_EQ(error_after([](OJson& j) { j["params"]["VEC"][2] = 1; }), "F:/params/VEC/2: value 1 is listed twice");
  EXPECT_EQ(error_after([](OJson& j) { j["params"]["VEC"] = 4; }),
            "F:/params/VEC: expected a non-empty list of ints or strings");
  EXPECT_EQ(error_after([](OJson& j) { j["params"]["MODE"][0] = "a b"; }),
            "F:/params/MODE/0: value 'a b' must be letters, digits and '_' (it becomes a #define)");
  EXPECT_EQ(error_after([](OJson& j) { j["params"] = OJson::object(); }), "F:/params: expected at least one parameter");
}

TEST_F(MutatedSpec, Dims) {
  EXPECT_EQ(error_after([](OJson& j) { j["dims"]["N"]["type"] = "float"; }),
            "F:/dims/N/type: type must be \"int\" or \"enum\", got 'float'");
  EXPECT_EQ(error_after([](OJson& j) { j["dims"]["N"]["min"] = 10, j["dims"]["N"]["max"] = 5; }),
            "F:/dims/N: min 10 is greater than max 5");
  EXPECT_EQ(error_after([](OJson& j) { j["dims"]["N"]["max"] = 1.5; }), "F:/dims/N/max: expected an integer, got 1.5");
  EXPECT_EQ(error_after([](OJson& j) { j["dims"]["dtype"]["values"] = OJson::array(); }),
            "F:/dims/dtype/values: expected a non-empty list of strings");
  EXPECT_EQ(error_after([](OJson& j) { j["dims"]["VEC"] = {{"type", "int"}}; }),
            "F:/dims/VEC: dimension 'VEC' has the name of a parameter");
  EXPECT_EQ(error_after([](OJson& j) { j["specialize"] = OJson::array({"M"}); }),
            "F:/specialize/0: unknown dimension 'M' (dimensions: N, dtype)");
}

TEST_F(MutatedSpec, ExpressionsAndNames) {
  // A derived value sees only the derived names defined above it.
  EXPECT_EQ(error_after([](OJson& j) { j["derived"]["threads"] = "elems_per_block / VEC"; })
                .rfind("F:/derived/threads: unknown name 'elems_per_block' in 'elems_per_block / VEC'", 0),
            0u);
  EXPECT_EQ(error_after([](OJson& j) { j["derived"]["BLOCK"] = "1"; }),
            "F:/derived/BLOCK: derived name 'BLOCK' is already a parameter, dimension or derived name");
  EXPECT_EQ(error_after([](OJson& j) { j["constraints"][0] = "N %% VEC"; }),
            "F:/constraints/0: in 'N %% VEC': expected a number, name, string or '(', got '%' (at column 4)");
  EXPECT_EQ(error_after([](OJson& j) { j["constraints"][0] = true; }),
            "F:/constraints/0: expected an expression (a string), got a boolean");
  // The reference sees dims and device.* only.
  EXPECT_EQ(error_after([](OJson& j) { j["reference"]["args"][2]["i32"] = "BLOCK"; })
                .rfind("F:/reference/args/2/i32: unknown name 'BLOCK' in 'BLOCK' (known: N, dtype, device.", 0),
            0u);
  EXPECT_EQ(error_after([](OJson& j) { j["launch"]["block"][0] = "thread"; }).rfind("F:/launch/block/0: unknown name 'thread'", 0), 0u);
  EXPECT_EQ(error_after([](OJson& j) { j["launch"]["grid"] = OJson::array({"1", "1", "1", "1"}); }),
            "F:/launch/grid: expected a list of 1 to 3 expressions");
  EXPECT_EQ(error_after([](OJson& j) { j["cost"]["flops"] = "2 * M"; }).rfind("F:/cost/flops: unknown name 'M'", 0), 0u);
  EXPECT_EQ(error_after([](OJson& j) { j["cost"].erase("bytes"); }), "F:/cost: missing field 'bytes'");
  // Rendering has no device, so arch_suffix may not read device.*.
  EXPECT_EQ(error_after([](OJson& j) { j["arch_suffix"] = "device.cc >= 90 ? 'a' : ''"; })
                .rfind("F:/arch_suffix: unknown name 'device.cc'", 0),
            0u);
  // device.* names come from DeviceLimits::add_to.
  EXPECT_EQ(error_after([](OJson& j) { j["constraints"][0] = "BLOCK <= device.max_threadz"; })
                .rfind("F:/constraints/0: unknown name 'device.max_threadz'", 0),
            0u);
}

TEST_F(MutatedSpec, DefaultsSuitesGate) {
  EXPECT_EQ(error_after([](OJson& j) { j["defaults"][0].erase("MODE"); }),
            "F:/defaults/0: missing parameter 'MODE'");
  EXPECT_EQ(error_after([](OJson& j) { j["defaults"][0]["BLOCK"] = 96; }),
            "F:/defaults/0: BLOCK=96 is not in the domain of BLOCK (64, 128, 256)");
  EXPECT_EQ(error_after([](OJson& j) { j["defaults"][0]["WARPS"] = 4; }),
            "F:/defaults/0: unknown parameter 'WARPS' (parameters: BLOCK, VEC, MODE)");
  EXPECT_EQ(error_after([](OJson& j) { j["suites"]["small"][1]["dtype"] = "f64"; }),
            "F:/suites/small/1: dtype=f64 is not one of f16, f32");
  EXPECT_EQ(error_after([](OJson& j) { j["suites"]["small"][0]["N"] = 0; }),
            "F:/suites/small/0: N=0 is out of range [1, 16777216]");
  EXPECT_EQ(error_after([](OJson& j) { j["suites"]["small"][0]["N"] = 1.5; }),
            "F:/suites/small/0/N: expected an int or a string, got a number");
  EXPECT_EQ(error_after([](OJson& j) { j["suites"]["empty"] = OJson::array(); }),
            "F:/suites/empty: expected a non-empty list, got an empty list");
  EXPECT_EQ(error_after([](OJson& j) { j["gate"][0]["override"]["dtype"] = "f32"; }),
            "F:/gate/0/override/dtype: a gate case may not override the specialized dimension 'dtype'");
  EXPECT_EQ(error_after([](OJson& j) { j["gate"][0]["override"]["M"] = 3; }),
            "F:/gate/0/override/M: unknown dimension 'M' (dimensions: N, dtype)");
  EXPECT_EQ(error_after([](OJson& j) { j["gate"][0]["override"]["N"] = -1; }),
            "F:/gate/0/override/N: N=-1 is out of range [1, 16777216]");
  EXPECT_EQ(error_after([](OJson& j) { j["gate"][1]["name"] = "odd"; }), "F:/gate/1/name: gate case 'odd' is defined twice");
  EXPECT_EQ(error_after([](OJson& j) { j["gate"][1]["input_scale"] = 0; }), "F:/gate/1/input_scale: input_scale must be positive");
}

TEST_F(MutatedSpec, BuffersArgsTolerance) {
  EXPECT_EQ(error_after([](OJson& j) { j["args"][1]["buffer"] = "z"; }),
            "F:/args/1/buffer: unknown buffer 'z' (buffers: x, y, blocks_done)");
  EXPECT_EQ(error_after([](OJson& j) { j["args"][1] = {{"buffer", "y"}, {"i32", "N"}}; }),
            "F:/args/1: expected exactly one of \"buffer\", \"i32\", \"i64\", \"f32\", \"tensor_map\"");
  EXPECT_EQ(error_after([](OJson& j) { j["args"][2] = {{"u8", "N"}}; }).rfind("F:/args/2/u8: unknown field 'u8'", 0), 0u);
  EXPECT_EQ(error_after([](OJson& j) { j["buffers"][1]["role"] = "inout"; }),
            "F:/buffers/1/role: role must be \"input\", \"output\" or \"scratch\", got 'inout'");
  EXPECT_EQ(error_after([](OJson& j) { j["buffers"][1]["role"] = "input"; }),
            "F:/buffers: no buffer has role \"output\": the gate would compare nothing");
  EXPECT_EQ(error_after([](OJson& j) { j["buffers"][2]["dtype"] = "'f8'"; }).rfind("F:/buffers/2/dtype: dtype 'f8' is not one of", 0), 0u);
  EXPECT_EQ(error_after([](OJson& j) { j["buffers"][1]["init"] = {{"lo", 0}, {"hi", 1}}; }),
            "F:/buffers/1/init: only input buffers take an init range");
  EXPECT_EQ(error_after([](OJson& j) { j["buffers"][0]["init"]["hi"] = -3; }), "F:/buffers/0/init: lo must be less than hi");
  EXPECT_EQ(error_after([](OJson& j) { j["buffers"][2]["name"] = "x"; }), "F:/buffers/2/name: buffer 'x' is defined twice");
  EXPECT_EQ(error_after([](OJson& j) { j["tolerance"].erase("default"); }),
            "F:/tolerance: no entry for dtype 'f32' and no \"default\"");
  EXPECT_EQ(error_after([](OJson& j) { j["tolerance"]["fp16"] = j["tolerance"]["f16"]; }),
            "F:/tolerance/fp16: key 'fp16' is neither \"default\" nor a value of the dimension dtype (f16, f32)");
  EXPECT_EQ(error_after([](OJson& j) { j["tolerance"]["f16"].erase("rel_l2"); }), "F:/tolerance/f16: missing field 'rel_l2'");
  EXPECT_EQ(error_after([](OJson& j) { j["reference"]["template"] = "/no/such/ref.cu"; }),
            "F:/reference/template: file not found: /no/such/ref.cu");
}

TEST_F(MutatedSpec, TensorMapArgs) {
  // Appended to the toy's kernel args as argument 4.
  const auto with_map = [&](const std::function<void(OJson&)>& change) {
    return error_after([&](OJson& j) {
      OJson map = {{"tensor_map", "x"}, {"dims", {"N"}}, {"box", {"64"}}, {"swizzle", 128}};
      change(map);
      j["args"].push_back(map);
    });
  };
  EXPECT_EQ(with_map([](OJson&) {}), "(no SpecError)");
  EXPECT_EQ(with_map([](OJson& m) { m.erase("swizzle"); }), "(no SpecError)");  // defaults to 0
  EXPECT_EQ(with_map([](OJson& m) { m["tensor_map"] = "z"; }),
            "F:/args/4/tensor_map: unknown buffer 'z' (buffers: x, y, blocks_done)");
  EXPECT_EQ(with_map([](OJson& m) { m["box"] = {"64", "1"}; }),
            "F:/args/4/box: expected a list of one expression per entry of dims (1), got 2");
  EXPECT_EQ(with_map([](OJson& m) { m["box"] = "64"; }),
            "F:/args/4/box: expected a list of one expression per entry of dims (1), got a string");
  EXPECT_EQ(with_map([](OJson& m) { m["swizzle"] = 48; }),
            "F:/args/4/swizzle: swizzle must be 0, 32, 64 or 128 (bytes), got 48");
  EXPECT_EQ(with_map([](OJson& m) { m["swizzle"] = "128"; }), "F:/args/4/swizzle: expected an integer, got a string");
  EXPECT_EQ(with_map([](OJson& m) { m.erase("dims"); }), "F:/args/4: missing field 'dims'");
  EXPECT_EQ(with_map([](OJson& m) { m.erase("box"); }), "F:/args/4: missing field 'box'");
  EXPECT_EQ(with_map([](OJson& m) { m["stride"] = {"1"}; }),
            "F:/args/4/stride: unknown field 'stride' (known: tensor_map, dims, box, swizzle)");
  EXPECT_EQ(with_map([](OJson& m) { m["dims"] = OJson::array(); }),
            "F:/args/4/dims: expected a list of 1 to 5 expressions (innermost dimension first)");
  EXPECT_EQ(with_map([](OJson& m) { m["dims"] = {"1", "1", "1", "1", "1", "N"}; }),
            "F:/args/4/dims: expected a list of 1 to 5 expressions (innermost dimension first)");
  EXPECT_EQ(
      with_map([](OJson& m) { m["dims"] = {"M"}; }).rfind("F:/args/4/dims/0: unknown name 'M' in 'M' (known: ", 0),
      0u);
  EXPECT_EQ(with_map([](OJson& m) { m["box"] = {"BLOCK *"}; }).rfind("F:/args/4/box/0: in 'BLOCK *': ", 0), 0u);
  EXPECT_EQ(with_map([](OJson& m) { m["_note"] = "comments are allowed"; }), "(no SpecError)");
  // Another kind's key next to a tensor map's is an unknown field of the tensor map.
  EXPECT_EQ(with_map([](OJson& m) { m["buffer"] = "x"; }).rfind("F:/args/4/buffer: unknown field 'buffer'", 0), 0u);
  // The reference sees dims and device.* only, in a tensor map as anywhere.
  EXPECT_EQ(error_after([](OJson& j) {
              j["reference"]["args"].push_back({{"tensor_map", "x"}, {"dims", {"N"}}, {"box", {"BLOCK"}}});
            }).rfind("F:/reference/args/4/box/0: unknown name 'BLOCK'", 0),
            0u);
}

TEST(FamilyLoad, TensorMapFixture) {
  const Family f = load_family(fs::path(KFORGE_TEST_DIR) / "families" / "tma_fixture" / "tma_fixture.json");
  ASSERT_EQ(f.kernel.args.size(), 6u);
  const ArgSpec& m = f.kernel.args[0];
  EXPECT_EQ(m.kind, ArgSpec::Kind::TensorMap);
  EXPECT_EQ(m.buffer, "X");
  ASSERT_EQ(m.dims.size(), 3u);
  ASSERT_EQ(m.box.size(), 3u);
  EXPECT_EQ(m.dims[2].text(), "B");
  EXPECT_EQ(m.box[0].text(), "box_c");
  EXPECT_EQ(m.swizzle, 128);
  EXPECT_EQ(f.kernel.args[1].kind, ArgSpec::Kind::Buffer);
  const Scope s = make_scope(f, {{"BOX_R", I(16)}, {"THREADS", I(128)}}, parse_shape(f, "B=2,R=64,C=256,dtype=f32"),
                             DeviceLimits::for_arch("sm_90"));
  EXPECT_EQ(m.box[0].eval_int(s), 32);  // 128 bytes of f32
  EXPECT_EQ(m.dims[0].eval_int(s), 256);
}

// ---- shapes and configs -------------------------------------------------------------------------

TEST(FamilyShape, ParseValid) {
  EXPECT_EQ(parse_shape(toy(), "N=4096,dtype=f16"), shape(4096, "f16"));
  EXPECT_EQ(parse_shape(toy(), " dtype = f32 , N = 7 "), shape(7, "f32"));
  EXPECT_EQ(validate_shape(toy(), shape(1, "f16")), shape(1, "f16"));
}

TEST(FamilyShape, ParseErrorsAreSpecific) {
  const auto err = [](const char* text) { return spec_error([&] { parse_shape(toy(), text); }); };
  EXPECT_EQ(err("N=4096,dtype=f16,M=3"),
            "bad shape 'N=4096,dtype=f16,M=3' for family toy: unknown dimension 'M' (dimensions: N, dtype)");
  EXPECT_EQ(err("N=4096"), "bad shape 'N=4096' for family toy: missing dimension 'dtype' (dimensions: N, dtype)");
  EXPECT_EQ(err("N=0,dtype=f16"), "bad shape 'N=0,dtype=f16' for family toy: N=0 is out of range [1, 16777216]");
  EXPECT_EQ(err("N=99999999,dtype=f16"),
            "bad shape 'N=99999999,dtype=f16' for family toy: N=99999999 is out of range [1, 16777216]");
  EXPECT_EQ(err("N=4k,dtype=f16"), "bad shape 'N=4k,dtype=f16' for family toy: dimension 'N' needs an integer, got '4k'");
  EXPECT_EQ(err("N=8,dtype=bf16"), "bad shape 'N=8,dtype=bf16' for family toy: dtype=bf16 is not one of f16, f32");
  EXPECT_NE(err("N8,dtype=f16").find("expected NAME=VALUE"), std::string::npos);
}

TEST(FamilyShape, EnumValuesThatLookLikeNumbers) {
  Family f = toy();
  f.dims.push_back(DimSpec{"causal", true, {"0", "1"}, 1, INT64_MAX, ""});
  // "causal=1" parses as the integer 1; the enum value is the text "1".
  EXPECT_EQ(parse_shape(f, "N=8,dtype=f16,causal=1").at("causal"), S("1"));
  EXPECT_THROW(parse_shape(f, "N=8,dtype=f16,causal=2"), SpecError);
}

TEST(FamilyConfig, ValidateConfig) {
  EXPECT_EQ(validate_config(toy(), cfg(64, 4, "unrolled")), cfg(64, 4, "unrolled"));
  const auto err = [](const Config& c) { return spec_error([&] { validate_config(toy(), c); }); };
  Config extra = cfg(64, 4, "plain");
  extra["WARPS"] = I(2);
  EXPECT_EQ(err(extra), "bad config 'BLOCK=64,MODE=plain,VEC=4,WARPS=2' for family toy: unknown parameter 'WARPS' "
                        "(parameters: BLOCK, VEC, MODE)");
  EXPECT_EQ(err(cfg(64, 3, "plain")),
            "bad config 'BLOCK=64,MODE=plain,VEC=3' for family toy: VEC=3 is not in the domain of VEC (1, 2, 4)");
  EXPECT_EQ(err(cfg(64, 2, "fancy")),
            "bad config 'BLOCK=64,MODE=fancy,VEC=2' for family toy: MODE=fancy is not in the domain of MODE (plain, unrolled)");
  EXPECT_EQ(err({{"BLOCK", I(64)}, {"VEC", I(2)}}), "bad config 'BLOCK=64,VEC=2' for family toy: missing parameter 'MODE'");
  EXPECT_EQ(err({{"BLOCK", S("64")}, {"VEC", I(2)}, {"MODE", S("plain")}}),
            "bad config 'BLOCK=64,MODE=plain,VEC=2' for family toy: BLOCK=64 is not in the domain of BLOCK (64, 128, 256)");
}

TEST(FamilyShape, Suites) {
  EXPECT_EQ(suite_shapes(toy(), "default").size(), 1u);
  EXPECT_EQ(suite_shapes(toy(), "small")[0], shape(1000, "f32"));
  EXPECT_EQ(spec_error([] { suite_shapes(toy(), "large"); }),
            "family toy has no suite 'large' (suites: default, small)");
}

TEST(FamilyShape, GateShapes) {
  const auto gates = gate_shapes(toy(), shape(4096, "f16"));
  ASSERT_EQ(gates.size(), 3u);
  EXPECT_EQ(gates[0].first.name, "campaign");
  EXPECT_DOUBLE_EQ(gates[0].first.input_scale, 1.0);
  EXPECT_EQ(gates[0].second, shape(4096, "f16"));
  EXPECT_EQ(gates[1].first.name, "odd");
  EXPECT_EQ(gates[1].second, shape(1001, "f16"));  // the specialized dtype is kept
  EXPECT_EQ(gates[2].first.name, "large_inputs");
  EXPECT_DOUBLE_EQ(gates[2].first.input_scale, 100.0);
  EXPECT_EQ(gates[2].second, shape(4096, "f16"));

  Family f = toy();
  f.gate.push_back(GateCase{"impossible", {{"N", I(0)}}, 1.0});  // skipped: N=0 is out of range
  EXPECT_EQ(gate_shapes(f, shape(64, "f32")).size(), 3u);
}

// ---- scopes, constraints, spaces ----------------------------------------------------------------

TEST(FamilyScope, OrderAndContents) {
  const DeviceLimits h100 = DeviceLimits::for_arch("sm_90");
  const Scope s = make_scope(toy(), cfg(128, 2, "plain"), shape(4096, "f16"), h100);
  EXPECT_EQ(s.at("BLOCK"), I(128));
  EXPECT_EQ(s.at("dtype"), S("f16"));
  EXPECT_EQ(s.at("device.smem_optin"), I(232448));
  EXPECT_EQ(s.at("device.cc"), I(90));
  EXPECT_EQ(s.at("threads"), I(128));
  EXPECT_EQ(s.at("elems_per_block"), I(256));
  EXPECT_EQ(s.at("smem_bytes"), I(512));  // 256 elements * 2 bytes

  const Scope r = make_reference_scope(toy(), shape(4096, "f16"), h100);
  EXPECT_EQ(r.count("BLOCK"), 0u);
  EXPECT_EQ(r.count("smem_bytes"), 0u);
  EXPECT_EQ(r.at("N"), I(4096));
  EXPECT_EQ(r.at("device.sm_count"), I(132));
}

TEST(FamilyScope, ViolatedConstraintNamesTheFirstFailure) {
  const DeviceLimits h100 = DeviceLimits::for_arch("sm_90");
  EXPECT_EQ(violated_constraint(toy(), cfg(64, 2, "plain"), shape(4096, "f16"), h100), std::nullopt);
  EXPECT_EQ(violated_constraint(toy(), cfg(64, 2, "plain"), shape(1001, "f16"), h100), "N % VEC == 0");
  // Both the first and second constraints fail; the first is reported.
  EXPECT_EQ(violated_constraint(toy(), cfg(64, 1, "unrolled"), shape(4096, "f16"), h100), "MODE == 'plain' || VEC >= 2");

  DeviceLimits tiny = h100;
  tiny.smem_optin = 100;
  EXPECT_EQ(violated_constraint(toy(), cfg(64, 1, "plain"), shape(4096, "f32"), tiny), "smem_bytes <= device.smem_optin");

  // An expression that fails to evaluate is the spec's error, not a violation
  // (test_spec_errors.cpp has the rest).
  Family f = toy();
  const std::string text = "N / (VEC - 1) > 0";
  f.constraints.insert(f.constraints.begin(), Constraint{text, Expr::parse(text)});
  EXPECT_NE(spec_error([&] { violated_constraint(f, cfg(64, 1, "plain"), shape(4096, "f16"), h100); })
                .find(":/constraints/0: in 'N / (VEC - 1) > 0': division by zero (at column 3), for config "
                      "BLOCK=64,MODE=plain,VEC=1 at shape N=4096,dtype=f16 on sm_90"),
            std::string::npos);
}

// The enumeration prunes prefixes with the constraints they already decide; it must find
// exactly the configs that a check of every point of the product finds.
namespace {
void expect_pruned_equals_filtered(const Family& f, const char* arch, const char* shape_text) {
  const DeviceLimits dev = DeviceLimits::for_arch(arch);
  const Shape s = parse_shape(f, shape_text);
  const SearchSpace space = make_space(f, s, dev);
  const SearchSpace unpruned(f.params, [&](const Config& c) { return !violated_constraint(f, c, s, dev); });
  EXPECT_EQ(space.enumerate_valid(), unpruned.enumerate_valid()) << arch << " " << shape_text;
  EXPECT_FALSE(space.enumerate_valid().empty());
}
}  // namespace


// The gemm family's pre-Hopper paths keep the space they had before the wgmma path joined it (counted in
// docs/perf_notes_gemm.md: 1547 configs on sm_90, 1355 on sm_89 at 4096^3), sm_89 has no wgmma config, and
// the wgmma rules hold: whole consumer warpgroups of 64 or 128 rows, at most 192 accumulator registers,
// BLOCK_K 64, two slots at least, N and K multiples of 8 (TMA's 16-byte row strides).
TEST(GemmSpace, PreHopperSpaceIsUnchangedAndTheWgmmaRulesHold) {
  const Family gemm = load_family(fs::path(KFORGE_TEST_DIR) / "../search_spaces/gemm.json");
  const Shape s4096 = parse_shape(gemm, "M=4096,N=4096,K=4096,dtype=f16");
  const auto count = [&](const char* arch, const Shape& s, bool wgmma) {
    size_t n = 0;
    for (const auto& c : make_space(gemm, s, DeviceLimits::for_arch(arch)).enumerate_valid())
      n += (std::get<std::string>(c.at("MMA")) == "wgmma") == wgmma;
    return n;
  };
  EXPECT_EQ(count("sm_90", s4096, false), 1547u);
  EXPECT_EQ(count("sm_89", s4096, false), 1355u);
  EXPECT_EQ(count("sm_89", s4096, true), 0u);
  EXPECT_GT(count("sm_90", s4096, true), 100u);
  // K = 98 (the odd_all gate case) and N = 130: no TMA map; N = 136, K = 1032 (odd_m_ktail): yes
  EXPECT_EQ(count("sm_90", parse_shape(gemm, "M=257,N=130,K=98,dtype=f16"), true), 0u);
  EXPECT_GT(count("sm_90", parse_shape(gemm, "M=257,N=136,K=1032,dtype=f16"), true), 100u);

  Config base;
  for (const auto& c : gemm.defaults)
    if (std::get<std::string>(c.at("MMA")) == "wgmma") {
      base = c;
      break;
    }
  ASSERT_FALSE(base.empty());
  const DeviceLimits h100 = DeviceLimits::for_arch("sm_90");
  ASSERT_FALSE(violated_constraint(gemm, base, s4096, h100)) << to_string(base);
  for (const char* change : {"CONSUMERS=1,BLOCK_M=128,BLOCK_N=256",  // 256 accumulator registers
                             "CONSUMERS=2,BLOCK_M=64",                // half a warpgroup's rows
                             "BLOCK_M=32", "BLOCK_N=32", "BLOCK_K=32", "STAGES=1",
                             "STAGES=5",                              // 5 x 48 KiB > 227 KiB
                             "WARPS_M=2", "VEC=4"}) {
    Config c = base;
    for (const auto& [name, value] : parse_assignment(change)) c[name] = value;
    EXPECT_TRUE(violated_constraint(gemm, c, s4096, h100)) << change;
  }
  // the pre-Hopper paths keep their one value of the wgmma-only parameters
  Config mma = gemm.defaults.back();
  ASSERT_NE(std::get<std::string>(mma.at("MMA")), "wgmma");
  ASSERT_FALSE(violated_constraint(gemm, mma, s4096, h100)) << to_string(mma);
  for (const char* change : {"CONSUMERS=2", "PERSIST=1", "RASTER=n", "GROUP=4", "STAGES=5", "BLOCK_N=192"}) {
    Config c = mma;
    for (const auto& [name, value] : parse_assignment(change)) c[name] = value;
    EXPECT_TRUE(violated_constraint(gemm, c, s4096, h100)) << change;
  }
}

// The same on the attention family, whose constraints read derived values, dims and device.*; a few domains
// are narrowed so that the pruned enumeration stays small. The walk over the whole product (~1e7 configs per
// shape, ~8 minutes on two cores) runs where KFORGE_SLOW_TESTS=1; by default every config the pruned walk lists
// is checked valid, and a fixed seeded sample of the product must be listed exactly when it is valid.
namespace {
Family narrowed_attention() {
  Family sdpa = load_family(fs::path(KFORGE_TEST_DIR) / "../search_spaces/sdpa_fwd.json");
  const std::map<std::string, std::vector<Value>> narrow = {
      {"BLOCK_M", {int64_t{64}, int64_t{128}}}, {"BLOCK_N", {int64_t{64}, int64_t{128}}},
      {"STAGES", {int64_t{2}, int64_t{4}}},     {"VEC", {int64_t{8}}},
      {"WARPS", {int64_t{4}, int64_t{8}}},      {"MIN_BLOCKS", {int64_t{1}}},
      {"LAYOUT", {std::string("swizzled"), std::string("padded")}},
      // values the constraints treat alike narrowed to one (range ~ pingpong, cluster ~ push,
      // 4 ~ 2 for WARPS_N, KV_SPLITS and KV_MCAST), so the product stays ~1e7 per shape
      {"WN_KEYS", {std::string("tile"), std::string("pingpong")}},
      {"KV_MERGE", {std::string("gmem"), std::string("push")}}, {"LAZY_RESCALE", {int64_t{1}}},
      {"WARPS_N", {int64_t{1}, int64_t{2}}}, {"KV_SPLITS", {int64_t{1}, int64_t{2}}},
      {"KV_MCAST", {int64_t{1}, int64_t{2}}},
      // f32 is constrained by nothing; pair and poly are constrained differently
      {"EXP2", {std::string("pair"), std::string("poly")}}};
  for (auto& p : sdpa.params)
    if (auto it = narrow.find(p.name); it != narrow.end()) {
      p.values = it->second;
      p.weights.clear();  // the prior's weights are per value of the full domain
    }
  return sdpa;
}

// sm_89 rejects the TMA ring, multicast and row ping-pong; one value each keeps that product small.
void narrow_for_sm89(Family& sdpa) {
  for (auto& p : sdpa.params)
    if (p.name == "KV_LOAD" || p.name == "KV_MCAST" || p.name == "WG_PINGPONG") {
      p.values.resize(1);
      p.weights.clear();
    }
}

void expect_pruned_agrees_on_a_sample(const Family& f, const char* arch, const char* shape_text, size_t draws) {
  const DeviceLimits dev = DeviceLimits::for_arch(arch);
  const Shape s = parse_shape(f, shape_text);
  const auto valid = [&](const Config& c) { return !violated_constraint(f, c, s, dev); };
  const std::vector<Config> listed = make_space(f, s, dev).enumerate_valid();
  ASSERT_FALSE(listed.empty()) << arch << " " << shape_text;
  const std::set<Config> listed_set(listed.begin(), listed.end());
  EXPECT_EQ(listed_set.size(), listed.size()) << "a config listed twice";
  for (const auto& c : listed) ASSERT_TRUE(valid(c)) << arch << " " << shape_text << ": listed but invalid";
  std::mt19937_64 rng(0x5eed);
  size_t valid_draws = 0;
  for (size_t i = 0; i < draws; ++i) {
    Config c;
    for (const auto& p : f.params) c[p.name] = p.values[rng() % p.values.size()];
    const bool ok = valid(c);
    valid_draws += ok;
    ASSERT_EQ(ok, listed_set.count(c) == 1) << arch << " " << shape_text << ": draw " << i
                                            << (ok ? " valid but not listed" : " listed but invalid");
  }
  // the sample must reach valid configs, or it checks only that invalid ones are not listed
  EXPECT_GT(valid_draws, 20u) << arch << " " << shape_text;
}
}  // namespace

// The gemm product (~1e6 configs since the wgmma path joined) is walked whole where KFORGE_SLOW_TESTS=1 (~70 s
// on two cores); by default the seeded sample checks the same agreement.
TEST(FamilySpace, PrunedEnumerationAgreesWithTheConstraintsOnSampledGemmConfigs) {
  const Family gemm = load_family(fs::path(KFORGE_TEST_DIR) / "../search_spaces/gemm.json");
  expect_pruned_agrees_on_a_sample(gemm, "sm_90", "M=1000,N=4096,K=4096,dtype=f16", 100000);
  // sm_89 admits the Hopper path's parameters at one value each (its first): narrowed there, the sample
  // reaches valid configs of the other paths often enough to check them
  Family sm89 = gemm;
  for (auto& p : sm89.params)
    if (p.name == "CONSUMERS" || p.name == "PERSIST" || p.name == "RASTER" || p.name == "GROUP" ||
        p.name == "CLUSTER" || p.name == "SPLIT_K") {
      p.values.resize(1);
      p.weights.clear();
    }
  expect_pruned_agrees_on_a_sample(sm89, "sm_89", "M=4096,N=4096,K=4096,dtype=f32", 60000);
}

TEST(FamilySpace, PrunedEnumerationEqualsTheFilteredProduct) {
  const char* slow = std::getenv("KFORGE_SLOW_TESTS");
  if (!slow || std::string(slow) != "1") GTEST_SKIP() << "walks ~1e6 gemm configs (~70 s): set KFORGE_SLOW_TESTS=1";
  const Family gemm = load_family(fs::path(KFORGE_TEST_DIR) / "../search_spaces/gemm.json");
  expect_pruned_equals_filtered(gemm, "sm_90", "M=1000,N=4096,K=4096,dtype=f16");
  expect_pruned_equals_filtered(gemm, "sm_89", "M=4096,N=4096,K=4096,dtype=f32");
}

TEST(FamilySpace, PrunedEnumerationAgreesWithTheConstraintsOnSampledAttentionConfigs) {
  Family sdpa = narrowed_attention();
  expect_pruned_agrees_on_a_sample(sdpa, "sm_90", "B=2,H=8,S=512,D=64,causal=1,dtype=bf16", 150000);
  narrow_for_sm89(sdpa);
  // grouped-query (2 query heads over 1 K/V head), so PACK_GQA=1 draws can be valid too
  expect_pruned_agrees_on_a_sample(sdpa, "sm_89", "B=1,H=2,Hkv=1,S=77,D=64,causal=0,dtype=bf16", 50000);
}

TEST(FamilySpace, PrunedEnumerationEqualsTheFilteredProductOnAttention) {
  const char* slow = std::getenv("KFORGE_SLOW_TESTS");
  if (!slow || std::string(slow) != "1") GTEST_SKIP() << "walks ~1e7 configs (~8 min): set KFORGE_SLOW_TESTS=1";
  Family sdpa = narrowed_attention();
  // sm_90, D 64: the TMA ring, multicast and row ping-pong are valid there
  expect_pruned_equals_filtered(sdpa, "sm_90", "B=2,H=8,S=512,D=64,causal=1,dtype=bf16");
  narrow_for_sm89(sdpa);
  expect_pruned_equals_filtered(sdpa, "sm_89", "B=1,H=2,S=77,D=64,causal=0,dtype=bf16");
}

TEST(FamilySpace, ValidCountsMatchHandCounts) {
  const DeviceLimits h100 = DeviceLimits::for_arch("sm_90");
  // 3 BLOCK x 3 VEC x 2 MODE = 18; unrolled needs VEC >= 2, which removes 3 configs.
  const SearchSpace big = make_space(toy(), shape(4096, "f16"), h100);
  EXPECT_EQ(big.cardinality(), 18u);
  EXPECT_EQ(big.enumerate_valid().size(), 15u);
  EXPECT_EQ(big.enumerate_valid().front(), cfg(64, 1, "plain"));
  // N odd: VEC must be 1, so only plain: 3 configs.
  EXPECT_EQ(make_space(toy(), shape(1001, "f16"), h100).enumerate_valid().size(), 3u);
  // N = 1002: VEC 1 or 2: plain 3*2 + unrolled 3*1 = 9.
  EXPECT_EQ(make_space(toy(), shape(1002, "f16"), h100).enumerate_valid().size(), 9u);
  // smem limit 512 bytes with f32: BLOCK*VEC <= 128 -> (64,1), (64,2), (128,1) plain + (64,2) unrolled.
  DeviceLimits tiny = h100;
  tiny.smem_optin = 512;
  EXPECT_EQ(make_space(toy(), shape(4096, "f32"), tiny).enumerate_valid().size(), 4u);
  // max_threads 64: BLOCK = 64 only: plain 3 + unrolled 2.
  DeviceLimits narrow = h100;
  narrow.max_threads = 64;
  EXPECT_EQ(make_space(toy(), shape(4096, "f16"), narrow).enumerate_valid().size(), 5u);
}

TEST(FamilySpace, OutlivesTheFamilyItWasMadeFrom) {
  std::optional<SearchSpace> space;
  {
    const Family copy = toy();
    space.emplace(make_space(copy, shape(4096, "f16"), DeviceLimits::for_arch("sm_90")));
  }
  EXPECT_EQ(space->enumerate_valid().size(), 15u);
}

// ---- launches -----------------------------------------------------------------------------------

TEST(FamilyLaunch, ResolvesKernelAndReference) {
  const DeviceLimits h100 = DeviceLimits::for_arch("sm_90");
  const ResolvedLaunch k =
      resolve_launch(toy().kernel.launch, make_scope(toy(), cfg(128, 2, "plain"), shape(4097, "f16"), h100));
  EXPECT_EQ(k.grid, (std::array<unsigned, 3>{17, 1, 1}));  // ceil(4097 / 256)
  EXPECT_EQ(k.block, (std::array<unsigned, 3>{128, 1, 1}));
  EXPECT_EQ(k.smem, 512u);
  const ResolvedLaunch r = resolve_launch(toy().reference.launch, make_reference_scope(toy(), shape(4097, "f16"), h100));
  EXPECT_EQ(r.grid, (std::array<unsigned, 3>{17, 1, 1}));
  EXPECT_EQ(r.block, (std::array<unsigned, 3>{256, 1, 1}));
  EXPECT_EQ(r.smem, 0u);
}

TEST(FamilyLaunch, RejectsEmptyOrNegativeExtents) {
  LaunchSpec l;
  l.grid = {Expr::parse("N - N"), Expr::parse("1"), Expr::parse("1")};
  l.block = {Expr::parse("32"), Expr::parse("1"), Expr::parse("1")};
  const Scope s{{"N", I(5)}};
  try {
    resolve_launch(l, s);
    FAIL() << "expected ExprError";
  } catch (const ExprError& e) {
    EXPECT_EQ(std::string(e.what()), "in 'N - N': grid.x = 0 is out of range [1, 4294967295]");
  }
  l.grid[0] = Expr::parse("1");
  l.smem = Expr::parse("-N");
  EXPECT_THROW(resolve_launch(l, s), ExprError);
  l.smem = Expr::parse("2.5");
  EXPECT_THROW(resolve_launch(l, s), ExprError);
  l.smem = Expr();  // unset: no dynamic shared memory
  EXPECT_EQ(resolve_launch(l, s).smem, 0u);
}

// ---- devices ------------------------------------------------------------------------------------

TEST(DeviceLimitsTable, KnownArchitectures) {
  const DeviceLimits h = DeviceLimits::for_arch("sm_90");
  EXPECT_EQ(h.arch(), "sm_90");
  EXPECT_EQ(h.cc(), 90);
  EXPECT_EQ(h.sm_count, 132);
  EXPECT_EQ(h.smem_optin, 232448);
  EXPECT_EQ(h.smem_per_sm, 233472);
  EXPECT_EQ(h.regs_per_block, 65536);
  EXPECT_EQ(h.l2_bytes, 50LL * 1024 * 1024);
  EXPECT_EQ(h.max_threads, 1024);
  EXPECT_EQ(DeviceLimits::for_arch("sm_90a").smem_optin, 232448);
  const DeviceLimits l4 = DeviceLimits::for_arch("sm_89");
  EXPECT_EQ(l4.arch(), "sm_89");
  EXPECT_EQ(l4.sm_count, 58);
  EXPECT_EQ(l4.smem_optin, 101376);
  EXPECT_EQ(l4.smem_per_sm, 102400);
  EXPECT_EQ(DeviceLimits::for_arch("sm_80").sm_count, 108);
  EXPECT_EQ(DeviceLimits::for_arch("sm_80").smem_optin, 166912);
  EXPECT_EQ(DeviceLimits::for_arch("sm_86").smem_optin, 99 * 1024);
  EXPECT_EQ(spec_error([] { DeviceLimits::for_arch("sm_75"); }),
            "unknown architecture 'sm_75' (known: sm_80, sm_86, sm_89, sm_90, sm_100, sm_120)");
}

TEST(DeviceLimitsTable, ScopeNames) {
  Scope s;
  DeviceLimits::for_arch("sm_89").add_to(s);
  std::vector<std::string> names;
  for (const auto& [n, v] : s) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"device.cc", "device.l2_bytes", "device.max_threads", "device.regs_per_block",
                                              "device.sm_count", "device.smem_optin", "device.smem_per_block"}));
  EXPECT_EQ(s.at("device.cc"), I(89));
  EXPECT_EQ(s.at("device.smem_per_block"), I(48 * 1024));
}
