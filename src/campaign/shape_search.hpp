// One shape's search within a campaign, in three steps a campaign may run one shape after another
// (campaign.cpp) or for all shapes at once (suite_run.cpp): prepare (space, reference kernel, what the
// store knows, the strategy), search (the loop until its stop rule), conclude (finalists, sanitizer).
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "campaign/known_results.hpp"
#include "campaign/progress.hpp"
#include "campaign/search_loop.hpp"
#include "campaign/shape_run.hpp"
#include "space/space.hpp"

namespace kf {

class SuiteSchedule;

// Not movable: the strategy keeps a pointer to the space.
struct ShapeSearch {
  ShapeSearch(Shape sh, size_t i, size_t n, SearchSpace sp) : shape(std::move(sh)), index(i), count(n), space(std::move(sp)) {}
  ShapeSearch(const ShapeSearch&) = delete;
  ShapeSearch& operator=(const ShapeSearch&) = delete;
  Shape shape;
  size_t index = 0, count = 1;  // the shape's place in the campaign (for labels and seeds)
  SearchSpace space;
  std::string ref_cubin;  // empty for a distributed campaign (its agents compile it)
  KnownResults known;
  std::unique_ptr<Strategy> strategy;
  size_t allowed = 0;  // evaluations this run may dispatch (max: no budget)
  double search_s = 0;  // worker seconds of its evaluations in this run (the finalists' time cap scales with it)
};

// The family with pinned parameters reduced to their one value; throws (one line) on an unknown
// parameter or a value outside its domain.
Family pin_params(const Family& family, const Config& fixed);

std::unique_ptr<ShapeSearch> prepare_shape_search(ShapeRun& run, const Shape& shape, size_t index, size_t count);

// The progress line of one shape searched alone.
Progress shape_progress(const ShapeRun& run, const ShapeSearch& s);

// Where a shape's results go besides its progress line when several shapes share the pipeline: the
// schedule holds its loop to the shape's quota and hears of every result.
struct SuiteSlot {
  SuiteSchedule* schedule = nullptr;
  size_t index = 0;
};

// The search proper: the strategy's configs through the compile pool and the GPU threads until the
// stop rule (budget, plateau, campaign time, Ctrl-C, exhaustion; with a slot, the suite's quota) ends it.
LoopOutcome search_shape(ShapeRun& run, ShapeSearch& s, Progress& progress, const SuiteSlot* slot = nullptr);

// Runs f(i) for every shape in its own thread (shapes searched at once); the first failure stops the others
// (as Ctrl-C would) and is rethrown once all have ended.
void for_each_shape(size_t n, const std::function<void(size_t)>& f);

// The shape's outcome; with a local GPU, its finalists re-measured and (with --sanitize) sanitized.
ShapeOutcome conclude_shape(ShapeRun& run, const ShapeSearch& s, const LoopOutcome& loop);

}  // namespace kf
