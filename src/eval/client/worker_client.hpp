// Orchestrator side of a worker: spawns `kforge worker` (or any command speaking the
// protocol), sends requests, enforces the timeout, classifies crashes and garbage, respawns.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "eval/protocol.hpp"

namespace kf {

class WorkerClient {
 public:
  // argv: the worker command, e.g. {"/path/kforge", "worker", "--device", "0"}.
  // timeout_s: the watchdog's limit for one request (a hung worker is killed: status timeout).
  WorkerClient(std::vector<std::string> argv, double timeout_s);
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // Starts the worker if needed and returns its device; throws std::runtime_error with the
  // worker's one-line reason if it has none (e.g. "no CUDA device available").
  DeviceLimits device();
  // Never throws for worker failures: a crash or sticky error -> runtime_fault, a hang ->
  // timeout, an unparsable reply -> runtime_fault ("protocol: ..."); the worker is restarted
  // on the next call.
  EvalResult evaluate(const EvalRequest& req);
  TimeManyResult time_many(const TimeManyRequest& req);
  int restarts() const;
  // Closes the worker's input and gives it grace_s to exit by itself (a worker under
  // compute-sanitizer writes its report at exit), then kills what is left. Returns how it
  // ended ("exit code 0", "signal 9 (Killed)"), or "" when no worker was running.
  std::string shutdown(double grace_s);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kf
