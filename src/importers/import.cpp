// File reading and format detection for the importers.
#include <cctype>
#include <optional>

#include "importers/import.hpp"
#include "util/json_text.hpp"

namespace kf {

namespace {

using ojson = nlohmann::ordered_json;

// Kernel Tuner appends to its cache while tuning and closes it ("}\n}") at the end; an
// interrupted run leaves it open, possibly with a trailing comma. Its own reader closes such
// a file before parsing, and so does this.
std::optional<ojson> parse_open_cache(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  if (!text.empty() && text.back() == ',') text.pop_back();
  return parse_ordered(text + "}\n}");
}

}  // namespace

RecordedSpace import_recorded(const std::filesystem::path& path) {
  const std::string where = path.string() + ": ";
  std::string text;
  try {
    text = read_bounded(path, kMaxImportBytes, "the bound of imported files, README.md");
  } catch (const JsonFileError& e) {
    throw ImportError(e.what());
  }
  if (std::string deep = json_nesting_problem(text); !deep.empty()) throw ImportError(where + "invalid JSON: " + deep);
  std::optional<ojson> parsed = parse_ordered(text);
  if (!parsed) {
    parsed = parse_open_cache(text);
    // The error of the file as it is: where the text stops being JSON.
    if (!parsed) throw ImportError(where + "invalid JSON: " + json_problem(text));
  }
  const ojson& j = *parsed;
  try {
    if (j.is_object() && j.contains("cache") && j.contains("tune_params"))
      return import_kernel_tuner_cache(j);
    if (j.is_object() && j.contains("results")) return import_t4(j, path.stem().string());
  } catch (const ImportError& e) {
    throw ImportError(where + one_line(e.what()));
  }
  throw ImportError(where + "neither a Kernel Tuner cache (cache, tune_params) nor T4 results (results)");
}

}  // namespace kf
