// A local campaign over several shapes, searched at once: every shape's loop runs in its own thread
// with its own strategy, the shapes share the compile pool and the workers (one lock per worker), and a
// SuiteSchedule (campaign/suite_schedule.hpp) decides how many in-flight configs each shape may hold, so
// `--time` is spread by expected gain instead of going to the first shape, every shape gets a first result
// early, and NVRTC compiles one shape's configs while the GPU times another's. The finalists' re-measure
// and the sanitizer run after every search has ended, shape by shape.
#pragma once
#include <vector>

#include "campaign/campaign.hpp"
#include "campaign/shape_run.hpp"

namespace kf {

// The shapes' outcomes, in the shapes' order. A shape that fails stops the others and throws.
std::vector<ShapeOutcome> run_suite(ShapeRun& run, const std::vector<Shape>& shapes);

}  // namespace kf
