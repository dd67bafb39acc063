// Guard regions on the device: each gate buffer lies between guard bands that fill its mapped
// granules and unmapped address space (eval/worker/guarded_buffer.hpp). In-process checks of
// one buffer's bands and of its memory being given back; then the test-only farwrite family
// (tests/families/farwrite), whose variants write one float 64 KiB or 1 MiB past the output or
// 64 KiB before it, through a worker (each far write fails the gate as the layout predicts,
// and the next evaluation passes: a fault restarts the worker, a named write does not) and
// through a campaign (none is recorded ok). Skips with the reason where there is no GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "campaign/campaign.hpp"
#include "compile/compiler.hpp"
#include "eval/client/worker_client.hpp"
#include "eval/worker/guard_layout.hpp"
#include "eval/worker/guarded_buffer.hpp"
#include "family/render.hpp"
#include "gpu/check.hpp"
#include "gpu/device.hpp"
#include "gpu/stream.hpp"
#include "gpu/vmm.hpp"
#include "space/value.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

// Writes 4 bytes of 0 at `at` (synchronously).
void poke(void* at) {
  const unsigned char zeros[4] = {0, 0, 0, 0};
  gpu::check(cudaMemcpy(at, zeros, sizeof zeros, cudaMemcpyHostToDevice), "cudaMemcpy(poke)");
}

const fs::path kFarwrite = fs::path(KFORGE_TEST_DIR) / "families" / "farwrite" / "farwrite.json";

// Where each MODE's stray float lies, in bytes from the start of y (N floats).
long long stray_offset(const std::string& mode, size_t n) {
  const auto end = static_cast<long long>(4 * n);
  if (mode == "after64k") return end + 65536;
  if (mode == "after1m") return end + (1 << 20);
  if (mode == "before64k") return -65536;
  return 0;  // "ok": none
}

// What the gate must say about a MODE on N floats. The layout decides: a stray float in a band
// is a wrong_result naming y and the side, one in unmapped memory a runtime_fault.
struct Expected {
  Status status;
  std::vector<std::string> reasons;  // parts of the recorded error
};
Expected expected_for(const std::string& mode, size_t n, size_t granularity) {
  if (mode == "ok") return {Status::Ok, {}};
  const GuardLayout l = unmapped_guard_layout(4 * n, granularity);
  const long long offset = stray_offset(mode, n);
  const long long in_mapping = static_cast<long long>(l.before_bytes) + offset;
  if (in_mapping >= 0 && in_mapping < static_cast<long long>(l.map_bytes))
    return {Status::WrongResult,
            {"out-of-bounds write: buffer y (", offset < 0 ? "before its start" : "past its end"}};
  return {Status::RuntimeFault, {"illegal memory access", "outside every buffer"}};
}

// Checks a far write's result: never ok, as the layout predicts, one line, and a named write
// reported at the stray float's bytes (the first of its 4 bytes may happen to match the band).
void expect_caught(const std::string& mode, size_t n, size_t granularity, Status status, const std::string& error) {
  const std::string where = mode + " on N=" + std::to_string(n) + ": " + to_string(status) + " " + error;
  if (mode != "ok") EXPECT_NE(status, Status::Ok) << where;  // the defect: these were recorded ok
  const Expected want = expected_for(mode, n, granularity);
  EXPECT_EQ(to_string(status), to_string(want.status)) << where;
  for (const std::string& reason : want.reasons) EXPECT_NE(error.find(reason), std::string::npos) << where;
  EXPECT_EQ(error.find('\n'), std::string::npos) << where;
  if (status == Status::WrongResult) {
    const std::string key = "at byte offsets ";
    const size_t at = error.find(key);
    ASSERT_NE(at, std::string::npos) << where;
    const long long first = std::stoll(error.substr(at + key.size()));
    EXPECT_GE(first, stray_offset(mode, n)) << where;
    EXPECT_LE(first, stray_offset(mode, n) + 3) << where;
  }
}

size_t device_granularity() {
  std::string why;
  const auto g = gpu::vmm_granularity(why);
  EXPECT_TRUE(g) << "an H100/H200 supports virtual memory management: " << why;
  return g ? *g : 0;
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

// Through one worker, as the orchestrator drives it: each far write between two correct
// evaluations. A fault ends the worker, and the next evaluation gets a fresh one that passes;
// a write the bands name leaves the worker running.
TEST(GuardPagesGpu, FarWritesFailTheGateAndTheNextEvaluationPasses) {
  if (auto why = gpu::device_unavailable(0)) GTEST_SKIP() << *why;
  const DeviceLimits dev = gpu::open_device(0);
  const size_t g = device_granularity();
  ASSERT_NE(g, 0u);
  const Family family = load_family(kFarwrite);
  CubinCache cache(fs::temp_directory_path() / ("kforge-gpu-test-cubins-" + std::to_string(getuid())));
  WorkerClient worker({KFORGE_BINARY, "worker", "--device", "0"}, 60);
  int64_t id = 0;
  for (const size_t n : {size_t{4096}, size_t{1} << 20}) {
    const Shape shape = parse_shape(family, "N=" + std::to_string(n));
    const CompiledKernel ref = compile_variant(render_reference(family, shape), dev.arch(), &cache);
    ASSERT_TRUE(ref.ok) << ref.log;
    auto gate = [&](const std::string& mode) {
      const Config c = {{"MODE", mode}};
      const CompiledKernel k = compile_variant(render_variant(family, c, shape), dev.arch(), &cache);
      EXPECT_TRUE(k.ok) << k.log;
      EvalRequest r;
      r.id = ++id;
      r.spec_path = kFarwrite.string();
      r.config = c;
      r.shape = shape;
      r.cubin_path = k.cubin_path.string();
      r.ref_cubin_path = ref.cubin_path.string();
      r.time = false;
      return worker.evaluate(r);
    };
    for (const std::string mode : {"after64k", "after1m", "before64k"}) {
      SCOPED_TRACE(mode + " on N=" + std::to_string(n));
      const EvalResult before = gate("ok");
      EXPECT_EQ(before.status, Status::Ok) << before.error;
      const int restarts = worker.restarts();
      const EvalResult far = gate(mode);
      expect_caught(mode, n, g, far.status, far.error);
      const EvalResult after = gate("ok");
      EXPECT_EQ(after.status, Status::Ok) << "after " << to_string(far.status) << ": " << after.error;
      EXPECT_EQ(worker.restarts(), restarts + (far.status == Status::RuntimeFault ? 1 : 0))
          << to_string(far.status) << ": " << far.error;
    }
  }
  worker.shutdown(5);
}

TEST(GuardPagesGpu, FarWritesAreNeverRecordedOk) {
  if (auto why = gpu::device_unavailable(0)) GTEST_SKIP() << *why;
  const fs::path dir = fs::temp_directory_path() / ("kforge_farwrite_gpu_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  gpu::open_device(0);  // for the granularity the worker sees too
  const Family family = load_family(kFarwrite);
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

  const size_t g = device_granularity();
  ASSERT_NE(g, 0u);
  for (const Shape& shape : shapes) {
    const size_t n = static_cast<size_t>(as_int(shape.at("N")));
    const auto evals = store.evaluations("farwrite", shape, std::nullopt, out.campaign_id);
    EXPECT_EQ(evals.size(), 4u) << to_string(shape);
    for (const EvaluationRecord& e : evals)
      expect_caught(std::get<std::string>(e.config.at("MODE")), n, g, e.status, e.error);
  }
  fs::remove_all(dir);
}
