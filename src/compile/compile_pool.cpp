#include <spdlog/spdlog.h>

#include <condition_variable>
#include <stdexcept>
#include <string>
#include <system_error>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "compile/compiler.hpp"

namespace kf {

struct CompilePool::Impl {
  CubinCache* cache = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::packaged_task<CompiledKernel()>> queue;
  bool stopping = false;
  std::vector<std::thread> threads;

  void loop() {
    for (;;) {
      std::packaged_task<CompiledKernel()> task;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return stopping || !queue.empty(); });
        // Drain before stopping: every submitted future gets its value.
        if (queue.empty()) return;
        task = std::move(queue.front());
        queue.pop_front();
      }
      task();  // exceptions land in the future
    }
  }
};

CompilePool::CompilePool(size_t threads, CubinCache* cache) : impl_(std::make_unique<Impl>()) {
  impl_->cache = cache;
  if (threads == 0) threads = 1;
  impl_->threads.reserve(threads);
  // A thread the system refuses (memory or process limits) must not abort the process: a
  // std::thread that throws here would leave the started ones joinable, and their destruction
  // calls std::terminate. Work on with the threads that did start; fail cleanly with none.
  std::string refusal;
  for (size_t i = 0; i < threads; ++i) {
    try {
      impl_->threads.emplace_back([this] { impl_->loop(); });
    } catch (const std::system_error& e) {
      refusal = e.what();
      break;
    }
  }
  if (impl_->threads.empty())
    throw std::runtime_error("compile pool: cannot start a thread (" + refusal + ")");
  if (!refusal.empty())
    spdlog::warn("compile pool: started {} of {} threads ({}); compiling with {}",
                 impl_->threads.size(), threads, refusal, impl_->threads.size());
}

size_t CompilePool::threads() const { return impl_->threads.size(); }

CompilePool::~CompilePool() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  for (std::thread& t : impl_->threads) t.join();
}

std::future<CompiledKernel> CompilePool::submit(Variant v, std::string base_arch) {
  CubinCache* cache = impl_->cache;
  std::packaged_task<CompiledKernel()> task(
      [v = std::move(v), arch = std::move(base_arch), cache] { return compile_variant(v, arch, cache); });
  auto fut = task.get_future();
  {
    std::lock_guard lock(impl_->mu);
    impl_->queue.push_back(std::move(task));
  }
  impl_->cv.notify_one();
  return fut;
}

}  // namespace kf
