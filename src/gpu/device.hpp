// Choosing and describing the device a worker measures on.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "core/vocabulary.hpp"

namespace kf::gpu {

// Why device `index` cannot be used, as one line ("no CUDA device available (cudaErrorNoDevice:
// no CUDA-capable device is detected)"), or nullopt when it can.
std::optional<std::string> device_unavailable(int index);

// The limits and identity of device `index`, without creating a context on it (a query's look at which GPU
// this machine has). Throws CudaError.
DeviceLimits describe_device(int index);

// Makes `index` the current device and returns its limits and identity. Throws CudaError.
DeviceLimits open_device(int index);

// Free and total memory of the current device, in bytes. Throws CudaError.
std::pair<size_t, size_t> memory_info();

}  // namespace kf::gpu
