// Loading cubins (cudaLibraryLoadData) and launching their kernels.
#pragma once
#include <array>
#include <filesystem>
#include <string>

#include <cuda_runtime_api.h>

#include "gpu/stream.hpp"

namespace kf::gpu {

class Library {
 public:
  // Reads and loads a cubin. Throws std::runtime_error when the file cannot be read and
  // CudaError when the driver rejects the image (wrong architecture, corrupt file).
  static Library from_file(const std::filesystem::path& cubin);
  explicit Library(const std::string& image);
  ~Library();
  Library(Library&& o) noexcept;
  Library& operator=(Library&&) = delete;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  // The extern "C" kernel `name`; throws CudaError when there is none.
  cudaKernel_t kernel(const std::string& name) const;

 private:
  cudaLibrary_t lib_ = nullptr;
};

struct LaunchDims {
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  unsigned smem = 0;  // dynamic shared memory, bytes
};

// Allows `bytes` of dynamic shared memory (needed above 48 KiB) on the current device.
// Returns the error instead of throwing: a refusal is the config's fault, not the worker's.
cudaError_t set_max_dynamic_smem(cudaKernel_t k, unsigned bytes);

// Enqueues one launch. Returns the launch's own error (invalid configuration, too many
// resources) without throwing; errors of the running kernel surface at the next sync.
cudaError_t launch(cudaKernel_t k, const LaunchDims& d, void** args, const Stream& s);

}  // namespace kf::gpu
