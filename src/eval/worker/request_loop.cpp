#include "eval/worker/request_loop.hpp"

#include <istream>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "gpu/check.hpp"

namespace kf {

namespace {

nlohmann::json fault_reply(int64_t id, const std::string& error) {
  EvalResult r;
  r.id = id;
  r.status = Status::RuntimeFault;
  r.error = error;
  nlohmann::json j = to_json(r);
  j["type"] = "result";
  return j;
}

// The id of a request, when it has a readable one (so even a rejected request is matched).
int64_t id_of(const nlohmann::json& j) {
  if (j.is_object()) {
    auto it = j.find("id");
    if (it != j.end() && it->is_number_integer()) return it->get<int64_t>();
  }
  return 0;
}

// A sticky error ends the session; every item of a time_many gets the fault.
nlohmann::json sticky_reply(const std::string& type, const nlohmann::json& req, const std::string& error) {
  if (type != "time_many") return fault_reply(id_of(req), error);
  TimeManyResult t;
  t.id = id_of(req);
  const auto items = req.find("items");
  if (items != req.end() && items->is_array()) {
    for (const auto& item : *items) {
      EvalResult r;
      r.id = id_of(item);
      r.status = Status::RuntimeFault;
      r.error = error;
      t.items.push_back(r);
    }
  }
  nlohmann::json j = to_json(t);
  j["type"] = "times";
  return j;
}

}  // namespace

void send_line(std::ostream& out, const nlohmann::json& j) {
  // replace: a message quoting invalid UTF-8 (a compiler log, a file name) must still go out.
  out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  out.flush();
}

int serve_requests(RequestHandler& handler, std::istream& in, std::ostream& out) {
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json req;
    try {
      req = nlohmann::json::parse(line);
    } catch (const std::exception& e) {
      send_line(out, fault_reply(0, std::string("protocol: malformed JSON: ") + e.what()));
      continue;
    }
    const int64_t id = id_of(req);
    std::string type;
    if (req.is_object() && req.contains("type") && req["type"].is_string()) type = req["type"].get<std::string>();
    if (type != "evaluate" && type != "time_many") {
      send_line(out, fault_reply(id, "protocol: unknown request type '" + type + "'"));
      continue;
    }
    // Parse first: a malformed request is the sender's problem, answered as such.
    EvalRequest eval;
    TimeManyRequest many;
    try {
      if (type == "evaluate") eval = eval_request_from_json(req);
      else many = time_many_request_from_json(req);
    } catch (const std::exception& e) {
      send_line(out, fault_reply(id, std::string("protocol: ") + e.what()));
      continue;
    }
    try {
      nlohmann::json reply;
      if (type == "evaluate") {
        reply = to_json(handler.evaluate(eval));
        reply["type"] = "result";
      } else {
        reply = to_json(handler.time_many(many));
        reply["type"] = "times";
      }
      send_line(out, reply);
    } catch (const gpu::CudaError& e) {
      send_line(out, sticky_reply(type, req, e.what()));
      // Only a sticky error kills the context; a stray non-sticky one is answered like any fault.
      if (e.sticky()) return kWorkerExitSticky;
      cudaGetLastError();
    } catch (const std::exception& e) {
      send_line(out, sticky_reply(type, req, std::string("worker: ") + e.what()));
    }
  }
  return 0;
}

}  // namespace kf
