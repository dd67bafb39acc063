#include "gpu/graph.hpp"

#include <utility>

#include "gpu/check.hpp"

namespace kf::gpu {

namespace {
struct GraphGuard {
  cudaGraph_t g = nullptr;
  ~GraphGuard() {
    if (g) cudaGraphDestroy(g);
  }
};
}  // namespace

GraphExec GraphExec::capture(const Stream& s, const std::function<void()>& body) {
  // Thread-local mode: only this thread's unsafe calls would break the capture.
  check(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  GraphGuard graph;
  try {
    body();
  } catch (...) {
    cudaStreamEndCapture(s.get(), &graph.g);  // leave the stream usable; the graph is dropped
    throw;
  }
  check(cudaStreamEndCapture(s.get(), &graph.g), "cudaStreamEndCapture");
  GraphExec out;
  check(cudaGraphInstantiate(&out.exec_, graph.g, 0), "cudaGraphInstantiate");
  return out;
}

GraphExec::~GraphExec() {
  if (exec_) cudaGraphExecDestroy(exec_);
}

GraphExec::GraphExec(GraphExec&& o) noexcept : exec_(std::exchange(o.exec_, nullptr)) {}

void GraphExec::launch(const Stream& s) const { check(cudaGraphLaunch(exec_, s.get()), "cudaGraphLaunch"); }

}  // namespace kf::gpu
