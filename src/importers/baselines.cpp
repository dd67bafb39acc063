#include "importers/baselines.hpp"

#include <cctype>
#include <cmath>
#include <map>

#include "util/json_text.hpp"
#include "util/text.hpp"

namespace kf {

namespace {

// A name that is printable, short, and cannot act as a path ("../x", "a/b").
std::string check_name(const nlohmann::json& j, const char* field, size_t max_len) {
  if (!j.is_string()) throw std::invalid_argument(std::string(field) + ": expected a string");
  const std::string s = j.get<std::string>();
  if (s.empty() || s.size() > max_len)
    throw std::invalid_argument(std::string(field) + ": expected 1 to " + std::to_string(max_len) + " characters");
  for (char c : s)
    if (!std::isprint(static_cast<unsigned char>(c)))
      throw std::invalid_argument(std::string(field) + ": contains a control character");
  if (s.find('/') != std::string::npos || s.find('\\') != std::string::npos || s.find("..") != std::string::npos)
    throw std::invalid_argument(std::string(field) + ": '" + s + "' must not contain '/', '\\' or '..'");
  return s;
}

int64_t check_int(const nlohmann::json& j, const char* field, int64_t lo, int64_t hi) {
  // A float or an integer outside int range used to be wrapped by get<int>().
  if (!j.is_number_integer())
    throw std::invalid_argument(std::string(field) + ": expected a whole number, got " + j.dump());
  const bool too_big = j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
  const int64_t v = too_big ? INT64_MAX : j.get<int64_t>();
  if (too_big || v < lo || v > hi)
    throw std::invalid_argument(std::string(field) + ": expected " + std::to_string(lo) + " to " +
                                std::to_string(hi) + ", got " + j.dump());
  return v;
}

const nlohmann::json& member(const nlohmann::json& j, const char* field) {
  if (!j.is_object()) throw std::invalid_argument("expected an object");
  auto it = j.find(field);
  if (it == j.end()) throw std::invalid_argument(std::string(field) + ": missing");
  return *it;
}

BaselineRecord parse_record(const nlohmann::json& j, std::map<std::string, Family>& families,
                            const std::function<Family(const std::string&)>& load_family,
                            const std::vector<DeviceKey>& known_devices) {
  BaselineRecord b;
  b.family = check_name(member(j, "family"), "family", 64);
  if (!is_identifier(b.family))
    throw std::invalid_argument("family: '" + b.family + "' is not a family name (letters, digits, '_')");
  auto fam = families.find(b.family);
  if (fam == families.end()) {
    try {
      fam = families.emplace(b.family, load_family(b.family)).first;
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string("family: ") + e.what());
    }
  }
  try {
    b.shape = validate_shape(fam->second, assignment_from_json(member(j, "shape")));
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("shape: ") + e.what());
  }
  b.backend = check_name(member(j, "backend"), "backend", 64);
  const nlohmann::json& t = member(j, "median_us");
  if (!t.is_number() || !std::isfinite(t.get<double>()) || t.get<double>() <= 0 || t.get<double>() > 1e12)
    throw std::invalid_argument("median_us: expected a positive, finite time in microseconds, got " + t.dump());
  b.median_us = t.get<double>();
  const nlohmann::json& d = member(j, "device");
  b.device.name = check_name(member(d, "name"), "device.name", 128);
  b.device.cc = static_cast<int>(check_int(member(d, "cc"), "device.cc", 10, 1000));
  b.device.sm_count = static_cast<int>(check_int(member(d, "sm_count"), "device.sm_count", 1, 100000));
  if (d.contains("driver")) b.device.driver = check_name(d.at("driver"), "device.driver", 64);
  // Match the device kforge's workers recorded (same name, cc and SMs), driver included.
  for (const auto& known : known_devices)
    if (b.device.driver.empty() && known.name == b.device.name && known.cc == b.device.cc &&
        known.sm_count == b.device.sm_count)
      b.device.driver = known.driver;
  b.extra = j;
  return b;
}

}  // namespace

nlohmann::json read_baseline_file(const std::string& file) {
  try {
    return parse_json_file_text<nlohmann::json>(
        read_bounded(file, kMaxBaselineBytes, "the bound of baseline files, README.md"), file);
  } catch (const JsonFileError& e) {
    throw BaselineImportError(e.what());
  }
}

std::vector<BaselineRecord> parse_baseline_records(
    const nlohmann::json& list, const std::string& file,
    const std::function<Family(const std::string&)>& load_family,
    const std::vector<DeviceKey>& known_devices) {
  if (!list.is_array()) throw BaselineImportError(file + ": expected a JSON list of records");
  if (list.size() > kMaxBaselineRecords)
    throw BaselineImportError(file + ": " + std::to_string(list.size()) + " records; a file holds at most " +
                              std::to_string(kMaxBaselineRecords) + " (split it)");
  std::map<std::string, Family> families;
  std::vector<BaselineRecord> out;
  for (size_t i = 0; i < list.size(); ++i) {
    try {
      out.push_back(parse_record(list[i], families, load_family, known_devices));
    } catch (const std::exception& e) {
      std::string msg = e.what();
      if (auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
      throw BaselineImportError(file + ": record " + std::to_string(i) + ": " + one_line(msg));
    }
  }
  return out;
}

}  // namespace kf
