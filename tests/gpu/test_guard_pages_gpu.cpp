// Guard regions on the device: each gate buffer lies between guard bands that fill its mapped
// granules and unmapped address space (eval/worker/guarded_buffer.hpp). In-process checks of
// one buffer's bands and of its memory being given back, then one campaign over the test-only
// farwrite family (tests/families/farwrite): one float written 64 KiB or 1 MiB past the output,
// or 64 KiB before it, is never recorded ok. Skips with the reason where there is no GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "campaign/campaign.hpp"
#include "eval/worker/guarded_buffer.hpp"
#include "gpu/check.hpp"
#include "gpu/device.hpp"
#include "gpu/stream.hpp"
#include "gpu/vmm.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

// Writes 4 bytes of 0 at `at` (synchronously).
void poke(void* at) {
  const unsigned char zeros[4] = {0, 0, 0, 0};
  gpu::check(cudaMemcpy(at, zeros, sizeof zeros, cudaMemcpyHostToDevice), "cudaMemcpy(poke)");
}

}  // namespace

TEST(GuardPagesGpu, EveryMappedByteOutsideTheBufferIsChecked) {
  if (auto why = gpu::device_unavailable(0)) GTEST_SKIP() << *why;
  gpu::open_device(0);
  std::string why;
  const auto granularity = gpu::vmm_granularity(why);
  ASSERT_TRUE(granularity) << "an H100/H200 supports virtual memory management: " << why;
  gpu::Stream s;
  GuardedBuffer b(16384, s);  // N = 4,096 floats
  const GuardLayout& l = b.layout();
  ASSERT_NE(l.reserve_bytes, 0u) << "not placed between unmapped pages";
  EXPECT_TRUE(guard_pages_in_use());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.get()) % kGuardAlign, 0u);
  EXPECT_EQ(l.map_bytes % *granularity, 0u);
  EXPECT_FALSE(b.check_guards("y", 4, s));

  auto* buf = static_cast<unsigned char*>(b.get());
  // The last mapped byte (the end of the after band, where unmapped memory begins).
  poke(buf + l.buffer_bytes + l.after_bytes - 4);
  const auto past = b.check_guards("y", 4, s);
  ASSERT_TRUE(past);
  const long long last = static_cast<long long>(l.buffer_bytes + l.after_bytes);
  EXPECT_NE(past->find("past its end, at byte offsets " + std::to_string(last - 4) + ".." + std::to_string(last - 1)),
            std::string::npos)
      << *past;
  EXPECT_FALSE(b.check_guards("y", 4, s)) << "the band was not restored";

  // The first mapped byte (the start of the before band, all the granule's slack).
  poke(buf - l.before_bytes);
  const auto before = b.check_guards("y", 4, s);
  ASSERT_TRUE(before);
  const long long first = -static_cast<long long>(l.before_bytes);
  EXPECT_NE(before->find("before its start, at byte offsets " + std::to_string(first) + ".." +
                         std::to_string(first + 3)),
            std::string::npos)
      << *before;
  EXPECT_FALSE(b.check_guards("y", 4, s));

  // The buffer proper is not a band.
  poke(buf);
  poke(buf + l.buffer_bytes - 4);
  EXPECT_FALSE(b.check_guards("y", 4, s));
}

TEST(GuardPagesGpu, ABufferGivesItsMemoryBack) {
  if (auto why = gpu::device_unavailable(0)) GTEST_SKIP() << *why;
  gpu::open_device(0);
  gpu::Stream s;
  const size_t gib = size_t{1} << 30;
  const size_t free_before = gpu::memory_info().first;
  {
    std::vector<GuardedBuffer> held;
    for (int i = 0; i < 4; ++i) held.emplace_back(gib, s);
    s.synchronize();
    EXPECT_LE(gpu::memory_info().first + 4 * gib, free_before);
    held[0] = GuardedBuffer(16, s);  // a move releases what it replaces
  }
  // Everything back (within a few granules of what other work on the device may have taken).
  EXPECT_GE(gpu::memory_info().first + (size_t{64} << 20), free_before);
}

TEST(GuardPagesGpu, FarWritesAreNeverRecordedOk) {
  if (auto why = gpu::device_unavailable(0)) GTEST_SKIP() << *why;
  const fs::path dir = fs::temp_directory_path() / ("kforge_farwrite_gpu_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const Family family = load_family(fs::path(KFORGE_TEST_DIR) / "families" / "farwrite" / "farwrite.json");
  const std::vector<Shape> shapes = {parse_shape(family, "N=4096"), parse_shape(family, "N=1048576")};
  Store store(dir / "r.db");

  CampaignOptions o;
  o.strategy = "exhaustive";
  o.cache_dir = dir / "cache";
  o.worker_argv = {KFORGE_BINARY, "worker"};
  o.eval_timeout_s = 30;
  o.compile_threads = 2;
  o.gpus = {0};
  o.quiet = true;
  o.remeasure_top_k = 1;  // no re-measure: only the gate matters here
  o.timing.warmup_ms = 2;
  o.timing.max_ms = 50;
  o.timing.max_reps = 10;
  const CampaignOutcome out = run_campaign(store, family, shapes, o);
  EXPECT_EQ(out.status, "done");

  // Past the end: one guard page, then unmapped memory, so the write faults and the message says
  // what that means. Before the start: the granule's slack is all band, so the pattern names it.
  struct Expected {
    Status status;
    std::vector<std::string> reasons;
  };
  const std::map<std::string, Expected> expected = {
      {"ok", {Status::Ok, {}}},
      {"after64k", {Status::RuntimeFault, {"illegal memory access", "outside every buffer"}}},
      {"after1m", {Status::RuntimeFault, {"illegal memory access", "outside every buffer"}}},
      {"before64k", {Status::WrongResult, {"out-of-bounds write: buffer y (", "before its start, at byte offsets -65536..-65533"}}},
  };
  for (const Shape& shape : shapes) {
    const auto evals = store.evaluations("farwrite", shape, std::nullopt, out.campaign_id);
    EXPECT_EQ(evals.size(), expected.size()) << to_string(shape);
    for (const EvaluationRecord& e : evals) {
      const std::string mode = std::get<std::string>(e.config.at("MODE"));
      const std::string where = mode + " on " + to_string(shape) + ": " + to_string(e.status) + " " + e.error;
      if (mode != "ok") EXPECT_NE(e.status, Status::Ok) << where;  // the defect: these were recorded ok
      const auto it = expected.find(mode);
      ASSERT_NE(it, expected.end()) << where;
      EXPECT_EQ(to_string(e.status), to_string(it->second.status)) << where;
      for (const std::string& reason : it->second.reasons) EXPECT_NE(e.error.find(reason), std::string::npos) << where;
      EXPECT_EQ(e.error.find('\n'), std::string::npos) << where;
    }
  }
  fs::remove_all(dir);
}
