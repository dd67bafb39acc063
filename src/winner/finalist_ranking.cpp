#include "winner/finalist_ranking.hpp"

namespace kf {

namespace {
std::string text_of(const nlohmann::json& e, const char* k) {
  if (!e.is_object()) return "";
  auto it = e.find(k);
  return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
}
double number_of(const nlohmann::json& e, const char* k) {
  auto it = e.find(k);
  return it != e.end() && it->is_number() ? it->get<double>() : 0.0;
}
bool same_device(const DeviceKey& a, const DeviceKey& b) {
  return a.name == b.name && a.cc == b.cc && a.sm_count == b.sm_count && a.driver == b.driver;
}
}  // namespace

int FinalistRanking::position(const std::string& config, const std::string& variant_hash) const {
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i].config == config && order[i].variant_hash == variant_hash) return static_cast<int>(i);
  return -1;
}

void record_ranking(Store& store, int64_t campaign_id, const Shape& shape, const std::vector<RankedConfig>& order) {
  auto c = store.campaign(campaign_id);
  if (!c) return;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : order) {
    nlohmann::json e = {{"config", r.config},
                        {"variant_hash", r.variant_hash},
                        {"median_us", r.median_us},
                        {"ci_us", {r.ci_lo_us, r.ci_hi_us}}};
    if (r.rounds > 0) e["rounds"] = r.rounds;
    if (!r.round_us.empty()) e["round_us"] = r.round_us;
    list.push_back(e);
  }
  nlohmann::json options = c->options.is_object() ? c->options : nlohmann::json::object();
  options["remeasured"][to_string(shape)] = list;
  store.set_campaign_options(campaign_id, options);
}

std::optional<FinalistRanking> latest_ranking(const Store& store, const std::string& family, const Shape& shape,
                                              const DeviceKey& device) {
  const std::string key = to_string(shape);
  std::optional<FinalistRanking> out;
  for (const auto& c : store.campaigns()) {
    if (c.family != family || !c.device || !same_device(*c.device, device)) continue;
    if (!c.options.is_object() || !c.options.contains("remeasured")) continue;
    const auto& by_shape = c.options.at("remeasured");
    if (!by_shape.is_object() || !by_shape.contains(key) || !by_shape.at(key).is_array()) continue;
    if (out && out->campaign_id > c.id) continue;
    FinalistRanking r{c.id, {}};
    for (const auto& e : by_shape.at(key)) {
      RankedConfig rc;
      rc.config = text_of(e, "config");
      rc.variant_hash = text_of(e, "variant_hash");
      if (rc.config.empty() || rc.variant_hash.empty()) continue;  // (an entry edited by hand: left out)
      rc.median_us = number_of(e, "median_us");
      if (e.contains("ci_us") && e.at("ci_us").is_array() && e.at("ci_us").size() == 2 &&
          e.at("ci_us")[0].is_number() && e.at("ci_us")[1].is_number()) {
        rc.ci_lo_us = e.at("ci_us")[0].get<double>();
        rc.ci_hi_us = e.at("ci_us")[1].get<double>();
      }
      if (e.contains("rounds") && e.at("rounds").is_number_integer()) rc.rounds = e.at("rounds").get<int>();
      if (e.contains("round_us") && e.at("round_us").is_array())
        for (const auto& v : e.at("round_us"))
          if (v.is_number()) rc.round_us.push_back(v.get<double>());
      r.order.push_back(std::move(rc));
    }
    if (!r.order.empty()) out = std::move(r);
  }
  return out;
}

}  // namespace kf
