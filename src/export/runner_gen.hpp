// Generates `<name>_runner.cu`: a standalone main() that runs an exported kernel on its exported
// shape (seeded random inputs, zeroed outputs and scratch) N times and checks every error,
// so `ncu`/`nsys` can profile the exact kernel outside kforge.
#pragma once
#include <optional>
#include <string>

#include "export/kernel_model.hpp"

namespace kf::exporter {

// `measured_us`: kforge's median for this kernel, printed next to the runner's own timing.
std::string generate_runner(const KernelModel& m, std::optional<double> measured_us);

}  // namespace kf::exporter
