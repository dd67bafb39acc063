// Everything a campaign evaluates for one config, evaluated without a GPU, so that `kforge check`
// finds a spec error (a division by zero in a grid, a negative buffer size, an argument that
// does not fit) before a campaign records it as a failure of every config.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "family/family.hpp"

namespace kf {

// Evaluates, for one config on one shape and device, as a campaign and its worker would: the
// derived values, the kernel's launch (grid, block, smem), each buffer's dtype and element count,
// every kernel argument (scalars and tensor-map geometry), the cost expressions (flops, bytes)
// and the tolerance. Returns the first failure as one line "<what>: <error>", or nullopt.
std::optional<std::string> config_expression_failure(const Family& f, const Config& c, const Shape& s,
                                                     const DeviceLimits& d);
// The same for the reference kernel (launch, arguments and buffers; no config).
std::optional<std::string> reference_expression_failure(const Family& f, const Shape& s, const DeviceLimits& d);

// kforge check's verdict on the expressions of a set of configs (and the reference) for one
// shape and device: how many fail, and the first few failures, each "<config>: <what>: <error>".
struct ExpressionReport {
  size_t failed = 0;
  std::vector<std::string> first;
};
ExpressionReport check_expressions(const Family& f, const std::vector<Config>& configs, const Shape& s,
                                   const DeviceLimits& d, size_t keep = 5);

}  // namespace kf
