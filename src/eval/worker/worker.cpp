// The `kforge worker` entry: find the device, say hello, then serve requests.
#include "eval/worker/worker.hpp"

#include <memory>
#include <ostream>

#include <nlohmann/json.hpp>

#include "eval/worker/evaluator.hpp"
#include "eval/worker/request_loop.hpp"
#include "gpu/check.hpp"
#include "gpu/device.hpp"

namespace kf {

int run_worker(int device_index, std::istream& in, std::ostream& out) {
  if (auto why = gpu::device_unavailable(device_index)) {
    send_line(out, {{"type", "hello"}, {"error", *why}});
    return kWorkerExitNoDevice;
  }
  DeviceLimits dev;
  std::unique_ptr<Evaluator> ev;
  try {
    dev = gpu::open_device(device_index);
    ev = std::make_unique<Evaluator>(dev);
  } catch (const gpu::CudaError& e) {
    send_line(out, {{"type", "hello"}, {"error", std::string("cannot use CUDA device: ") + e.what()}});
    return kWorkerExitNoDevice;
  }
  send_line(out, {{"type", "hello"}, {"device", to_json(dev)}});
  return serve_requests(*ev, in, out);
}

}  // namespace kf
