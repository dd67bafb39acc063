// kforge ablate: from the winner, move each parameter to each of its other valid values, one
// at a time, and time them all interleaved in one worker session next to the winner
// (sidebyside/ablate); this file reads the options and prints the table.
#include "cli/common.hpp"
#include "cli/table.hpp"
#include "sidebyside/ablate.hpp"

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
    CubinCache cache(cache_dir(g));
    const Ablation a = ablate_winner(store, f, shape, worker, cache, options);
    Table table({{"parameter", "param", 14, true}, {"value", "value", 10, true}, {"median us", "median_us", 10},
                 {"x winner", "ratio", 8}, {"status", "status", 0, true}});
    for (const auto& v : a.variations) {
      nlohmann::json row = {{"param", v.param}, {"value", v.value}, {"status", to_string(v.result.status)}};
      std::map<std::string, std::string> text;
      if (v.result.timing) {
        row["median_us"] = v.result.timing->median_us;
        row["ratio"] = v.result.timing->median_us / a.winner_us;
        text["median_us"] = fmt_us(v.result.timing->median_us);
      }
      table.add(row, text);
    }
    print_table(table, json,
                "winner " + to_string(a.winner) + ": " + fmt_us(a.winner_us) + " us on " + a.device +
                    (a.stale ? " (stored result timed with an older kernel source or timing method)" : "") + "\n",
                {{"winner", to_json(a.winner)}, {"winner_us", a.winner_us}}, "variations");
  });
}

}  // namespace kf::cli
