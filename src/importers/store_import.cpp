#include "importers/store_import.hpp"

#include "importers/import.hpp"

namespace kf {

Status status_of_failure(const std::string& failure) {
  if (failure == "InvalidConfig" || failure == "constraints") return Status::Invalid;
  if (failure == "CompilationFailedConfig" || failure == "compile") return Status::CompileError;
  if (failure == "correctness") return Status::WrongResult;
  if (failure == "timeout") return Status::Timeout;
  return Status::RuntimeFault;
}

StoreImportSummary store_recorded(Store& store, const Family& f, const Shape& shape,
                                  const RecordedSpace& space, const std::string& device) {
  if (device.empty()) throw ImportError("the file names no device; give --device");
  DeviceKey key{device, 0, 0, "imported"};
  // Cost per shape, for TFLOP/s in `best`: cost expressions read dims (device limits unknown).
  double flops = 0, bytes = 0;
  try {
    const Scope scope = make_reference_scope(f, shape, DeviceLimits{});
    flops = f.flops.empty() ? 0 : f.flops.eval_double(scope);
    bytes = f.bytes.empty() ? 0 : f.bytes.eval_double(scope);
  } catch (const std::exception&) {
    flops = bytes = 0;  // a cost that needs the device: TFLOP/s stays unknown
  }
  // Validate everything before writing anything: a bad file leaves the database untouched.
  std::vector<Config> configs;
  for (const auto& pt : space.points()) {
    try {
      configs.push_back(validate_config(f, complete_stored_config(f, pt.config)));
    } catch (const std::exception& e) {
      throw ImportError("config " + to_string(pt.config) + " is not one of " + f.name + "'s: " + e.what());
    }
  }
  const auto known = store.evaluated_config_keys(f.name, shape, key);
  StoreImportSummary summary;
  for (size_t i = 0; i < configs.size(); ++i) {
    const RecordedPoint& pt = space.points()[i];
    if (known.count(to_string(configs[i]))) {
      ++summary.already_stored;
      continue;
    }
    EvaluationRecord e;
    e.family = f.name;
    e.config = configs[i];
    e.shape = shape;
    e.device = key;
    e.flops = flops;
    e.bytes = bytes;
    if (pt.time_us) {
      e.status = Status::Ok;
      TimingStats t;
      t.median_us = t.p10_us = t.p90_us = t.ci_lo_us = t.ci_hi_us = t.plain_median_us = *pt.time_us;
      t.reps = 1;
      t.launches_per_rep = 1;
      e.timing = t;
    } else {
      e.status = status_of_failure(pt.failure);
      e.error = "imported: " + (pt.failure.empty() ? std::string("failed") : pt.failure);
    }
    store.add_evaluation(e);
    ++summary.written;
  }
  return summary;
}

}  // namespace kf
