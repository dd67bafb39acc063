#include "cli/device_choice.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include "gpu/device.hpp"

namespace kf::cli {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_imported(const DeviceKey& d) { return d.cc == 0 && d.driver == "imported"; }

// A stored key of the same GPU model as `d`: its own key first, else one of another driver (a driver update
// does not make the GPU another device for a query).
std::optional<DeviceKey> stored_key_of(const Store& store, const DeviceKey& d) {
  std::optional<DeviceKey> same_model;
  for (const auto& s : store.devices()) {
    if (is_imported(s) || s.name != d.name || s.cc != d.cc || s.sm_count != d.sm_count) continue;
    if (s.driver == d.driver) return s;
    if (!same_model) same_model = s;
  }
  return same_model;
}

}  // namespace

std::optional<DeviceKey> local_device() {
  if (gpu::device_unavailable(0)) return std::nullopt;
  try {
    return device_key(gpu::describe_device(0));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string stored_device_names(const Store& store) {
  std::set<std::string> names;
  for (const auto& d : store.devices())
    if (!is_imported(d)) names.insert(d.name);
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

DeviceChoice choose_device(const Store& store, const std::string& arg) {
  DeviceChoice c;
  if (arg == "all") return c;
  if (arg == "local") {
    const auto here = local_device();
    if (!here) return c;  // no GPU here: every device's results, each row naming its device
    c.local = here->name;
    c.key = stored_key_of(store, *here).value_or(*here);  // an unstored key answers nothing: all fall back
    c.fallback = true;
    return c;
  }
  std::vector<DeviceKey> exact, partial;
  for (const auto& d : store.devices()) {
    if (is_imported(d)) continue;
    if (d.name == arg) exact.push_back(d);
    else if (lower(d.name).find(lower(arg)) != std::string::npos) partial.push_back(d);
  }
  const auto& found = exact.empty() ? partial : exact;
  std::set<std::string> names;
  for (const auto& d : found) names.insert(d.name);
  if (names.empty())
    throw std::runtime_error("--device '" + arg + "': no stored results of such a device (the store has: " +
                             stored_device_names(store) + ")");
  if (names.size() > 1) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw std::runtime_error("--device '" + arg + "' names several devices (" + list + "); give the whole name");
  }
  c.key = found.front();
  return c;
}

}  // namespace kf::cli
