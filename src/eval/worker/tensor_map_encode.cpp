#include "eval/worker/tensor_map_encode.hpp"

#include <cstring>
#include <stdexcept>

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled; types only, from <cuda.h>

#include "gpu/check.hpp"
#include "space/expr.hpp"

namespace kf {

static_assert(sizeof(TensorMapBytes) == sizeof(CUtensorMap) && alignof(TensorMapBytes) >= alignof(CUtensorMap),
              "TensorMapBytes must hold a CUtensorMap");

namespace {

struct DriverFunctions {
  PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  PFN_cuGetErrorName_v6000 error_name = nullptr;
};

template <typename Fn>
Fn driver_function(const char* symbol, unsigned version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  gpu::check(cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &found),
             "cudaGetDriverEntryPointByVersion");
  if (found != cudaDriverEntryPointSuccess || !fn)
    throw std::runtime_error(std::string("the CUDA driver has no ") + symbol + " (it needs CUDA 12.0 or later)");
  return reinterpret_cast<Fn>(fn);
}

// Looked up on first use (a failed lookup throws and is retried on the next call).
const DriverFunctions& driver() {
  static const DriverFunctions fns = [] {
    DriverFunctions d;
    d.encode = driver_function<PFN_cuTensorMapEncodeTiled_v12000>("cuTensorMapEncodeTiled", 12000);
    d.error_name = driver_function<PFN_cuGetErrorName_v6000>("cuGetErrorName", 6000);
    return d;
  }();
  return fns;
}

CUtensorMapDataType data_type(DType d) {
  switch (d) {
    case DType::F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DType::F32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DType::I32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
  }
  throw std::invalid_argument("tensor map: unknown element type");
}

CUtensorMapSwizzle swizzle_mode(int bytes) {
  switch (bytes) {
    case 0: return CU_TENSOR_MAP_SWIZZLE_NONE;
    case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case 128: return CU_TENSOR_MAP_SWIZZLE_128B;
  }
  throw std::invalid_argument("tensor map: swizzle " + std::to_string(bytes) + " is not 0, 32, 64 or 128");
}

}  // namespace

void encode_tensor_map(TensorMapBytes& out, const TensorMapGeometry& g, const void* address) {
  const DriverFunctions& drv = driver();
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5];
  const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  for (size_t i = 0; i < 5; ++i) {
    dims[i] = g.dims[i];
    box[i] = g.box[i];
    if (i < 4) strides[i] = g.strides[i];
  }
  CUtensorMap map;
  const CUresult r = drv.encode(&map, data_type(g.dtype), g.rank, const_cast<void*>(address), dims, strides, box,
                                element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_mode(g.swizzle),
                                CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    if (drv.error_name(r, &name) != CUDA_SUCCESS || !name) name = "an unknown CUresult";
    throw ExprError(g.what + ": cuTensorMapEncodeTiled returned " + name + " (" + std::to_string(static_cast<int>(r)) +
                    ")");
  }
  std::memcpy(out.bytes, &map, sizeof map);
}

}  // namespace kf
