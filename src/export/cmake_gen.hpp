// The export folder as a CMake project part: `add_subdirectory(<folder>)` gives a static
// library target kforge::<target> with the launcher headers on its include path, each kernel
// compiled for the exact target it was tuned for (sm_90a: --generate-code=arch=compute_90a,code=sm_90a,
// which wgmma needs), and optional runner executables (runners/, off by default).
#pragma once
#include <string>
#include <vector>

#include "export/kernel_model.hpp"

namespace kf::exporter {

// target: a C identifier (the library is kforge_<target>, aliased kforge::<target>).
// dispatcher: the dispatcher's base name, or "" when there is none.
std::string generate_cmake(const std::string& target, const std::vector<KernelModel>& models,
                           const std::string& dispatcher);

// The folder the runners are written to, relative to the export folder.
inline const char* runners_subdir() { return "runners"; }

}  // namespace kf::exporter
