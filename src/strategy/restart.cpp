#include "strategy/restart.hpp"

namespace kf::strategy_detail {

size_t hamming(const std::vector<int>& a, const std::vector<int>& b) {
  size_t d = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) d += a[i] != b[i] ? 1 : 0;
  return d;
}

std::vector<size_t> diverse_picks(const std::vector<std::vector<int>>& ranked,
                                  const std::vector<std::vector<int>>& centers, size_t away, size_t apart, size_t k) {
  std::vector<size_t> out;
  for (size_t i = 0; i < ranked.size() && out.size() < k; ++i) {
    bool ok = true;
    for (const auto& c : centers) ok = ok && hamming(ranked[i], c) >= away;
    for (size_t j : out) ok = ok && hamming(ranked[i], ranked[j]) >= apart;
    if (ok) out.push_back(i);
  }
  return out;
}

}  // namespace kf::strategy_detail
