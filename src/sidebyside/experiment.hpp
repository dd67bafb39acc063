// A declarative experiment (experiments/*.json): which kernels of a family to time side by side
// on which shapes, so an experiment stays reproducible without a script of its own.
// `kforge bench --experiment FILE` runs one. Format:
//   {"name": "...", "family": "sdpa_fwd", "question": "what it measures (one line)",
//    "doc": "docs/experiments/<file>.md",                 (optional)
//    "shapes": ["B=2,H=8,S=512,D=64,causal=0,dtype=f16"]   or "suite": "mission",
//    "configs": ["best", "best,WN_KEYS=tile", "best;DIAG_CUT=1", ...]   (bench --config syntax)
//    "defines": {"NAME": value},                           (optional, for every config)
//    "rounds": 7}                          (optional; "auto": until the answer is known, eval/round_rule)
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "space/value.hpp"

namespace kf {

struct Experiment {
  std::string name;
  std::string family;
  std::string question;
  std::string doc;
  std::vector<std::string> shapes;  // shape texts; empty when a suite is named
  std::string suite;
  std::vector<std::string> configs;  // at least one
  Assignment defines;
  int rounds = 7;  // 0: "auto"
};

// Throws std::runtime_error "<file>: <problem>" (one line) for a missing file, bad JSON, an unknown
// key, or a missing or mistyped field.
Experiment load_experiment(const std::filesystem::path& file);

}  // namespace kf
