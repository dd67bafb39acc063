// File reading and format detection for the importers.
#include <cctype>
#include <fstream>
#include <optional>
#include <sstream>

#include "importers/import.hpp"

namespace kf {

namespace {

using json = nlohmann::ordered_json;

// Kernel Tuner appends to its cache while tuning and closes it ("}\n}") at the end; an
// interrupted run leaves it open, possibly with a trailing comma. Its own reader closes such
// a file before parsing, and so does this.
std::optional<json> parse_open_cache(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  if (!text.empty() && text.back() == ',') text.pop_back();
  return json::parse(text + "}\n}", nullptr, false);
}

}  // namespace

RecordedSpace import_recorded(const std::filesystem::path& path) {
  const std::string where = path.string() + ": ";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ImportError(where + "cannot open");
  std::stringstream buf;
  buf << in.rdbuf();
  std::string text = buf.str();
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    auto closed = parse_open_cache(text);
    if (!closed || closed->is_discarded())
      throw ImportError(where + "not valid JSON");
    j = std::move(*closed);
  }
  try {
    if (j.is_object() && j.contains("cache") && j.contains("tune_params"))
      return import_kernel_tuner_cache(j);
    if (j.is_object() && j.contains("results")) return import_t4(j, path.stem().string());
  } catch (const ImportError& e) {
    throw ImportError(where + e.what());
  }
  throw ImportError(where + "neither a Kernel Tuner cache (cache, tune_params) nor T4 results (results)");
}

}  // namespace kf
