#include "campaign/config_gate.hpp"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "winner/current_results.hpp"

namespace kf {

namespace {

// The newest record of kforge's own for the config that did not pass (its gate's verdict), if any.
std::optional<EvaluationRecord> last_failure(const Store& store, const Family& family, const Shape& shape,
                                             const Config& config, const std::optional<DeviceKey>& device) {
  std::optional<EvaluationRecord> out;
  for (auto& e : store.evaluations(family.name, shape, device))
    if (e.provenance == Provenance::Kforge && e.status != Status::Ok && e.status != Status::Interrupted &&
        to_string(complete_stored_config(family, e.config)) == to_string(config))
      out = std::move(e);  // (in id order: the newest last)
  return out;
}

}  // namespace

EvaluationRecord gate_config(Store& store, const Family& family, const Shape& shape, const Config& config,
                             const std::optional<DeviceKey>& device, CampaignOptions base) {
  if (auto r = gated_record(store, family, shape, config, device)) return *r;
  const std::string what = "config " + to_string(config) + " at " + to_string(shape);
  spdlog::info("{} has not passed the gate; gating it on this machine's GPU", what);
  CampaignOptions o = std::move(base);
  o.strategy = "refresh";
  o.seeding = "none";
  o.listed = {{to_string(shape), {config}}};
  o.remeasure_top_k = 1;  // one config: nothing to rank side by side
  try {
    run_campaign(store, family, {shape}, o);
  } catch (const std::exception& e) {
    const std::string why = e.what();  // (its first line: the message stays one)
    throw std::runtime_error(what + " has not passed the gate and cannot be gated here (" +
                             why.substr(0, why.find('\n')) + "); export it on a machine with a GPU (it is gated there first), or --ungated");
  }
  if (auto r = gated_record(store, family, shape, config, device)) return *r;
  if (const auto failed = last_failure(store, family, shape, config, device)) {
    const std::string why = failed->error.substr(0, failed->error.find('\n'));
    throw std::runtime_error(what + " did not pass the gate on " + failed->device.name + " (" +
                             to_string(failed->status) + (why.empty() ? "" : ": " + why) +
                             "); export --ungated writes it without one");
  }
  throw std::runtime_error(what + " has not passed the gate" + (device ? " on " + device->name : std::string()) +
                           "; export it on a machine with a GPU (it is gated there first), or --ungated");
}

}  // namespace kf
