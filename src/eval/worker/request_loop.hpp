// The worker's protocol loop, apart from the device: one reply line per request line.
#pragma once
#include <iosfwd>

#include <nlohmann/json_fwd.hpp>

#include "eval/protocol.hpp"

namespace kf {

// What serves the requests. evaluate/time_many may throw gpu::CudaError; a sticky one ends
// the loop (after answering), anything else is answered as runtime_fault and the loop goes on.
class RequestHandler {
 public:
  virtual ~RequestHandler() = default;
  virtual EvalResult evaluate(const EvalRequest& req) = 0;
  virtual TimeManyResult time_many(const TimeManyRequest& req) = 0;
};

inline constexpr int kWorkerExitNoDevice = 3;
inline constexpr int kWorkerExitSticky = 4;

// Answers request lines from `in` until EOF (returns 0) or a sticky CUDA error (returns
// kWorkerExitSticky). Blank lines are skipped; malformed JSON, unknown types and requests
// missing fields are answered with status runtime_fault and an error starting "protocol: ".
int serve_requests(RequestHandler& handler, std::istream& in, std::ostream& out);

// One JSON line, flushed (the orchestrator waits for it).
void send_line(std::ostream& out, const nlohmann::json& j);

}  // namespace kf
