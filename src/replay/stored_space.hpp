// Recorded spaces from the results database: a family's stored evaluations of one shape on one
// device (an exhaustive campaign, typically), and the seeds a campaign on that shape would take
// from a neighbouring shape. The adapter between the store and replay().
#pragma once
#include <string>
#include <vector>

#include "family/family.hpp"
#include "replay/recorded_space.hpp"
#include "store/store.hpp"

namespace kf {

struct StoredSpace {
  RecordedSpace space;
  DeviceKey device;  // the device whose evaluations it holds
};

// Every stored evaluation of (family, shape) on one device becomes a recorded point; the device
// with the most evaluations is used unless one is named. Each domain is narrowed to the values
// that were recorded (a parameter the campaigns pinned stays pinned) and keeps the spec's prior.
// Throws std::runtime_error when nothing is stored.
StoredSpace stored_space(Store& store, const Family& f, const Shape& shape, const std::string& device_name = "");

// The `count` fastest successful configs of another stored shape on the device: what a campaign
// on a new shape is seeded with when that shape is its nearest stored neighbour.
std::vector<Config> neighbour_seeds(Store& store, const Family& f, const Shape& shape, const DeviceKey& device,
                                    size_t count = 8);

}  // namespace kf
