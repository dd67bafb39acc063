// The end of a shape's search: the winner is the fastest stored result of a current kernel; the
// top K are re-measured side by side in one worker session (the first GPU's) until the rule of
// eval/round_rule knows their order (or a fixed count of rounds: --finalist-rounds), ties being
// overlapping CIs; with --sanitize the finalists run under compute-sanitizer, a failed one losing the win.
#pragma once
#include <string>
#include <vector>

#include "campaign/shape_run.hpp"

namespace kf {

// The re-measure's time cap with the rule: a share of the shape's search, with a floor, so that a
// shape searched briefly still gets its first batch of rounds. search_s: the worker seconds of the
// shape's evaluations in this run.
double finalist_cap_s(const CampaignOptions& o, double search_s);

// The part of a campaign's wall-time budget (--time) its shapes' searches leave to their finalists, so that
// the campaign, re-measures included, ends near the budget: each shape's cap floor plus the share of the
// budget, at most a quarter of it; 0 without a budget or without a re-measure (energy objectives, top-K < 2).
double finalist_reserve_s(const CampaignOptions& o, size_t shapes);

struct Finalists {
  std::vector<ShapeOutcome::Remeasured> order;  // fastest first (empty below two stored configs)
  ShapeOutcome::Remeasure how;
};

// Re-measures the stored top-K of the shape side by side and records their order (winner/finalist_ranking).
Finalists remeasure_top(const ShapeRun& run, const Shape& shape, double search_s);

// Fills outcome.best, outcome.remeasured and outcome.remeasure; skips the re-measure and the sanitizer
// after Ctrl-C.
void finish_shape(const ShapeRun& run, const Shape& shape, const std::string& ref_cubin, double search_s,
                  ShapeOutcome& outcome);

}  // namespace kf
