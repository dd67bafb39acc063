// The coordinator's side of a distributed campaign (`kforge search --db postgresql://...
// --distributed`): the campaign runs its strategy as usual, but each config becomes a work item
// in the shared store instead of a job for a local worker, and results come back from the agents
// as they land. The campaign targets the device of the first agent that registers; only agents
// with that identical device claim its items.
#pragma once
#include <memory>

#include "campaign/campaign.hpp"

namespace kf {

// Throws StoreError for a store that is not PostgreSQL. The campaign starts once min_agents
// agents are alive (their number sets how many configs each shape keeps in flight).
std::shared_ptr<RemoteEvaluations> make_work_queue_evaluations(Store& store, size_t min_agents = 1);

}  // namespace kf
