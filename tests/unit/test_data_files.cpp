// Buffers filled from raw files and outputs compared with given values (`init.file`,
// `expected`, `compare` in a spec: what kforge.tune_kernel's Kernel Tuner arguments and answers
// become): what the loader accepts and refuses, and the raw reads the gate makes.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "family/buffers.hpp"
#include "family/family.hpp"

using namespace kf;
namespace fs = std::filesystem;
using OJson = nlohmann::ordered_json;

namespace {

const fs::path kToyDir = fs::path(KFORGE_TEST_DIR) / "families" / "toy";

class DataFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kforge_data_files_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    for (const char* f : {"kernel.cu", "reference.cu", "local.cuh", "include"})
      fs::copy(kToyDir / f, dir_ / f, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    write_floats("x.bin", {1, 2, 3, 4});
    write_floats("y.bin", {0.5f, 1, 1.5f, 2});
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write_floats(const char* name, const std::vector<float>& v) {
    std::ofstream(dir_ / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  }

  // The toy spec with f32 buffers of N elements and the given buffer fields merged in.
  fs::path spec(const OJson& x_extra, const OJson& y_extra) {
    std::ifstream in(kToyDir / "toy.json");
    std::stringstream ss;
    ss << in.rdbuf();
    OJson j = OJson::parse(ss.str());
    j["name"] = "data";
    j["include_dirs"] = OJson::array({"include"});
    j["buffers"][0] = {{"name", "x"}, {"dtype", "'f32'"}, {"count", "N"}, {"role", "input"}};
    j["buffers"][1] = {{"name", "y"}, {"dtype", "'f32'"}, {"count", "N"}, {"role", "output"}};
    for (const auto& [k, v] : x_extra.items()) j["buffers"][0][k] = v;
    for (const auto& [k, v] : y_extra.items()) j["buffers"][1][k] = v;
    const fs::path p = dir_ / "data.json";
    std::ofstream(p) << j.dump(2);
    return p;
  }

  std::string error(const OJson& x_extra, const OJson& y_extra) {
    try {
      load_family(spec(x_extra, y_extra));
    } catch (const SpecError& e) {
      const std::string msg = e.what();
      const size_t at = msg.find(":/");
      return at == std::string::npos ? msg : msg.substr(at + 1);
    }
    return "(no SpecError)";
  }

  fs::path dir_;
};

}  // namespace

TEST_F(DataFiles, LoaderResolvesFilesAgainstTheSpecFolder) {
  const Family f = load_family(spec({{"init", {{"file", "x.bin"}}}},
                                    {{"init", {{"file", "y.bin"}}}, {"expected", "y.bin"}}));
  EXPECT_EQ(f.buffers[0].init.file, fs::canonical(dir_ / "x.bin"));
  EXPECT_EQ(f.buffers[1].init.file, fs::canonical(dir_ / "y.bin"));
  EXPECT_EQ(f.buffers[1].expected, fs::canonical(dir_ / "y.bin"));
  EXPECT_TRUE(f.buffers[1].compare);
  const Family g = load_family(spec({}, {{"compare", false}}));
  EXPECT_FALSE(g.buffers[1].compare);
  EXPECT_TRUE(g.buffers[0].init.file.empty());
  EXPECT_TRUE(g.buffers[1].expected.empty());
}

TEST_F(DataFiles, LoaderRefusesMisplacedFields) {
  EXPECT_EQ(error({{"expected", "x.bin"}}, {}), "/buffers/0/expected: only output buffers take \"expected\" or \"compare\"");
  EXPECT_EQ(error({}, {{"init", {{"lo", 0}, {"hi", 1}}}}), "/buffers/1/init: only input buffers take an init range");
  EXPECT_EQ(error({{"init", {{"file", "x.bin"}, {"lo", 0}}}}, {}),
            "/buffers/0/init: either a file or a range (lo, hi), not both");
  EXPECT_EQ(error({}, {{"compare", false}, {"expected", "y.bin"}}),
            "/buffers/1/expected: an output with \"compare\": false has nothing to compare with");
  EXPECT_EQ(error({}, {{"compare", 1}}), "/buffers/1/compare: expected true or false");
  EXPECT_NE(error({{"init", {{"file", "missing.bin"}}}}, {}).find("/buffers/0/init/file"), std::string::npos);
  // A data file lies where a template may: nowhere else can the gate be made to read.
  EXPECT_NE(error({{"init", {{"file", "/etc/hostname"}}}}, {}).find("/buffers/0/init/file: data file"), std::string::npos);
}

TEST_F(DataFiles, RawReadsCheckTheSize) {
  const auto bytes = read_raw_file((dir_ / "x.bin").string(), DType::F32, 4);
  EXPECT_EQ(to_floats(DType::F32, bytes.data(), 4), (std::vector<float>{1, 2, 3, 4}));
  try {
    read_raw_file((dir_ / "x.bin").string(), DType::F32, 5);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("16 bytes, expected 20 (5 f32 elements)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_raw_file((dir_ / "none.bin").string(), DType::I32, 1), std::runtime_error);
}
