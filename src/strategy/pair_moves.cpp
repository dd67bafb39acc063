#include "strategy/pair_moves.hpp"

#include <algorithm>
#include <tuple>

namespace kf::strategy_detail {

std::vector<std::vector<int>> pair_moves(const std::vector<int>& center, const std::vector<size_t>& sizes,
                                         size_t span, const IdxRank& rank, const IdxCheck& accept, size_t k) {
  struct Move {
    double rank;
    size_t i, j;
    int vi, vj;
  };
  std::vector<Move> moves;
  std::vector<int> t = center;
  for (size_t i = 0; i < center.size(); ++i)
    for (size_t j = i + 1; j < center.size() && (span == 0 || j - i <= span); ++j)
      for (int vi = 0; vi < static_cast<int>(sizes[i]); ++vi) {
        if (vi == center[i]) continue;
        for (int vj = 0; vj < static_cast<int>(sizes[j]); ++vj) {
          if (vj == center[j]) continue;
          t[i] = vi;
          t[j] = vj;
          moves.push_back({rank ? rank(t) : 0.0, i, j, vi, vj});
          t[i] = center[i];
          t[j] = center[j];
        }
      }
  std::stable_sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) { return a.rank < b.rank; });
  std::vector<std::vector<int>> out;
  for (const Move& m : moves) {
    if (out.size() >= k) break;
    t[m.i] = m.vi;
    t[m.j] = m.vj;
    if (accept(t)) out.push_back(t);
    t[m.i] = center[m.i];
    t[m.j] = center[m.j];
  }
  return out;
}

std::vector<std::vector<int>> single_moves(const std::vector<int>& center, const std::vector<size_t>& sizes,
                                           const IdxRank& rank, const IdxCheck& accept, size_t k) {
  std::vector<std::pair<double, std::vector<int>>> moves;
  std::vector<int> t = center;
  for (size_t i = 0; i < center.size(); ++i) {
    for (int v = 0; v < static_cast<int>(sizes[i]); ++v) {
      if (v == center[i]) continue;
      t[i] = v;
      moves.emplace_back(rank ? rank(t) : 0.0, t);
    }
    t[i] = center[i];
  }
  std::stable_sort(moves.begin(), moves.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::vector<int>> out;
  for (auto& m : moves) {
    if (out.size() >= k) break;
    if (accept(m.second)) out.push_back(std::move(m.second));
  }
  return out;
}

}  // namespace kf::strategy_detail
