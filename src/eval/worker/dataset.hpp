// One gate problem on the device: seeded inputs (kept pristine), the reference kernel's
// outputs (on the host, as floats), and the working buffers candidates run on. Built once
// per (family, reference, shape, input scale, seed) and reused by every config evaluated on it.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "eval/worker/guarded_buffer.hpp"
#include "eval/worker/tensor_map_encode.hpp"
#include "family/buffers.hpp"
#include "family/family.hpp"
#include "gpu/buffer.hpp"
#include "gpu/library.hpp"
#include "gpu/stream.hpp"

namespace kf {

struct BufferSlot {
  const BufferSpec* spec = nullptr;
  DType dtype = DType::F32;
  size_t count = 0;                // elements; scratch: of the last prepare()
  gpu::DeviceBuffer pristine;      // inputs only
  std::vector<unsigned char> pristine_host;  // inputs only: to check that a kernel left them alone
  GuardedBuffer work;              // what kernels get, between guard bands
  std::vector<float> reference;    // outputs only
};

// Kernel parameters: 8-byte slots for pointers and scalars, 128-byte aligned storage for tensor
// maps, and the pointer array cudaLaunchKernel takes. `ptrs` points into `slots` and `maps`,
// which are sized before it is filled and never resized after; a move keeps their storage, a
// copy would not, so there is none.
struct ArgPack {
  std::vector<uint64_t> slots;
  std::vector<TensorMapBytes> maps;
  std::vector<void*> ptrs;

  ArgPack() = default;
  ArgPack(ArgPack&&) = default;
  ArgPack& operator=(ArgPack&&) = default;
  ArgPack(const ArgPack&) = delete;
  ArgPack& operator=(const ArgPack&) = delete;
};

class DataSet {
 public:
  // Allocates and fills the inputs; input and output sizes and types are evaluated in the
  // reference scope (dims and device only). Throws ExprError, std::invalid_argument, CudaError.
  DataSet(const Family& f, const Shape& shape, double input_scale, uint64_t seed, const DeviceLimits& dev,
          const gpu::Stream& stream);
  DataSet(const DataSet&) = delete;
  DataSet& operator=(const DataSet&) = delete;

  // Restores inputs from the pristine copies and fills outputs with NaN (0xFF bytes). Scratch
  // buffers named in `args` are sized in `scope`; they are zeroed when (re)allocated and
  // when zero_scratch is set.
  void prepare(const std::vector<ArgSpec>& args, const Scope& scope, bool zero_scratch);
  // Throws ExprError for a value out of range or a tensor map the rules or the driver refuse.
  ArgPack pack(const std::vector<ArgSpec>& args, const Scope& scope) const;
  // Downloads output slot i (waits for the stream) as floats.
  std::vector<float> read_output(size_t i) const;
  // After a launch: every buffer's guard bands intact and every input as prepare() left it.
  // Returns the first violation as one line (ending in " on <where>"), restoring what it
  // found damaged; nullopt when all is well. Waits for the stream.
  std::optional<std::string> check_integrity(const std::string& where);
  // Runs the reference once (after prepare) and keeps its outputs. Returns an error line if
  // its launch was refused or its outputs contain NaN/Inf; throws CudaError when sticky.
  std::optional<std::string> run_reference(cudaKernel_t ref, const gpu::LaunchDims& dims, const ArgPack& args,
                                           const DeviceLimits& dev);

  std::vector<BufferSlot>& slots() { return slots_; }
  const std::vector<BufferSlot>& slots() const { return slots_; }
  size_t device_bytes() const;
  size_t host_bytes() const;  // pristine inputs and reference outputs kept on the host
  const Shape& shape() const { return shape_; }

 private:
  const gpu::Stream& stream_;
  Shape shape_;
  std::vector<BufferSlot> slots_;
};

// Sets the dynamic shared memory limit when needed, launches and waits. Returns a one-line
// reason when the launch is refused or the kernel fails with a non-sticky error; throws
// gpu::CudaError for sticky errors (the worker must exit).
std::optional<std::string> launch_and_wait(cudaKernel_t k, const gpu::LaunchDims& dims, const ArgPack& args,
                                           const gpu::Stream& stream);

std::string describe(const gpu::LaunchDims& d);  // "grid (8,1,1) block (256,1,1) smem 0"

}  // namespace kf
