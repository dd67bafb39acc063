// kforge ablate: from the winner, move each parameter to each of its other valid values, one
// at a time, and time them all interleaved in one worker session next to the winner.
#include "campaign/current_results.hpp"
#include "campaign/side_by_side.hpp"
#include "cli/common.hpp"
#include "cli/table.hpp"

namespace kf::cli {

void add_ablate(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand(
      "ablate", "Time each one-parameter change of the winner, side by side in one session");
  static std::string family, shape_text;
  static int rounds = 7;
  static bool json = false;
  cmd->add_option("--family", family, "Family name")->required();
  cmd->add_option("--shape", shape_text, "Shape whose stored winner is ablated")->required();
  cmd->add_option("--rounds", rounds, "Interleaved timing rounds")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  cmd->add_flag("--json", json, "Machine-readable output");
  set_action(cmd, [&g] {
    if (rounds < 1) throw std::runtime_error("--rounds must be at least 1");
    const Family f = load_family(g, family);
    const Shape shape = parse_shape(f, shape_text);
    Store store(g.db, Store::Access::ReadOnly);
    SideBySideOptions options;
    options.rounds = rounds;
    // Started before the contenders are known (the device picks the winner): allow a large space.
    WorkerClient worker({self_exe(), "worker", "--device", "0"}, side_by_side_timeout_s(200, options));
    const DeviceLimits device = worker.device();
    const auto best = best_current(store, f, shape, device_key(device));
    if (!best) throw std::runtime_error("no gated result for " + to_string(shape) + " on " + device.name);
    const Config winner = complete_stored_config(f, best->record.config);
    const auto contenders = one_parameter_changes(f, winner, make_space(f, shape, device));
    CubinCache cache(cache_dir(g));
    const auto results = time_side_by_side(f, shape, device, worker, cache, contenders, options);
    if (!results.front().timing)
      throw std::runtime_error("the winner failed when re-measured: " + to_string(results.front().status) +
                               (results.front().error.empty() ? "" : " (" + results.front().error + ")"));
    const double winner_us = results.front().timing->median_us;
    Table table({{"parameter", "param", 14, true}, {"value", "value", 10, true}, {"median us", "median_us", 10},
                 {"x winner", "ratio", 8}, {"status", "status", 0, true}});
    for (size_t i = 1; i < contenders.size(); ++i) {
      const std::string& label = contenders[i].label;
      const size_t eq = label.find('=');
      nlohmann::json row = {{"param", label.substr(0, eq)}, {"value", label.substr(eq + 1)},
                            {"status", to_string(results[i].status)}};
      std::map<std::string, std::string> text;
      if (results[i].timing) {
        row["median_us"] = results[i].timing->median_us;
        row["ratio"] = results[i].timing->median_us / winner_us;
        text["median_us"] = fmt_us(results[i].timing->median_us);
      }
      table.add(row, text);
    }
    print_table(table, json,
                "winner " + to_string(winner) + ": " + fmt_us(winner_us) + " us on " + device.name +
                    (best->stale ? " (stored result timed with an older kernel source)" : "") + "\n",
                {{"winner", to_json(winner)}, {"winner_us", winner_us}}, "variations");
  });
}

}  // namespace kf::cli
