// `kforge import FILE --store`: an imported recorded space written into the results database
// as evaluations of a family's shape, marked imported (Provenance::Imported): `replay --family` and the
// seeding of a campaign read them like kforge's own, while `best`, export and the finalists never take one,
// since kforge's gate never ran them.
#pragma once
#include <string>

#include "family/family.hpp"
#include "replay/recorded_space.hpp"
#include "store/store.hpp"

namespace kf {

struct StoreImportSummary {
  size_t written = 0;
  size_t already_stored = 0;  // configs the database held for this device already (skipped)
};

// The file's parameters must be exactly the family's, its values in the family's domains, and each time a
// measurement (finite, at least a nanosecond: importers/recorded_time.hpp). Points become evaluations with
// no campaign on imported_device(device) (cc 0: never mistaken for a measured device, so no campaign skips
// configs because of them); failures keep their kind (constraints, compile, correctness, timeout, else
// runtime_fault). Configs the database already holds for this family, shape and device are skipped, so
// importing twice adds nothing. Throws ImportError naming the first offending config, before writing any.
StoreImportSummary store_recorded(Store& store, const Family& f, const Shape& shape,
                                  const RecordedSpace& space, const std::string& device);

// Kernel Tuner's and T4's failure names -> kforge's status (runtime_fault when unknown).
Status status_of_failure(const std::string& failure);

}  // namespace kf
