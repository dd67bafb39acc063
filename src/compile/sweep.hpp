// The compile sweep behind `kforge check`: render and NVRTC-compile every valid config of a
// family at one shape and arch (or a seeded sample, drawn without listing the space), evaluate
// every expression a campaign would, and tally the results. No GPU needed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/error_groups.hpp"
#include "family/family.hpp"

namespace kf {

class CompilePool;

struct SweepOptions {
  size_t sample = 0;   // 0: the whole space, walked
  uint64_t seed = 1;   // of the sample and of the valid-count estimate
  bool count = false;  // count the valid configs exactly first (a full walk)
  bool quiet = false;  // no progress line
  size_t window = 4;   // compiles in flight per compile thread (memory stays bounded)
};

// One (shape, arch) of a sweep. The config counts (checked, compiled_ok, failed, cached,
// spilling, registers) are of the configs only; the reference kernel is reported apart.
struct SweepResult {
  std::string arch, specialization;
  double valid_configs = 0;  // exact when valid_exact, else Knuth's estimate
  bool valid_exact = false;
  size_t space = 0;  // the product of the domains
  size_t checked = 0, compiled_ok = 0, failed = 0, cached = 0, spilling = 0, walked = 0;
  bool reference_ok = false;  // the reference compiled (its error, if any, is among `errors`)
  int min_registers = 0, max_registers = 0;
  double compile_cpu_s = 0, wall_s = 0;
  CompileErrorGroups errors;  // each distinct compile error once, with how many configs it hit
  size_t expression_failures = 0;
  std::vector<std::string> expression_errors;  // the first few, "<config>: <what>: <error>"
};

nlohmann::json to_json(const SweepResult& r);

// One shape per specialization: configs compile identically for shapes that only differ in
// runtime dimensions, and constraints that depend on those are checked for the first such shape.
std::vector<Shape> distinct_specializations(const Family& f, const std::vector<Shape>& shapes);

SweepResult sweep_space(const Family& f, const Shape& shape, const std::string& arch, const SweepOptions& o,
                        CompilePool& pool, size_t jobs);

// What makes a sweep fail besides compile errors: a shape with no valid config, configs whose
// expressions fail to evaluate. One line each.
std::vector<std::string> spec_problems(const SweepResult& r, const Shape& shape);

}  // namespace kf
