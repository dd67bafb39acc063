// T1 tuning-problem files (the auto-tuning community's input schema, "TuningSchema" 1.0.0:
// ConfigurationSpace {TuningParameters, Conditions}, KernelSpecification {KernelFile,
// KernelName, GlobalSize, LocalSize, Arguments, ...}, Search, Budget) turned into a kforge
// family spec draft. T1 describes how to run one kernel; a family also needs a trusted
// reference, tolerances, shapes and costs, which T1 has no words for: the draft leaves them
// out and the notes say what to add.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "family/spec_limits.hpp"

namespace kf {

struct T1Draft {
  nlohmann::ordered_json spec;     // keys of docs/family_spec.md only
  std::vector<std::string> notes;  // what the draft lacks or could not translate, one line each
};

// The largest T1 file read, and the most values a T1 parameter may list or generate (a
// range(10**12) would otherwise be built in memory): the draft is a family spec, bounded alike
// (docs/family_spec.md, "Limits").
inline constexpr size_t kMaxT1Bytes = size_t{4} << 20;
inline constexpr size_t kMaxT1Values = spec_limits::kMaxValuesPerParam;

// True for a JSON object with ConfigurationSpace and KernelSpecification.
bool is_t1_file(const std::filesystem::path& path);
// Throws ImportError (one line, naming the file) for malformed input.
T1Draft t1_family_draft(const std::filesystem::path& path);

// Python expressions of T1 ("a // b", "x and not y", "2**i") in kforge's expression language,
// or "" when they use something it lacks. Exposed for tests.
std::string python_to_kforge_expr(const std::string& python);
// T1 "Values": a Python list literal, range(...), list(range(...)) or a comprehension
// "[expr for v in range(...)]" / "[expr for v in [..]]"; throws ImportError otherwise.
nlohmann::ordered_json t1_values(const std::string& python);

}  // namespace kf
