// `kforge export`: turns the best kernel(s) of a family into files a project can build with
// plain nvcc, with no kforge at run time.
//
// For each winner (one per shape), in out_dir:
//   <name>.cu         the rendered variant (config and specialized dims baked in, includes
//                     inlined), entry renamed to <name>_kernel, plus the host launcher
//   <name>.h          C ABI:  cudaError_t <name>(<buffers in spec order>, <dims in spec order>,
//                     cudaStream_t) and int <name>_supports(<dims>, const kforge_device_info*)
//   <name>.cubin      the same kernel compiled by NVRTC for the target (for Python loaders)
//   runners/<name>_runner.cu  standalone main() that runs the kernel on its shape (profiling)
// With several winners also <prefix>_dispatch.cu/.h (see dispatch_gen.hpp); always CMakeLists.txt
// (cmake_gen.hpp); with `torch` torch/<target>_op.cpp and torch/load.py (torch_gen.hpp); and
//   manifest.json     {"format":"kforge-export/2" (docs/export.md), "family", "description", "spec", "spec_hash",
//                      "arch", "kernels":[K...], "dispatcher":{...}|null, "provenance":{...}}
//                     where each K has: name, entry, source, header, cubin, runner, config,
//                     shape, variant_hash, gate, gated_kernel_hash, arch, device, timing{median_us,p10_us,
//                     p90_us,...,tflops,gbps}, correctness, kernel (registers, spills, ...), compile
//                     {nvrtc_options,nvcc_flags}, defines{NAME:value}, launch{grid,block,smem}, args[...],
//                     signature, supports_signature, supports{...,"text"}, commands{build,
//                     object,ncu}. With a single winner its K's fields are also at top level.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "family/family.hpp"
#include "store/store.hpp"

namespace kf {

struct ExportInput {
  const Family* family = nullptr;
  std::vector<EvaluationRecord> winners;  // one per shape, e.g. from Store::best; status ok
  // Created if missing. Files of the export's names in it are replaced (ExportOutput::replaced);
  // a symbolic link where the export writes is refused (export/output_dir.hpp).
  std::filesystem::path out_dir;
  // One winner: the launcher's name (default "<family>_<shortshape>"). Several: the prefix of
  // each kernel's name "<prefix>_<shortshape>" and of "<prefix>_dispatch" (default: family).
  std::string name;
  std::string base_arch;  // "sm_90"; default: from the first winner's device (cc)
  std::string db_path;    // recorded as provenance
  // Extra #defines for every kernel (family/user_config.hpp): part of each variant hash, listed
  // in the manifest as "defines".
  Assignment defines;
  // Also write torch/<target>_op.cpp and torch/load.py (torch_gen.hpp): the kernel(s) as the
  // torch custom op kforge::<target>.
  bool torch = false;
  // Accept winners no one measured (unmeasured_record: `export --config --ungated`); their manifest entries
  // say "gate": "not run". Without it such a winner is refused: every exported kernel passed kforge's gate.
  bool ungated = false;
};

struct ExportOutput {
  std::vector<std::filesystem::path> files;  // everything written, manifest.json last
  std::vector<std::string> replaced;         // those of files (relative to out_dir) that held a file before
  nlohmann::json manifest;
};

// Throws std::runtime_error (one line) for bad input: no winners, another family's record,
// a record kforge's gate did not pass (not ok, imported from another tool, or unmeasured without
// `ungated`), two winners for one shape, a name that is not a C identifier, a config
// that violates the family's constraints on the target, an NVRTC failure, an unwritable dir, a
// symbolic link where a file or subfolder goes. Nothing is written unless the whole export
// succeeds; a write that fails part way removes what the export created.
ExportOutput export_kernels(const ExportInput& in);

// A config to export that no one measured (`export --config --ungated`): Provenance::Unmeasured, no
// timing, no evaluation id, no device, so the export needs a base_arch and `ungated`.
EvaluationRecord unmeasured_record(const Family& f, const Config& c, const Shape& s);

// "<family>_<shortshape>", e.g. "gemm_M4096_N4096_K4096_f16".
std::string default_export_name(const Family& f, const Shape& s);

}  // namespace kf
