// Printing a finished campaign (search, resume and refresh share it).
#pragma once
#include "campaign/campaign.hpp"

namespace kf::cli {
struct Globals;
nlohmann::json outcome_json(const CampaignOutcome& o);
void print_outcome(const CampaignOutcome& o);
// The command that continues a stopped campaign, with the global options that reach its
// database and specs, shell-quoted: "kforge --db 'my runs/r.db' resume 3".
std::string resume_command(const Globals& g, int64_t campaign_id);
// --json: outcome_json, else print_outcome; a stopped campaign also gets its resume command
// (the JSON's "resume_command").
void report_outcome(const CampaignOutcome& o, bool json, const Globals& g);
}  // namespace kf::cli
