#include "export/dtype_names.hpp"

namespace kf::exporter {

const DtypeNames* dtype_names(const std::string& dtype) {
  static const DtypeNames table[] = {
      {"f16", "__half", "at::kHalf", "torch.float16"},
      {"bf16", "__nv_bfloat16", "at::kBFloat16", "torch.bfloat16"},
      {"f32", "float", "at::kFloat", "torch.float32"},
      {"f64", "double", "at::kDouble", "torch.float64"},
      {"i32", "int", "at::kInt", "torch.int32"},
  };
  for (const DtypeNames& n : table)
    if (dtype == n.dtype) return &n;
  return nullptr;
}

}  // namespace kf::exporter
