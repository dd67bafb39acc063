// A lock served in the order it was asked for (a ticket lock). The GPU threads of a suite's shapes share
// one worker each; with std::mutex the thread that just released it took it again at once, so one shape's
// jobs held the GPU while the others' waited for minutes (measured: a shape at 0 evaluations for 300 s).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace kf {

class FairLock {
 public:
  void lock() {
    std::unique_lock l(mu_);
    const uint64_t ticket = next_++;
    cv_.wait(l, [&] { return serving_ == ticket; });
  }
  void unlock() {
    {
      std::lock_guard l(mu_);
      ++serving_;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t next_ = 0, serving_ = 0;
};

}  // namespace kf
