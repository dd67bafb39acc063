// `kforge export --torch`: the export as a torch custom op, in the export's torch/ folder.
//   torch/<op>_op.cpp  registers kforge::<op> (TORCH_LIBRARY_FRAGMENT, so several exports load into
//                      one process) with a CUDA impl (dtype/shape/device/contiguity/alignment checks,
//                      outputs and workspace from torch's caching allocator, the current stream, no
//                      sync: capturable in a CUDA graph) and a Meta impl (shapes only, symbolic sizes:
//                      torch.compile traces through it). It calls the export's C launcher.
//   torch/load.py      compiles the export's .cu files with nvcc for their own targets and the op with
//                      torch.utils.cpp_extension (or, without ninja, the compiler torch names), loads
//                      it and returns torch.ops.kforge.<op>.
// The op's interface comes from the family spec (torch_model.hpp).
#pragma once
#include <string>
#include <vector>

#include "export/kernel_model.hpp"
#include "export/torch_model.hpp"

namespace kf::exporter {

inline const char* torch_subdir() { return "torch"; }

// headers: the export's headers the op includes (the dispatcher's, or the kernel's).
// supported: the supported-shape rule in words, quoted in the op's refusal.
std::string generate_torch_op(const TorchOpModel& op, const std::string& header, const std::string& supported);
// kernels: each exported .cu with its nvcc flags (target first); `extension`: a name unique to the export.
std::string generate_torch_loader(const TorchOpModel& op, const std::vector<std::pair<std::string, std::vector<std::string>>>& kernels,
                                  const std::string& extension);

}  // namespace kf::exporter
