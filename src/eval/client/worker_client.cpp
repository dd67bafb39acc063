// The orchestrator's side of a worker process. Every way a worker can fail (crash, hang,
// garbage, sticky CUDA error) ends that worker and becomes the status of the request that was
// in flight; the next request starts a fresh worker, so one bad kernel costs one evaluation.
#include "eval/client/worker_client.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <variant>

#include "eval/client/subprocess.hpp"

namespace kf {

using nlohmann::json;
using Clock = Subprocess::Clock;

namespace {

// How long a worker gets to exit by itself: after EOF on its output (it is dying anyway,
// and we want its exit status), and after we close its input (it may be tearing down CUDA).
constexpr double kExitGraceS = 2.0;

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// A short, single-line rendering of what the worker sent, for an error message.
std::string excerpt(const std::string& text, size_t max = 80) {
  std::string out;
  for (char c : text.substr(0, max)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > max) out += "...";
  return out;
}

// Why a request failed without an answer from the worker.
struct Failure {
  Status status;
  std::string error;
};

EvalResult failed(int64_t id, const Failure& f) {
  EvalResult r;
  r.id = id;
  r.status = f.status;
  r.error = f.error;
  return r;
}

}  // namespace

struct WorkerClient::Impl {
  std::vector<std::string> argv;
  double timeout_s;
  std::unique_ptr<Subprocess> proc;  // a worker that has said hello, or null
  DeviceLimits device;               // from its hello
  bool retire = false;  // it answered runtime_fault: it is exiting, do not send it more
  int spawns = 0;

  // Ensures a live worker that has said hello. Returns the reason when there is none.
  std::optional<std::string> start();
  // Lets the worker exit on EOF, then kills what is left.
  void stop();
  // Kills the worker at once (hung, or speaking garbage).
  void discard();
  // The worker's output ended: how it died ("signal 11 (...); stderr: ..."), after clean-up.
  std::string death();
  Failure died() { return {Status::RuntimeFault, "worker died: " + death()}; }
  Failure protocol_error(const std::string& what);
  // Sends one request line and waits for one reply line of the given type and id.
  std::variant<json, Failure> exchange(const json& request, int64_t id, const char* reply_type,
                                       double timeout);
};

std::optional<std::string> WorkerClient::Impl::start() {
  if (proc && !retire && proc->running()) return std::nullopt;
  // A worker that died while idle (or is retiring) is replaced before the next request
  // rather than failing it.
  if (proc) stop();
  retire = false;
  try {
    proc = std::make_unique<Subprocess>(argv);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ++spawns;

  std::string line;
  switch (proc->read_line(line, after(timeout_s))) {
    case Subprocess::Io::Timeout:
      discard();
      return "worker sent no hello after " + seconds_text(timeout_s) + " s";
    case Subprocess::Io::Closed:
      return "worker exited before hello: " + death();
    case Subprocess::Io::Done:
      break;
  }
  json hello;
  try {
    hello = json::parse(line);
  } catch (const json::parse_error&) {
    return protocol_error("hello is not JSON: " + excerpt(line)).error;
  }
  if (!hello.is_object() || hello.value("type", json()) != "hello")
    return protocol_error("expected hello, got: " + excerpt(line)).error;
  if (auto it = hello.find("error"); it != hello.end() && !it->is_null()) {
    std::string why = it->is_string() ? it->get<std::string>() : it->dump();
    stop();
    return why.empty() ? "worker failed to start" : why;
  }
  auto it = hello.find("device");
  if (it == hello.end()) return protocol_error("hello has neither device nor error").error;
  try {
    device = device_limits_from_json(*it);
  } catch (const std::invalid_argument& e) {
    return protocol_error(std::string("hello: device: ") + e.what()).error;
  }
  return std::nullopt;
}

void WorkerClient::Impl::stop() {
  if (!proc) return;
  proc->close_stdin();
  proc->wait_exit(after(std::min(kExitGraceS, timeout_s)));
  proc.reset();  // kills the group and reaps
}

void WorkerClient::Impl::discard() { proc.reset(); }

std::string WorkerClient::Impl::death() {
  // EOF on its output usually means the worker is exiting; wait for its status.
  bool exited = proc->wait_exit(after(kExitGraceS));
  std::string why = exited ? proc->exit_description() : "closed its output";
  proc->kill_group();  // anything it left behind
  std::string last = proc->last_stderr_line();
  proc.reset();
  if (!last.empty()) why += "; stderr: " + excerpt(last, 200);
  return why;
}

Failure WorkerClient::Impl::protocol_error(const std::string& what) {
  discard();  // we no longer know where the worker is in the conversation
  return {Status::RuntimeFault, "protocol: " + what};
}

std::variant<json, Failure> WorkerClient::Impl::exchange(const json& request, int64_t id,
                                                         const char* reply_type, double timeout) {
  if (auto why = start()) return Failure{Status::RuntimeFault, "worker failed to start: " + *why};
  auto timed_out = [&] {
    discard();
    return Failure{Status::Timeout, "no answer after " + seconds_text(timeout) + " s"};
  };
  auto deadline = after(timeout);

  switch (proc->write_all(request.dump() + "\n", deadline)) {
    case Subprocess::Io::Timeout: return timed_out();
    case Subprocess::Io::Closed: return died();
    case Subprocess::Io::Done: break;
  }
  std::string line;
  switch (proc->read_line(line, deadline)) {
    case Subprocess::Io::Timeout: return timed_out();
    case Subprocess::Io::Closed: return died();
    case Subprocess::Io::Done: break;
  }

  json reply;
  try {
    reply = json::parse(line);
  } catch (const json::parse_error&) {
    return protocol_error("reply is not JSON: " + excerpt(line));
  }
  if (!reply.is_object()) return protocol_error("reply is not an object: " + excerpt(line));
  if (auto type = reply.value("type", json()); type != reply_type)
    return protocol_error(std::string("expected a \"") + reply_type + "\" reply, got type " + type.dump());
  auto rid = reply.find("id");
  if (rid == reply.end() || !rid->is_number_integer() || rid->get<int64_t>() != id)
    return protocol_error("reply for id " + (rid == reply.end() ? "(none)" : rid->dump()) +
                          ", expected " + std::to_string(id));
  return reply;
}

WorkerClient::WorkerClient(std::vector<std::string> argv, double timeout_s)
    : impl_(std::make_unique<Impl>()) {
  if (argv.empty()) throw std::invalid_argument("worker command is empty");
  if (!(timeout_s > 0)) throw std::invalid_argument("worker timeout must be positive");
  impl_->argv = std::move(argv);
  impl_->timeout_s = timeout_s;
}

WorkerClient::~WorkerClient() { impl_->stop(); }

DeviceLimits WorkerClient::device() {
  if (auto why = impl_->start()) throw std::runtime_error(*why);
  return impl_->device;
}

EvalResult WorkerClient::evaluate(const EvalRequest& req) {
  auto reply = impl_->exchange(to_json(req), req.id, "result", impl_->timeout_s);
  if (auto* f = std::get_if<Failure>(&reply)) return failed(req.id, *f);
  EvalResult r;
  try {
    r = eval_result_from_json(std::get<json>(reply));
  } catch (const std::invalid_argument& e) {
    return failed(req.id, impl_->protocol_error(e.what()));
  }
  // A sticky CUDA error poisons the worker's context; it exits after answering.
  if (r.status == Status::RuntimeFault) impl_->retire = true;
  return r;
}

TimeManyResult WorkerClient::time_many(const TimeManyRequest& req) {
  auto fail_all = [&](const Failure& f) {
    TimeManyResult out;
    out.id = req.id;
    for (const auto& item : req.items) out.items.push_back(failed(item.id, f));
    return out;
  };
  // The worker times every item in one request, so the limit grows with the item count.
  double timeout = impl_->timeout_s * static_cast<double>(std::max<size_t>(1, req.items.size()));
  auto reply = impl_->exchange(to_json(req), req.id, "times", timeout);
  if (auto* f = std::get_if<Failure>(&reply)) return fail_all(*f);

  TimeManyResult res;
  try {
    res = time_many_result_from_json(std::get<json>(reply));
  } catch (const std::invalid_argument& e) {
    return fail_all(impl_->protocol_error(e.what()));
  }
  if (res.items.size() != req.items.size())
    return fail_all(impl_->protocol_error("times has " + std::to_string(res.items.size()) +
                                          " items, expected " + std::to_string(req.items.size())));
  for (size_t i = 0; i < res.items.size(); ++i)
    if (res.items[i].id != req.items[i].id)
      return fail_all(impl_->protocol_error("times item " + std::to_string(i) + " has id " +
                                            std::to_string(res.items[i].id) + ", expected " +
                                            std::to_string(req.items[i].id)));
  if (!res.round_us.empty() && res.round_us.size() != res.items.size())
    return fail_all(impl_->protocol_error("times has round_us for " + std::to_string(res.round_us.size()) +
                                          " items, expected " + std::to_string(res.items.size())));
  for (const auto& item : res.items)
    if (item.status == Status::RuntimeFault) impl_->retire = true;
  return res;
}

std::string WorkerClient::shutdown(double grace_s) {
  if (!impl_->proc) return "";
  impl_->proc->close_stdin();
  impl_->proc->wait_exit(after(grace_s));
  impl_->proc->kill_group();
  std::string how = impl_->proc->exit_description();
  impl_->proc.reset();
  return how;
}

int WorkerClient::restarts() const { return std::max(0, impl_->spawns - 1); }

}  // namespace kf
