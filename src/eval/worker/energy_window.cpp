#include "eval/worker/energy_window.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

#include "gpu/energy_meter.hpp"

namespace kf {

namespace {

using Clock = std::chrono::steady_clock;

struct Step {
  uint64_t mj = 0;
  Clock::time_point at;  // the middle of the read that first saw it
};

// Reads the counter on a thread of its own and keeps each step it sees. A read takes about 3 ms on an
// H200 (17 ms at worst): polling between replays on the launching thread starved the GPU (a graph of small
// attention launches drew 140 W that way, 226 W kept busy without polling), so the window measured a
// half-idle GPU.
class CounterPoller {
 public:
  explicit CounterPoller(const gpu::EnergyMeter& m) : meter_(m), thread_([this] { run(); }) {}
  ~CounterPoller() {
    stop_ = true;
    thread_.join();
  }
  CounterPoller(const CounterPoller&) = delete;
  CounterPoller& operator=(const CounterPoller&) = delete;

  std::vector<Step> steps() const {
    std::lock_guard<std::mutex> lock(mu_);
    return steps_;
  }
  bool failed() const { return failed_; }

 private:
  void run() {
    std::optional<uint64_t> last;
    while (!stop_) {
      const auto before = Clock::now();
      const auto mj = meter_.read_mj();
      const auto after = Clock::now();
      if (!mj) {
        failed_ = true;
        return;
      }
      if (last && *mj != *last) {
        std::lock_guard<std::mutex> lock(mu_);
        steps_.push_back({*mj, before + (after - before) / 2});
      }
      last = mj;
    }
  }

  const gpu::EnergyMeter& meter_;
  std::atomic<bool> stop_{false}, failed_{false};
  mutable std::mutex mu_;
  std::vector<Step> steps_;
  std::thread thread_;  // last: it starts once the members it uses exist
};

}  // namespace

// The window runs from the first step the poller sees to the first one at least 90% of energy_ms after it
// (the counter steps on a fixed tick, 100 ms on an H200, so the window holds whole ticks: about 1.5 ticks an
// evaluation in all). The counter does not lag the load: after an idle second, the tick in which a load
// started read in between, the next ones the full load's power. With the poller apart, a one-tick window
// read what nvidia-smi's power.draw.instant did under a steady load (706 against 707 W, 157 against 156 W).
std::optional<double> mean_power_w(const std::function<void()>& replay, const gpu::Stream& s, double energy_ms) {
  if (energy_ms <= 0) return std::nullopt;
  static const gpu::EnergyMeter meter;  // one GPU a worker
  static const bool said = [] {
    if (!meter.available()) std::cerr << "kforge worker: energy not measured: " << meter.why_not() << "\n";
    return true;
  }();
  (void)said;
  if (!meter.available()) return std::nullopt;

  constexpr int kAhead = 4;  // replays queued: the GPU never waits for the host
  std::vector<gpu::Event> queued(kAhead);
  int issued = 0;
  const auto give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double, std::milli>(3 * energy_ms + 300));
  std::optional<Step> a, b;
  {
    CounterPoller poller(meter);
    while (!b && !poller.failed() && Clock::now() < give_up) {
      gpu::Event& e = queued[issued % kAhead];
      if (issued >= kAhead) e.synchronize();
      replay();
      e.record(s);
      ++issued;
      const std::vector<Step> seen = poller.steps();
      if (seen.empty()) continue;
      a = seen.front();
      for (const Step& st : seen)
        if (std::chrono::duration<double, std::milli>(st.at - a->at).count() >= 0.9 * energy_ms) {
          b = st;
          break;
        }
    }
  }
  s.synchronize();
  if (!a || !b || b->mj <= a->mj) return std::nullopt;
  const double ms = std::chrono::duration<double, std::milli>(b->at - a->at).count();
  return ms > 0 ? std::optional<double>(static_cast<double>(b->mj - a->mj) / ms) : std::nullopt;  // mJ/ms = W
}

}  // namespace kf
