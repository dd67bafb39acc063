// Printing a finished campaign (search and resume share it).
#pragma once
#include "campaign/campaign.hpp"

namespace kf::cli {
nlohmann::json outcome_json(const CampaignOutcome& o);
void print_outcome(const CampaignOutcome& o);
// --json: outcome_json, else print_outcome.
void report_outcome(const CampaignOutcome& o, bool json);
}  // namespace kf::cli
