// Baseline timings measured by tools/ (PyTorch backends, cuBLAS), as `kforge baseline import`
// reads them: a JSON list of {family, shape{}, backend, median_us, device{name, cc, sm_count[,
// driver]}}. Every record is checked before anything is stored, so an import is all or nothing.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "family/family.hpp"
#include "store/store.hpp"

namespace kf {

// One line: "<file>: record <i>: <field>: <problem>".
struct BaselineImportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// How large a baseline file may be (README.md, "Limits"): the tools write a few hundred records,
// and every record is validated and held in memory before anything is stored.
inline constexpr size_t kMaxBaselineBytes = size_t{4} << 20;
inline constexpr size_t kMaxBaselineRecords = 10000;

// The file's JSON, read within kMaxBaselineBytes; BaselineImportError ("<file>: ...", with the
// line, column and field of invalid JSON) otherwise.
nlohmann::json read_baseline_file(const std::string& file);

// Validates every record of list (names, ranges, a known family and a valid shape of it) and
// returns them in order; at most kMaxBaselineRecords. load_family is asked only for names that could be family names
// (letters, digits, '_'); it throws for an unknown one. A record without a driver takes the
// driver of a known device with the same name, cc and SM count.
std::vector<BaselineRecord> parse_baseline_records(
    const nlohmann::json& list, const std::string& file,
    const std::function<Family(const std::string&)>& load_family,
    const std::vector<DeviceKey>& known_devices);

}  // namespace kf
