#include "importers/store_import.hpp"

#include <set>

#include "importers/import.hpp"
#include "importers/recorded_time.hpp"

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
  const DeviceKey key = imported_device(device);
  // The file's parameters must be the family's: a parameter it lacks would be filled in with the family's
  // first value, which says nothing about the kernel the other tool timed, and one it has in addition
  // tells configs apart that would be stored as one.
  std::set<std::string> theirs, ours;
  for (const auto& p : space.space().params()) theirs.insert(p.name);
  for (const auto& p : f.params) ours.insert(p.name);
  for (const auto& name : ours)
    if (!theirs.count(name))
      throw ImportError("the file's parameters lack " + f.name + "'s '" + name + "'; its times cannot be stored as " +
                        f.name + "'s configs");
  for (const auto& name : theirs)
    if (!ours.count(name)) throw ImportError("the file's parameter '" + name + "' is not one of " + f.name + "'s");
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
      configs.push_back(validate_config(f, pt.config));
    } catch (const std::exception& e) {
      throw ImportError("config " + to_string(pt.config) + " is not one of " + f.name + "'s: " + e.what());
    }
    if (pt.time_us) {
      const std::string bad = import_detail::bad_recorded_time(*pt.time_us);
      if (!bad.empty())
        throw ImportError("config " + to_string(pt.config) + ": time " + import_detail::time_text(*pt.time_us) +
                          " us is " + bad + " (not a measurement)");
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
    e.provenance = Provenance::Imported;  // no gate ran: replay and seeding only, never best or export
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
