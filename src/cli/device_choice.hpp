// --device of the queries that answer from stored results (best, export): which device's results they
// answer for. Results of two devices do not compare, so a query answers for one device unless asked for all.
// By default that is the local GPU; a shape it has no result for is answered from the other devices' results,
// each row naming its device, and the command says so in one line (with the refresh that re-times them here).
#pragma once
#include <optional>
#include <string>

#include "store/store.hpp"

namespace kf::cli {

struct DeviceChoice {
  std::optional<DeviceKey> key;  // the device answered for; nullopt: every device
  bool fallback = false;         // "local" on a machine with a GPU: a shape without its result takes any device's
  std::string local;             // the local GPU's name where one was looked at ("" otherwise)
};

// `arg`: "local" (the GPU this machine has; every device where it has none), "all", or a stored device's
// name (exact, else a case-insensitive part of exactly one stored name, e.g. "H100"). Throws a one-line
// error naming the stored devices where a name matches none or several.
DeviceChoice choose_device(const Store& store, const std::string& arg);

// The local GPU (device 0) as the store keys devices, or nullopt where there is no usable GPU.
std::optional<DeviceKey> local_device();

// The stored devices other than the imported ones, "A, B" (for messages).
std::string stored_device_names(const Store& store);

}  // namespace kf::cli
