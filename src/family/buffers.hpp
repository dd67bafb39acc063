// Host side of the gate's buffers: element types, deterministic random inputs, and the
// conversion of device bytes to floats for comparison. No CUDA here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kf {

enum class DType { F16, BF16, F32, I32 };

DType dtype_from_string(const std::string& s);  // "f16" | "bf16" | "f32" | "i32"; throws std::invalid_argument
const char* to_string(DType d);
size_t dtype_size(DType d);

// IEEE conversions with round-to-nearest-even (the device's __float2half_rn / __float2bfloat16_rn).
uint16_t f32_to_f16(float f);
float f16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);
float bf16_to_f32(uint16_t h);

// `count` elements uniform in [lo, hi) * scale, in the device layout of `d` (i32 takes the
// floor). Deterministic in (seed, name) and independent of the number of threads used.
std::vector<unsigned char> random_fill(DType d, size_t count, double lo, double hi, double scale,
                                       uint64_t seed, const std::string& name);

// A raw data file (`init.file`, `expected` in a spec): exactly `count` elements of `d` in the
// device layout (little-endian, as numpy's tofile writes them). Throws std::runtime_error naming
// the file when it cannot be read or its size is not count * dtype_size(d) bytes.
std::vector<unsigned char> read_raw_file(const std::string& path, DType d, size_t count);

// Device-layout bytes -> floats.
std::vector<float> to_floats(DType d, const void* bytes, size_t count);

}  // namespace kf
