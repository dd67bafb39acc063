// Printing a finished campaign (search and resume share it).
#pragma once
#include "campaign/campaign.hpp"

namespace kf::cli {
nlohmann::json outcome_json(const CampaignOutcome& o);
void print_outcome(const CampaignOutcome& o);
}  // namespace kf::cli
