// A synthetic, GPU-like recorded space for strategy tests: tile sizes, warps, pipeline stages,
// vector width and an MMA flavour, with strong per-parameter effects, interactions
// (occupancy from shared memory and threads, wave quantization, MMA needing big tiles),
// configs that fail (shared memory or registers over the limit, plus a few at random) and a
// little measurement noise. The landscape seed moves the optimum around.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "replay/recorded_space.hpp"

namespace kf::landscape {

inline RecordedSpace synthetic_space(uint64_t landscape_seed, double random_fail = 0.03) {
  std::mt19937_64 rng(landscape_seed * 7919 + 17);
  std::vector<ParamSpec> params = {
      {"BM", {int64_t{16}, int64_t{32}, int64_t{64}, int64_t{128}, int64_t{256}}},
      {"BN", {int64_t{16}, int64_t{32}, int64_t{64}, int64_t{128}, int64_t{256}}},
      {"BK", {int64_t{16}, int64_t{32}, int64_t{64}}},
      {"WARPS", {int64_t{1}, int64_t{2}, int64_t{4}, int64_t{8}}},
      {"STAGES", {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}}},
      {"VEC", {int64_t{1}, int64_t{2}, int64_t{4}, int64_t{8}}},
      {"MMA", {std::string("simt"), std::string("wmma"), std::string("mma")}},
  };
  std::uniform_real_distribution<double> u(0, 1);
  // Preferred values (log2) and how much straying from them costs.
  double pref_bk = 4 + u(rng) * 2, pref_vec = 1 + u(rng) * 2, pref_stages = 2 + u(rng) * 2;
  double w_bk = 0.05 + 0.1 * u(rng), w_vec = 0.05 + 0.1 * u(rng), w_st = 0.05 + 0.1 * u(rng);
  double mma_gain[3] = {1.0, 0.55 + 0.2 * u(rng), 0.45 + 0.2 * u(rng)};
  const double M = 2048, N = 2048, K = 4096, sms = 132;
  std::normal_distribution<double> noise(0, 0.02);

  std::vector<RecordedPoint> points;
  for (int64_t bm : {16, 32, 64, 128, 256})
    for (int64_t bn : {16, 32, 64, 128, 256})
      for (int64_t bk : {16, 32, 64})
        for (int64_t warps : {1, 2, 4, 8})
          for (int64_t stages : {1, 2, 3, 4})
            for (int64_t vec : {1, 2, 4, 8})
              for (int mma = 0; mma < 3; ++mma) {
                // Constraints: these are not part of the space at all.
                double per_thread = double(bm * bn) / double(32 * warps);
                if (per_thread < 8 || per_thread > 128) continue;
                if (vec * 4 > bk || vec * 8 > bn) continue;
                if (mma > 0 && (bm < 32 || bn < 32 || bm * bn < 512 * warps)) continue;
                if (mma == 2 && warps < 2) continue;
                Config c = {{"BM", bm}, {"BN", bn}, {"BK", bk}, {"WARPS", warps},
                            {"STAGES", stages}, {"VEC", vec},
                            {"MMA", std::string(mma == 0 ? "simt" : mma == 1 ? "wmma" : "mma")}};
                double smem = double(stages * (bm + bn) * bk * 2);
                bool fails = smem > 64 * 1024 || (mma == 0 && per_thread > 64 && stages > 2) || (mma == 2 && per_thread > 64 && warps < 2) ||
                             u(rng) < random_fail;
                if (fails) {
                  points.push_back({c, std::nullopt});
                  continue;
                }
                double threads = 32.0 * double(warps);
                double blocks_per_sm = std::max(1.0, std::min(std::floor(228 * 1024 / std::max(smem, 1.0)),
                                                              std::floor(2048 / threads)));
                blocks_per_sm = std::min(blocks_per_sm, 32.0);
                double tiles = std::ceil(M / double(bm)) * std::ceil(N / double(bn));
                double waves = std::ceil(tiles / (sms * blocks_per_sm));
                double quant = waves / (tiles / (sms * blocks_per_sm));
                // Arithmetic intensity of the tile: bigger tiles read less per flop.
                double intensity = 1.0 / (1.0 / double(bm) + 1.0 / double(bn));
                double mem = 400.0 / intensity;
                double occupancy = std::min(1.0, blocks_per_sm * double(warps) / 16.0);
                double latency = 1.0 + 0.8 / (occupancy * double(stages));
                double lbk = std::log2(double(bk)), lvec = std::log2(double(vec)),
                       lst = std::log2(double(stages)) + 1;
                double shape = (1 + w_bk * (lbk - pref_bk) * (lbk - pref_bk)) *
                               (1 + w_vec * (lvec - pref_vec) * (lvec - pref_vec)) *
                               (1 + w_st * (lst - pref_stages) * (lst - pref_stages));
                double compute = mma_gain[mma] * (per_thread > 64 ? 1 + (per_thread - 64) / 128 : 1);
                double t = (2 * M * N * K / 1e9) * (compute + mem) * latency * shape * quant *
                           std::exp(noise(rng));
                points.push_back({c, t});
              }
  return RecordedSpace(std::move(params), std::move(points),
                       "synthetic gemm-like landscape " + std::to_string(landscape_seed));
}

}  // namespace kf::landscape
