#include "gpu/library.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "gpu/check.hpp"

namespace kf::gpu {

Library Library::from_file(const std::filesystem::path& cubin) {
  std::ifstream in(cubin, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read cubin " + cubin.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad() || ss.str().empty()) throw std::runtime_error("cannot read cubin " + cubin.string());
  return Library(ss.str());
}

Library::Library(const std::string& image) {
  // The driver copies what it needs, so the image may go away after loading.
  check(cudaLibraryLoadData(&lib_, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
        "cudaLibraryLoadData");
}

Library::~Library() {
  if (lib_) cudaLibraryUnload(lib_);  // errors ignored: see Stream::~Stream
}

Library::Library(Library&& o) noexcept : lib_(std::exchange(o.lib_, nullptr)) {}

cudaKernel_t Library::kernel(const std::string& name) const {
  cudaKernel_t k = nullptr;
  check(cudaLibraryGetKernel(&k, lib_, name.c_str()), ("cudaLibraryGetKernel(" + name + ")").c_str());
  return k;
}

cudaError_t set_max_dynamic_smem(cudaKernel_t k, unsigned bytes) {
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  const cudaError_t e = cudaKernelSetAttributeForDevice(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                       static_cast<int>(bytes), device);
  if (e == cudaSuccess || is_sticky(e)) return e;
  // The generic entry point also takes a cudaKernel_t; its answer is the one reported.
  cudaGetLastError();
  return cudaFuncSetAttribute(reinterpret_cast<const void*>(k), cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(bytes));
}

cudaError_t launch(cudaKernel_t k, const LaunchDims& d, void** args, const Stream& s) {
  const dim3 grid(d.grid[0], d.grid[1], d.grid[2]);
  const dim3 block(d.block[0], d.block[1], d.block[2]);
  // The runtime accepts a cudaKernel_t in place of a __global__ function's address.
  return cudaLaunchKernel(reinterpret_cast<const void*>(k), grid, block, args, d.smem, s.get());
}

}  // namespace kf::gpu
