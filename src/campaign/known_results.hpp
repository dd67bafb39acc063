// What the store knows about a shape before a campaign searches it: the configs never to run
// again (recorded with the kernel they would compile now), what the strategy is told of them,
// the interrupted configs to retry once, and how many of them this campaign already ran.
#pragma once
#include <cstdint>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/objective.hpp"
#include "family/family.hpp"
#include "store/store.hpp"
#include "strategy/strategy.hpp"

namespace kf {

struct KnownResults {
  std::set<std::string> done_keys;  // canonical keys never to dispatch
  std::vector<Observation> known;   // told to the strategy as its starting knowledge
  std::deque<Config> retries;       // interrupted once: dispatched first
  size_t done_by_campaign = 0;      // results this campaign recorded (a resume's budget counts them)
  size_t stale = 0;                 // configs recorded only with another kernel source: they run again
};

// A record measured with another kernel source (the family's template changed since) is stale
// and its config runs again; a config interrupted twice is given up (it killed its worker twice).
KnownResults known_results(const Store& store, const Family& family, const Shape& shape, const DeviceKey& device,
                           Objective objective, int64_t campaign_id);

}  // namespace kf
