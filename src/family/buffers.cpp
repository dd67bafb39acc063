#include "family/buffers.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "util/hash.hpp"

namespace kf {

DType dtype_from_string(const std::string& s) {
  if (s == "f16") return DType::F16;
  if (s == "bf16") return DType::BF16;
  if (s == "f32") return DType::F32;
  if (s == "i32") return DType::I32;
  throw std::invalid_argument("unknown dtype '" + s + "' (expected f16, bf16, f32 or i32)");
}

const char* to_string(DType d) {
  switch (d) {
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F32: return "f32";
    case DType::I32: return "i32";
  }
  return "?";
}

size_t dtype_size(DType d) { return d == DType::F16 || d == DType::BF16 ? 2 : 4; }

uint16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mant = x & 0x7fffffu;
  const int exp = static_cast<int>((x >> 23) & 0xffu);
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int e = exp - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow: infinity
  if (e <= 0) {                                                   // half subnormal or zero
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const unsigned shift = static_cast<unsigned>(14 - e);
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry rolls into the exponent
  return static_cast<uint16_t>(h);
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0x1f) {
    x = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    x = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {
    x = sign;
  } else {  // subnormal: normalise
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while (!(mant & 0x400u));
    x = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t f32_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

float bf16_to_f32(uint16_t h) {
  const uint32_t x = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

namespace {

uint64_t name_hash(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// PCG32 (XSH RR): small, fast and good enough for test data.
struct Pcg32 {
  uint64_t state, inc;
  Pcg32(uint64_t seed, uint64_t stream) : state(0), inc((stream << 1u) | 1u) {
    next();
    state += seed;
    next();
  }
  uint32_t next() {
    const uint64_t old = state;
    state = old * 6364136223846793005ULL + inc;
    const auto xorshifted = static_cast<uint32_t>(((old >> 18u) ^ old) >> 27u);
    const auto rot = static_cast<uint32_t>(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
  }
  double uniform() { return (next() >> 8) * (1.0 / 16777216.0); }  // [0, 1), 24 bits
};

constexpr size_t kChunk = size_t{1} << 20;  // elements per independent generator

void fill_chunk(DType d, unsigned char* out, size_t begin, size_t end, double lo, double hi, double scale,
                uint64_t seed, uint64_t chunk) {
  Pcg32 rng(splitmix64(seed ^ splitmix64(chunk)), chunk);
  for (size_t i = begin; i < end; ++i) {
    const double v = (lo + (hi - lo) * rng.uniform()) * scale;
    unsigned char* p = out + i * dtype_size(d);
    switch (d) {
      case DType::F16: {
        const uint16_t h = f32_to_f16(static_cast<float>(v));
        std::memcpy(p, &h, 2);
        break;
      }
      case DType::BF16: {
        const uint16_t h = f32_to_bf16(static_cast<float>(v));
        std::memcpy(p, &h, 2);
        break;
      }
      case DType::F32: {
        const auto f = static_cast<float>(v);
        std::memcpy(p, &f, 4);
        break;
      }
      case DType::I32: {
        const auto n = static_cast<int32_t>(std::floor(v));
        std::memcpy(p, &n, 4);
        break;
      }
    }
  }
}

}  // namespace

std::vector<unsigned char> read_raw_file(const std::string& path, DType d, size_t count) {
  const size_t want = count * dtype_size(d);
  std::error_code ec;
  const auto have = std::filesystem::file_size(path, ec);
  if (ec) throw std::runtime_error(path + ": cannot read: " + ec.message());
  if (have != want)
    throw std::runtime_error(path + ": " + std::to_string(have) + " bytes, expected " + std::to_string(want) + " (" +
                             std::to_string(count) + " " + to_string(d) + " elements)");
  std::vector<unsigned char> out(want);
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(want)))
    throw std::runtime_error(path + ": cannot read " + std::to_string(want) + " bytes");
  return out;
}

std::vector<unsigned char> random_fill(DType d, size_t count, double lo, double hi, double scale,
                                       uint64_t seed, const std::string& name) {
  std::vector<unsigned char> out(count * dtype_size(d));
  const uint64_t base = splitmix64(seed) ^ name_hash(name);
  const size_t chunks = (count + kChunk - 1) / kChunk;
  // Chunks are the unit of determinism; threads only decide who fills which chunk.
  const size_t nthreads = std::min<size_t>(chunks, std::max(1u, std::thread::hardware_concurrency()));
  auto work = [&](size_t t) {
    for (size_t c = t; c < chunks; c += nthreads)
      fill_chunk(d, out.data(), c * kChunk, std::min(count, (c + 1) * kChunk), lo, hi, scale, base, c);
  };
  if (nthreads <= 1) {
    if (chunks) work(0);
  } else {
    std::vector<std::thread> threads;
    for (size_t t = 0; t < nthreads; ++t) threads.emplace_back(work, t);
    for (auto& th : threads) th.join();
  }
  return out;
}

std::vector<float> to_floats(DType d, const void* bytes, size_t count) {
  std::vector<float> out(count);
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (size_t i = 0; i < count; ++i) {
    switch (d) {
      case DType::F16: {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = f16_to_f32(h);
        break;
      }
      case DType::BF16: {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = bf16_to_f32(h);
        break;
      }
      case DType::F32:
        std::memcpy(&out[i], p + 4 * i, 4);
        break;
      case DType::I32: {
        int32_t n;
        std::memcpy(&n, p + 4 * i, 4);
        out[i] = static_cast<float>(n);
        break;
      }
    }
  }
  return out;
}

}  // namespace kf
