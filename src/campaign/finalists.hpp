// The end of a shape's search: the winner is the fastest stored result of a current kernel; the
// top K are re-measured side by side in one worker session (the first GPU's; ties: overlapping
// CIs), and with --sanitize the finalists run under compute-sanitizer, a failed one losing the win.
#pragma once
#include <string>
#include <vector>

#include "campaign/shape_run.hpp"

namespace kf {

// Re-measures the stored top-K of the shape side by side, fastest first (empty below two).
std::vector<ShapeOutcome::Remeasured> remeasure_top(const ShapeRun& run, const Shape& shape);

// Fills outcome.best and outcome.remeasured; skips the re-measure and the sanitizer after Ctrl-C.
void finish_shape(const ShapeRun& run, const Shape& shape, const std::string& ref_cubin, ShapeOutcome& outcome);

}  // namespace kf
