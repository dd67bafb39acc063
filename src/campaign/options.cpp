// What a campaign records about how it searches, so `kforge resume` continues the same search.
#include "campaign/campaign.hpp"

namespace kf {

nlohmann::json to_json(const CampaignOptions& o) {
  nlohmann::json listed = nlohmann::json::object();
  for (const auto& [shape, configs] : o.listed) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : configs) list.push_back(to_json(c));
    listed[shape] = list;
  }
  return {{"strategy", o.strategy},
          {"listed", listed},
          {"seed", o.seed},
          {"objective", to_string(o.objective)},
          {"budget",
           {{"evals", o.budget.evals_per_shape},
            {"time_s", o.budget.time_s},
            {"plateau", o.budget.plateau}}},
          {"timing", to_json(o.timing)},
          {"eval_timeout_s", o.eval_timeout_s},
          {"compile_threads", o.compile_threads},
          {"gpus", o.gpus},
          {"remeasure_top_k", o.remeasure_top_k},
          {"finalist_rounds", o.finalist_rounds},
          {"finalist_share", o.finalist_share},
          {"finalist_min_s", o.finalist_min_s},
          {"strategy_options", o.strategy_options},
          {"fixed", to_json(o.fixed)},
          {"seeding", o.seeding},
          {"schedule", o.schedule},
          {"sanitize", o.sanitize},
          {"sanitize_timeout_s", o.sanitize_timeout_s}};
}

CampaignOptions campaign_options_from_json(const nlohmann::json& j) {
  CampaignOptions o;
  o.strategy = j.value("strategy", o.strategy);
  o.seed = j.value("seed", o.seed);
  o.objective = parse_objective(j.value("objective", std::string("time")));  // (absent: campaigns before it)
  if (j.contains("budget")) {
    const auto& b = j.at("budget");
    o.budget.evals_per_shape = b.value("evals", size_t{0});
    o.budget.time_s = b.value("time_s", 0.0);
    o.budget.plateau = b.value("plateau", size_t{0});
  }
  if (j.contains("timing")) o.timing = timing_options_from_json(j.at("timing"));
  o.eval_timeout_s = j.value("eval_timeout_s", o.eval_timeout_s);
  o.compile_threads = j.value("compile_threads", o.compile_threads);
  o.gpus = j.value("gpus", o.gpus);
  o.remeasure_top_k = j.value("remeasure_top_k", o.remeasure_top_k);
  o.finalist_rounds = j.value("finalist_rounds", o.finalist_rounds);
  o.finalist_share = j.value("finalist_share", o.finalist_share);
  o.finalist_min_s = j.value("finalist_min_s", o.finalist_min_s);
  o.strategy_options = j.value("strategy_options", nlohmann::json::object());
  if (j.contains("fixed")) o.fixed = assignment_from_json(j.at("fixed"));
  o.seeding = j.value("seeding", o.seeding);
  o.schedule = j.value("schedule", o.schedule);
  if (j.contains("listed"))
    for (const auto& entry : j.at("listed").items())
      for (const auto& c : entry.value()) o.listed[entry.key()].push_back(assignment_from_json(c));
  o.sanitize = j.value("sanitize", o.sanitize);
  o.sanitize_timeout_s = j.value("sanitize_timeout_s", o.sanitize_timeout_s);
  return o;
}

}  // namespace kf
