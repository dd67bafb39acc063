// The GPU's energy counter, read through NVML (libnvidia-ml, loaded at run time like the driver, so kforge
// runs where it is missing): millijoules the device has used since the driver loaded. The worker reads it
// around a timed stretch of back-to-back launches to give each timed evaluation its energy per launch and
// mean power. Where NVML or the counter is unavailable (no library, a GPU before Volta, a container without
// access), every read is empty and why is said once.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace kf::gpu {

class EnergyMeter {
 public:
  // For the current CUDA device.
  EnergyMeter();
  // mJ since the driver loaded, or nullopt where unavailable.
  std::optional<uint64_t> read_mj() const;
  bool available() const { return handle_ != nullptr; }
  // Why it is unavailable ("" when available).
  const std::string& why_not() const { return why_not_; }

 private:
  void* handle_ = nullptr;  // nvmlDevice_t
  using EnergyFn = int (*)(void*, unsigned long long*);
  EnergyFn energy_ = nullptr;
  std::string why_not_;
};

}  // namespace kf::gpu
