// The correctness gate's comparison of one output buffer with the reference's. No CUDA here.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "family/family.hpp"

namespace kf {

struct Comparison {
  size_t count = 0;
  double max_abs = 0;         // over finite elements
  size_t worst_index = 0;     // where max_abs was seen
  double rel_l2 = 0;          // ||out - ref|| / ||ref||
  size_t non_finite = 0;      // NaN or Inf in the candidate's output (unwritten elements stay NaN)
  size_t first_non_finite = 0;
  size_t ref_non_finite = 0;  // the reference's fault, reported apart
  float got = 0, want = 0;    // at worst_index (or first_non_finite)
};

Comparison compare(const std::vector<float>& out, const std::vector<float>& ref);

// Why the comparison fails the tolerance, as one line naming the buffer and where:
// "output C (shape N=1001, gate odd): 12 NaN/Inf elements, first at [3] (want 0.25)". nullopt if it passes.
std::optional<std::string> gate_failure(const Comparison& c, const Tolerance& tol, const std::string& buffer,
                                        const std::string& where);

}  // namespace kf
