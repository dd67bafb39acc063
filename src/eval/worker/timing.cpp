#include "eval/worker/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>

#include "eval/stats.hpp"
#include "eval/worker/energy_window.hpp"
#include "gpu/check.hpp"
#include "gpu/graph.hpp"

namespace kf {

namespace {

using Clock = std::chrono::steady_clock;

// Per-launch milliseconds estimated from batches of plain launches; the batches double until
// warmup_ms of GPU time has passed, which also brings caches warm and the clocks to where sustained
// load holds them (a heavy kernel on a power-capped GPU settles below its boost clock).
//
// A short kernel (< kShortKernelMs a launch) on a GPU this worker kept busy until moments ago
// (kBusyGapMs) stops after kRewarmMs (eval/protocol.hpp) instead: its clocks are already up, and a kernel of a few
// microseconds draws too little power for the cap to pull them down. In a search the worker times
// one kernel after another, and the full 200 ms was most of an evaluation of a us-scale kernel.
constexpr double kShortKernelMs = 0.05;
constexpr double kBusyGapMs = 100;
Clock::time_point g_last_busy{};  // when this worker last finished timing a kernel (one GPU, one thread)

bool busy_moments_ago() {
  return g_last_busy != Clock::time_point{} &&
         std::chrono::duration<double, std::milli>(Clock::now() - g_last_busy).count() < kBusyGapMs;
}

double warm_up(const std::function<void()>& launch, const gpu::Stream& s, double warmup_ms) {
  const bool busy = busy_moments_ago();
  gpu::Event a, b;
  double total = 0, per_launch = 0;
  for (int n = 1;; n = std::min(n * 2, 4096)) {
    a.record(s);
    for (int i = 0; i < n; ++i) launch();
    b.record(s);
    b.synchronize();
    const double t = gpu::elapsed_ms(a, b);
    total += t;
    per_launch = t / n;
    if (total >= warmup_ms) break;
    if (busy && total >= kRewarmMs && per_launch < kShortKernelMs) break;
  }
  return std::max(per_launch, 1e-6);
}

// Stops when the CI is tight (after min_reps), at max_reps, or at the deadline (after at
// least three samples, so a very slow kernel still gets a spread).
bool enough(const std::vector<double>& samples, const TimingOptions& o, Clock::time_point deadline) {
  const size_t n = samples.size();
  if (n >= static_cast<size_t>(std::max(o.max_reps, 1))) return true;
  if (n >= 3 && Clock::now() >= deadline) return true;
  return n >= static_cast<size_t>(std::max(o.min_reps, 1)) && ci_within(summarize(samples), o.target_rel_ci);
}

}  // namespace

TimingStats measure_kernel(const std::function<void()>& launch, const gpu::Stream& s, const TimingOptions& o,
                           gpu::DeviceBuffer* flush) {
  const double per_launch_ms = warm_up(launch, s, o.warmup_ms);
  const auto start = Clock::now();
  const auto graph_deadline = start + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double, std::milli>(0.75 * o.max_ms));
  const auto plain_deadline = start + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double, std::milli>(o.max_ms));

  // Enough launches per graph that one replay lasts about graph_ms; the cap bounds the time
  // spent instantiating a graph for a tiny kernel.
  const int per_graph = static_cast<int>(std::clamp(std::llround(o.graph_ms / per_launch_ms), 1LL, 2000LL));
  std::optional<gpu::GraphExec> graph;
  try {
    graph.emplace(gpu::GraphExec::capture(s, [&] {
      for (int i = 0; i < per_graph; ++i) launch();
    }));
  } catch (const gpu::CudaError& e) {
    if (e.sticky()) throw;
    cudaGetLastError();
    // Still a per-launch time from back-to-back launches, with some launch overhead in it.
    std::cerr << "kforge worker: graph capture failed (" << e.what() << "); timing batches of plain launches\n";
  }
  auto replay = [&] {
    if (graph) {
      graph->launch(s);
    } else {
      for (int i = 0; i < per_graph; ++i) launch();
    }
  };
  replay();  // the first replay uploads the graph; not measured
  s.synchronize();

  // Replays back to back in batches, an event between each two, and one host sync per batch: the GPU does
  // not idle between replays, so it runs at the clocks it holds under sustained load (a model's forward pass,
  // tools/compare_torch.py), where a replay-sync-replay loop lets it boost between replays. That idle is the
  // suspect for the worker ranking near-equal D128 attention configs unlike sustained side-by-side timing
  // (docs/experiments/68-*; not yet shown).
  constexpr int kBatch = 5;
  std::vector<gpu::Event> marks(kBatch + 1);
  std::vector<double> samples;
  while (!enough(samples, o, graph_deadline)) {
    marks[0].record(s);
    for (int i = 1; i <= kBatch; ++i) {
      replay();
      marks[i].record(s);
    }
    marks[kBatch].synchronize();
    for (int i = 1; i <= kBatch; ++i) samples.push_back(1000.0 * gpu::elapsed_ms(marks[i - 1], marks[i]) / per_graph);
  }
  const Summary g = summarize(samples);
  const std::optional<double> power = mean_power_w(replay, s, o.energy_ms);
  gpu::Event a, b;

  // Plain launches, an event pair around each: what a caller without graphs would see.
  std::vector<double> plain;
  while (!enough(plain, o, plain_deadline)) {
    if (o.cold_l2 && flush) flush->fill(static_cast<unsigned char>(plain.size() & 0xff), s);
    a.record(s);
    launch();
    b.record(s);
    b.synchronize();
    plain.push_back(1000.0 * gpu::elapsed_ms(a, b));
  }

  TimingStats t;
  t.median_us = g.median;
  t.p10_us = g.p10;
  t.p90_us = g.p90;
  t.ci_lo_us = g.ci_lo;
  t.ci_hi_us = g.ci_hi;
  t.reps = static_cast<int>(g.n);
  t.launches_per_rep = per_graph;
  t.plain_median_us = summarize(plain).median;
  t.method = kTimingMethod;
  if (power) {
    t.power_w = *power;
    t.energy_uj = *power * g.median;  // W x us = uJ
  }
  g_last_busy = Clock::now();
  return t;
}

TimingStats combine_rounds(const std::vector<TimingStats>& rounds) {
  TimingStats t;
  if (rounds.empty()) return t;
  std::vector<double> medians, plains;
  for (const TimingStats& r : rounds) {
    medians.push_back(r.median_us);
    plains.push_back(r.plain_median_us);
    t.reps += r.reps;
  }
  const Summary m = summarize(medians);
  t.median_us = m.median;
  t.p10_us = m.p10;
  t.p90_us = m.p90;
  t.ci_lo_us = m.ci_lo;
  t.ci_hi_us = m.ci_hi;
  t.launches_per_rep = rounds.back().launches_per_rep;
  t.plain_median_us = summarize(plains).median;
  std::vector<double> powers;  // the rounds that measured it
  for (const TimingStats& r : rounds)
    if (r.power_w > 0) powers.push_back(r.power_w);
  if (!powers.empty()) {
    t.power_w = summarize(powers).median;
    t.energy_uj = t.power_w * t.median_us;
  }
  return t;
}

}  // namespace kf
