// Results per device: best and export answer for one device (--device), name it in a column, and choose a
// stored device by its name or a part of it; refresh --from-device takes another device's top configs.
#include <gtest/gtest.h>

#include <filesystem>

#include "campaign/refresh.hpp"
#include "cli/device_choice.hpp"
#include "cli_run.hpp"
#include "family/family.hpp"
#include "store/store.hpp"
#include "test_dir.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kFamilies = fs::path(KFORGE_TEST_DIR) / "families";

// One ok vecadd result at N=4096,dtype=f16 of `device`, at `us` with BLOCK=`block`.
void add_result(kf::Store& store, const kf::DeviceKey& device, double us, int64_t block) {
  kf::EvaluationRecord e;
  e.family = "vecadd";
  e.config = {{"BLOCK", block}, {"VEC", int64_t{2}}, {"BUG", std::string("none")}, {"SMEM_KB", int64_t{0}}};
  e.shape = {{"N", int64_t{4096}}, {"dtype", std::string("f16")}};
  e.device = device;
  e.status = kf::Status::Ok;
  e.timing = kf::TimingStats{};
  e.timing->median_us = us;
  e.timing->reps = 10;
  store.add_evaluation(e);
}

const kf::DeviceKey kH100{"NVIDIA H100 80GB HBM3", 90, 132, "13.0"};
const kf::DeviceKey kH200{"NVIDIA H200", 90, 132, "13.0"};

bool no_gpu_here() { return !kf::cli::local_device().has_value(); }

}  // namespace

TEST(DeviceChoice, NamesPartsAllAndErrors) {
  const fs::path dir = fresh_test_dir("kforge_device_choice");
  kf::Store store(dir / "r.db");
  add_result(store, kH100, 3.0, 128);
  add_result(store, kH200, 2.5, 256);
  add_result(store, kf::imported_device("NVIDIA H100 80GB HBM3"), 0.5, 64);

  EXPECT_FALSE(kf::cli::choose_device(store, "all").key.has_value());
  const auto exact = kf::cli::choose_device(store, "NVIDIA H200");
  ASSERT_TRUE(exact.key.has_value());
  EXPECT_EQ(exact.key->name, "NVIDIA H200");
  EXPECT_FALSE(exact.fallback);
  const auto part = kf::cli::choose_device(store, "h100");  // case-insensitive part; the imported key never counts
  ASSERT_TRUE(part.key.has_value());
  EXPECT_EQ(part.key->name, kH100.name);
  EXPECT_EQ(part.key->driver, "13.0");
  try {
    kf::cli::choose_device(store, "nvidia h");
    ADD_FAILURE() << "nvidia h names two devices";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("several devices"), std::string::npos) << e.what();
  }
  try {
    kf::cli::choose_device(store, "A100");
    ADD_FAILURE() << "A100 names none";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the store has: NVIDIA H100 80GB HBM3, NVIDIA H200"), std::string::npos)
        << e.what();
  }
  if (no_gpu_here()) {  // no GPU: "local" answers for every device
    const auto local = kf::cli::choose_device(store, "local");
    EXPECT_FALSE(local.key.has_value());
    EXPECT_FALSE(local.fallback);
  }
}

TEST(DeviceChoice, BestShowsTheDeviceAndAnswersForTheOneAskedFor) {
  const fs::path dir = fresh_test_dir("kforge_best_device");
  {
    kf::Store store(dir / "r.db");
    add_result(store, kH100, 3.0, 128);
    add_result(store, kH200, 2.5, 256);
  }
  const std::vector<std::string> base = {"--db", (dir / "r.db").string(), "--spec-dir", (kFamilies / "vecadd").string(),
                                         "best", "--family", "vecadd", "--shape", "N=4096,dtype=f16"};
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_kforge(args, dir);
  };
  const CliResult h100 = with({"--device", "H100"});
  ASSERT_EQ(h100.rc, 0) << h100.err;
  EXPECT_NE(h100.out.find("NVIDIA H100 80GB HBM3"), std::string::npos) << h100.out;
  EXPECT_NE(h100.out.find("BLOCK=128"), std::string::npos) << h100.out;
  const CliResult h200 = with({"--device", "NVIDIA H200", "--json"});
  ASSERT_EQ(h200.rc, 0) << h200.err;
  EXPECT_NE(h200.out.find("\"device\": \"NVIDIA H200\""), std::string::npos) << h200.out;
  EXPECT_NE(h200.out.find("\"BLOCK\": 256"), std::string::npos) << h200.out;
  const CliResult none = with({"--device", "A100"});
  EXPECT_EQ(none.rc, 1) << none.err;
  ASSERT_EQ(none.err_lines().size(), 1u) << none.err;
  EXPECT_NE(none.err.find("--device 'A100'"), std::string::npos) << none.err;
  if (no_gpu_here()) {  // the default without a GPU: every device, the fastest winning, its device named
    const CliResult any = with({});
    ASSERT_EQ(any.rc, 0) << any.err;
    EXPECT_NE(any.out.find("BLOCK=256"), std::string::npos) << any.out;
    EXPECT_NE(any.out.find("NVIDIA H200"), std::string::npos) << any.out;
  }
}

TEST(DeviceChoice, RefreshFromADeviceTakesThatDevicesTopConfigs) {
  const fs::path dir = fresh_test_dir("kforge_refresh_from_device");
  kf::Store store(dir / "r.db");
  add_result(store, kH100, 3.0, 128);
  add_result(store, kH200, 2.5, 256);
  const kf::Family family = kf::load_family(kFamilies / "vecadd" / "vecadd.json");
  const kf::Shape shape = {{"N", int64_t{4096}}, {"dtype", std::string("f16")}};
  const auto any = kf::refresh_configs(store, family, shape, 1);
  ASSERT_EQ(any.size(), 1u);
  EXPECT_EQ(std::get<int64_t>(any.front().at("BLOCK")), 256);
  const auto from_h100 = kf::refresh_configs(store, family, shape, 5, kH100);
  ASSERT_EQ(from_h100.size(), 1u);
  EXPECT_EQ(std::get<int64_t>(from_h100.front().at("BLOCK")), 128);
  EXPECT_THROW(kf::refresh_options(store, family, {shape}, 5, kf::CampaignOptions{},
                                   kf::DeviceKey{"NVIDIA A100", 80, 108, "13.0"}),
               std::runtime_error);
}
