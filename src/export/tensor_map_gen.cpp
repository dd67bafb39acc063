#include "export/tensor_map_gen.hpp"

#include <stdexcept>

namespace kf::exporter {

std::string tensor_map_includes() {
  return "#include <cstring>\n#include <cuda.h>  // CUtensorMap and its enums: types only, no -lcuda\n"
         "#include <cudaTypedefs.h>\n";
}

std::string tensor_map_helpers() {
  return R"CXX(// One tensor map: a buffer viewed as a packed tensor, innermost dim first.
struct kfx_tensor_map_t {
  cuuint32_t rank;
  cuuint64_t dims[5];
  cuuint64_t strides[4];  // bytes between consecutive indices of dims 1..rank-1
  cuuint32_t box[5];
};

// kforge's rules for a tensor map (cuTensorMapEncodeTiled's limits, checked before the driver
// sees them): false where kforge would refuse to encode it.
bool kfx_tensor_map_plan(int rank, const long long* dims, const long long* box, long long elem_bytes,
                         long long swizzle, long long buffer_elems, kfx_tensor_map_t& t) {
  t = kfx_tensor_map_t{};
  t.rank = static_cast<cuuint32_t>(rank);
  for (int i = 0; i < rank; ++i) {
    if (dims[i] < 1 || dims[i] > (1LL << 32) || box[i] < 1 || box[i] > 256) return false;
    t.dims[i] = static_cast<cuuint64_t>(dims[i]);
    t.box[i] = static_cast<cuuint32_t>(box[i]);
  }
  // A box row is whole 16-byte units and fits in the swizzle span.
  const long long row = box[0] * elem_bytes;
  if (row % 16 != 0 || (swizzle > 0 && row > swizzle)) return false;
  // Packed strides. Each partial product stays within the buffer, so nothing overflows.
  long long elems = 1;
  for (int i = 0; i < rank; ++i) {
    if (elems > buffer_elems / dims[i]) return false;  // the dims cover more than the buffer
    elems *= dims[i];
    if (i + 1 == rank) break;
    if (elems >= (1LL << 40) / elem_bytes || elems * elem_bytes % 16 != 0) return false;
    t.strides[i] = static_cast<cuuint64_t>(elems * elem_bytes);
  }
  return true;
}

struct kfx_encoder_t {
  PFN_cuTensorMapEncodeTiled_v12000 fn;
  cudaError_t error;
};

kfx_encoder_t kfx_find_encoder() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
  if (e == cudaSuccess && (found != cudaDriverEntryPointSuccess || fn == nullptr)) e = cudaErrorNotSupported;
  return {reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn), e};
}

// Encodes t over base as kforge does: no interleave, 256-byte L2 promotion, zeros out of
// bounds, element strides 1. A base TMA cannot address (not 16-byte aligned) or a map the
// driver refuses is cudaErrorInvalidValue, like any argument the launcher does not support.
cudaError_t kfx_encode_tensor_map(CUtensorMap& m, const void* base, CUtensorMapDataType type,
                                  CUtensorMapSwizzle swizzle, const kfx_tensor_map_t& t) {
  // The driver function is looked up once per process (a launch must stay cheap).
  static const kfx_encoder_t encoder = kfx_find_encoder();
  if (encoder.error != cudaSuccess) return encoder.error;
  if (reinterpret_cast<std::uintptr_t>(base) % 16 != 0) return cudaErrorInvalidValue;
  const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  const CUresult r = encoder.fn(&m, type, t.rank, const_cast<void*>(base), t.dims, t.strides, t.box, element_strides,
                                CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

// A kernel takes a map by value as its own 128-byte type (NVRTC cannot include <cuda.h>, so
// templates declare a CUtensorMap lookalike): this converts to whatever that type is.
struct kfx_map_arg {
  const CUtensorMap& map;
  template <typename T>
  operator T() const {
    static_assert(sizeof(T) == sizeof(CUtensorMap), "a tensor_map kernel parameter must be 128 bytes");
    T t;
    std::memcpy(static_cast<void*>(&t), &map, sizeof t);
    return t;
  }
};
)CXX";
}

std::string cu_tensor_map_data_type(const std::string& dtype) {
  if (dtype == "f16") return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
  if (dtype == "bf16") return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
  if (dtype == "f32") return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
  if (dtype == "i32") return "CU_TENSOR_MAP_DATA_TYPE_INT32";
  throw std::runtime_error("export: a tensor map cannot hold dtype '" + dtype + "' (f16, bf16, f32, i32)");
}

std::string cu_tensor_map_swizzle(int bytes) {
  switch (bytes) {
    case 0: return "CU_TENSOR_MAP_SWIZZLE_NONE";
    case 32: return "CU_TENSOR_MAP_SWIZZLE_32B";
    case 64: return "CU_TENSOR_MAP_SWIZZLE_64B";
    case 128: return "CU_TENSOR_MAP_SWIZZLE_128B";
  }
  throw std::runtime_error("export: tensor map swizzle " + std::to_string(bytes) + " is not 0, 32, 64 or 128");
}

namespace {

std::string joined_texts(const std::vector<Expr>& exprs) {
  std::string out;
  for (const Expr& e : exprs) out += (out.empty() ? "" : ", ") + e.text();
  return out;
}

}  // namespace

std::string tensor_map_geometry(const ArgSpec& a) {
  return "dims {" + joined_texts(a.dims) + "}, box {" + joined_texts(a.box) + "}, swizzle " + std::to_string(a.swizzle);
}

}  // namespace kf::exporter
