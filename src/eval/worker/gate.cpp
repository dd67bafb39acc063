#include "eval/worker/gate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kf {

Comparison compare(const std::vector<float>& out, const std::vector<float>& ref) {
  Comparison c;
  c.count = std::min(out.size(), ref.size());
  double diff2 = 0, ref2 = 0;
  for (size_t i = 0; i < c.count; ++i) {
    const double o = out[i], r = ref[i];
    if (!std::isfinite(r)) {
      ++c.ref_non_finite;
      continue;
    }
    if (!std::isfinite(o)) {
      if (c.non_finite++ == 0) c.first_non_finite = i;
      continue;
    }
    const double d = std::fabs(o - r);
    diff2 += d * d;
    ref2 += r * r;
    if (d > c.max_abs) {
      c.max_abs = d;
      c.worst_index = i;
    }
  }
  // An all-zero reference makes the relative error the absolute one.
  c.rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  const size_t at = c.non_finite ? c.first_non_finite : c.worst_index;
  if (at < c.count) {
    c.got = out[at];
    c.want = ref[at];
  }
  return c;
}

std::optional<std::string> gate_failure(const Comparison& c, const Tolerance& tol, const std::string& buffer,
                                        const std::string& where) {
  char buf[512];
  const std::string head = "output " + buffer + " (" + where + "): ";
  if (c.ref_non_finite) {
    std::snprintf(buf, sizeof buf, "the reference wrote %zu NaN/Inf elements", c.ref_non_finite);
    return head + buf;
  }
  if (c.non_finite) {
    std::snprintf(buf, sizeof buf, "%zu of %zu elements NaN/Inf (unwritten or overflow), first at [%zu] (want %.6g)",
                  c.non_finite, c.count, c.first_non_finite, static_cast<double>(c.want));
    return head + buf;
  }
  if (c.max_abs > tol.max_abs) {
    std::snprintf(buf, sizeof buf, "max_abs %.4g > %.4g at [%zu] (got %.6g, want %.6g), rel_l2 %.4g", c.max_abs,
                  tol.max_abs, c.worst_index, static_cast<double>(c.got), static_cast<double>(c.want), c.rel_l2);
    return head + buf;
  }
  if (c.rel_l2 > tol.rel_l2) {
    std::snprintf(buf, sizeof buf, "rel_l2 %.4g > %.4g (max_abs %.4g)", c.rel_l2, tol.rel_l2, c.max_abs);
    return head + buf;
  }
  return std::nullopt;
}

}  // namespace kf
