#include "replay/stored_space.hpp"

#include <cstdio>
#include <map>
#include <stdexcept>

namespace kf {

StoredSpace stored_space(Store& store, const Family& f, const Shape& shape, const std::string& device_name) {
  std::map<std::string, std::vector<EvaluationRecord>> by_device;
  for (auto& e : store.evaluations(f.name, shape))
    if (e.status != Status::Interrupted) by_device[e.device.name].push_back(std::move(e));
  if (by_device.empty()) throw std::runtime_error("no stored evaluations of " + f.name + " at " + to_string(shape));
  std::string chosen = device_name;
  if (chosen.empty())
    for (const auto& [name, evals] : by_device)
      if (chosen.empty() || evals.size() > by_device[chosen].size()) chosen = name;
  if (!by_device.count(chosen)) throw std::runtime_error("no evaluations on device " + chosen);
  std::vector<RecordedPoint> points;
  size_t dropped = 0;
  for (const auto& e : by_device[chosen]) {
    const Config config = complete_stored_config(f, e.config);
    try {
      validate_config(f, config);
    } catch (const SpecError&) {
      ++dropped;  // a value the family no longer has (sdpa_fwd's MMA=simt / wmma moved to sdpa_basic)
      continue;
    }
    points.push_back({config, e.status == Status::Ok && e.timing ? std::optional<double>(e.timing->median_us)
                                                                 : std::nullopt});
  }
  if (dropped)
    std::fprintf(stderr, "replay: %zu recorded config(s) with values outside %s's current domains left out\n",
                 dropped, f.name.c_str());
  if (points.empty()) throw std::runtime_error("no recorded config of " + f.name + " is in its current space");
  std::vector<ParamSpec> params;
  for (const auto& p : f.params) {
    ParamSpec narrowed{p.name, {}, {}};
    for (size_t k = 0; k < p.values.size(); ++k)
      for (const auto& pt : points)
        if (pt.config.at(p.name) == p.values[k]) {
          narrowed.values.push_back(p.values[k]);
          if (!p.weights.empty()) narrowed.weights.push_back(p.weights[k]);
          break;
        }
    params.push_back(std::move(narrowed));
  }
  return {RecordedSpace(params, points, f.name + " " + to_string(shape) + " on " + chosen,
                        {{"family", f.name}, {"shape", to_json(shape)}, {"device", chosen}}),
          by_device[chosen].front().device};
}

std::vector<Config> neighbour_seeds(Store& store, const Family& f, const Shape& shape, const DeviceKey& device,
                                    size_t count) {
  std::vector<Config> out;
  // (a replay may run on imported records: their configs seed it as kforge's would)
  for (const auto& e : store.top(f.name, shape, device, count, RecordsFrom::KforgeAndImported))
    out.push_back(complete_stored_config(f, e.config));
  if (out.empty())
    throw std::runtime_error("--seed-from: no successful evaluation of " + to_string(shape) + " on " + device.name);
  return out;
}

}  // namespace kf
