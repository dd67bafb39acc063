// The `kforge worker` loop: a hello line, then one reply line per request line.
#include "eval/worker.hpp"

#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/evaluator.hpp"
#include "eval/protocol.hpp"
#include "gpu/check.hpp"
#include "gpu/device.hpp"

namespace kf {

namespace {

constexpr int kExitNoDevice = 3;
constexpr int kExitSticky = 4;

void send(std::ostream& out, const nlohmann::json& j) {
  // replace: a message quoting invalid UTF-8 (a compiler log, a file name) must still go out.
  out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  out.flush();
}

nlohmann::json fault_reply(int64_t id, const std::string& error) {
  EvalResult r;
  r.id = id;
  r.status = Status::RuntimeFault;
  r.error = error;
  nlohmann::json j = to_json(r);
  j["type"] = "result";
  return j;
}

// The id of a request that failed to parse, when it has a readable one.
int64_t id_of(const nlohmann::json& j) {
  if (j.is_object()) {
    auto it = j.find("id");
    if (it != j.end() && it->is_number_integer()) return it->get<int64_t>();
  }
  return 0;
}

}  // namespace

int run_worker(int device_index, std::istream& in, std::ostream& out) {
  if (auto why = gpu::device_unavailable(device_index)) {
    send(out, {{"type", "hello"}, {"error", *why}});
    return kExitNoDevice;
  }
  DeviceLimits dev;
  std::unique_ptr<Evaluator> ev;
  try {
    dev = gpu::open_device(device_index);
    ev = std::make_unique<Evaluator>(dev);
  } catch (const gpu::CudaError& e) {
    send(out, {{"type", "hello"}, {"error", std::string("cannot use CUDA device: ") + e.what()}});
    return kExitNoDevice;
  }
  send(out, {{"type", "hello"}, {"device", to_json(dev)}});

  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json req;
    try {
      req = nlohmann::json::parse(line);
    } catch (const std::exception& e) {
      send(out, fault_reply(0, std::string("protocol: malformed JSON: ") + e.what()));
      continue;
    }
    const int64_t id = id_of(req);
    std::string type;
    if (req.is_object() && req.contains("type") && req["type"].is_string()) type = req["type"].get<std::string>();
    try {
      if (type == "evaluate") {
        EvalRequest r;
        try {
          r = eval_request_from_json(req);
        } catch (const std::exception& e) {
          send(out, fault_reply(id, std::string("protocol: ") + e.what()));
          continue;
        }
        nlohmann::json reply = to_json(ev->evaluate(r));
        reply["type"] = "result";
        send(out, reply);
      } else if (type == "time_many") {
        TimeManyRequest r;
        try {
          r = time_many_request_from_json(req);
        } catch (const std::exception& e) {
          send(out, fault_reply(id, std::string("protocol: ") + e.what()));
          continue;
        }
        nlohmann::json reply = to_json(ev->time_many(r));
        reply["type"] = "times";
        send(out, reply);
      } else {
        send(out, fault_reply(id, "protocol: unknown request type '" + type + "'"));
      }
    } catch (const gpu::CudaError& e) {
      // Sticky: the context is gone. Answer, then exit so the orchestrator starts afresh.
      if (type == "time_many") {
        TimeManyResult t;
        t.id = id;
        for (const auto& item : req.value("items", nlohmann::json::array())) {
          EvalResult r;
          r.id = id_of(item);
          r.status = Status::RuntimeFault;
          r.error = e.what();
          t.items.push_back(r);
        }
        nlohmann::json reply = to_json(t);
        reply["type"] = "times";
        send(out, reply);
      } else {
        send(out, fault_reply(id, e.what()));
      }
      return kExitSticky;
    } catch (const std::exception& e) {
      send(out, fault_reply(id, std::string("worker: ") + e.what()));
    }
  }
  return 0;
}

}  // namespace kf
