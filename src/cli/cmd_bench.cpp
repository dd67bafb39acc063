// kforge bench: several configs of one family timed side by side in one worker session (gated
// first, then interleaved rounds), on one shape or on an experiment file's shapes.
#include <cstdio>
#include <optional>

#include "cli/bench_table.hpp"
#include "cli/common.hpp"
#include "family/user_config.hpp"
#include "sidebyside/experiment.hpp"
#include "sidebyside/side_by_side.hpp"
#include "winner/current_results.hpp"

namespace kf::cli {

namespace {

struct BenchPlan {
  std::string family;
  std::vector<std::string> shapes;
  std::string suite;
  std::vector<std::string> configs;
  Assignment defines;  // for every config; a config's own defines win
  SideBySideOptions options;
};

// store: open when a config names the stored winner ("best"), else null.
std::vector<Contender> contenders_for(const Family& f, const Shape& shape, const DeviceLimits& device,
                                      const BenchPlan& plan, Store* store) {
  const auto stored_best = [&]() -> Config {
    if (!store) throw std::logic_error("bench: 'best' without a store");
    const auto b = best_current(*store, f, shape, device_key(device));
    if (!b) throw std::runtime_error("'best' given, but there is no gated result for " + to_string(shape) +
                                     " on " + device.name);
    return complete_stored_config(f, b->record.config);
  };
  std::vector<Contender> out;
  for (const auto& text : plan.configs) {
    UserVariant v = parse_user_variant(f, text, stored_best);
    Assignment defines = plan.defines;
    for (const auto& [name, value] : v.defines) defines[name] = value;
    out.push_back({v.text, v.config, defines});
  }
  return out;
}

// 0: until the rule knows the answer (at most kMaxAutoRounds rounds, no time cap); else that many rounds.
void set_rounds(SideBySideOptions& o, int rounds) {
  o.until_decided = rounds == 0;
  o.rounds = o.until_decided ? kMaxAutoRounds : rounds;
}

void run_plan(const Globals& g, const BenchPlan& plan, bool json) {
  const Family f = load_family(g, plan.family);
  check_defines(f, plan.defines);
  const std::vector<Shape> shapes = select_shapes(f, plan.shapes, plan.suite);
  // Bad config text fails here, before a worker starts ("best" stands in as the first default).
  bool names_best = false;
  for (const auto& text : plan.configs)
    parse_user_variant(f, text, [&] {
      names_best = true;
      return parse_user_config(f, "");
    });
  // Only "best" reads the store, and bench writes nothing: an existing database, opened read-only
  // (a mistyped --db is an error, not a new empty file), and none at all without "best".
  std::optional<Store> store;
  if (names_best) store.emplace(g.db, Store::Access::ReadOnly);
  WorkerClient worker({self_exe(), "worker", "--device", "0"},
                      side_by_side_timeout_s(plan.configs.size(), plan.options));
  const DeviceLimits device = worker.device();
  CubinCache cache(cache_dir(g));
  nlohmann::json all = nlohmann::json::array();
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto contenders = contenders_for(f, shapes[i], device, plan, store ? &*store : nullptr);
    const SideBySideRun run = time_side_by_side(f, shapes[i], device, worker, cache, contenders, plan.options);
    const BenchReport report = bench_report(f, shapes[i], device.name, plan.options, contenders, run);
    if (json) {
      nlohmann::json j = report.envelope;
      j["rows"] = report.table.json();
      all.push_back(j);
    } else {
      if (i) std::printf("\n");
      print_table(report.table, false, report.heading);
    }
  }
  if (json) print_json(shapes.size() == 1 ? all.front() : all);
}

}  // namespace

void add_bench(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand(
      "bench", "Time several configs side by side in one worker session (gated first, interleaved rounds)");
  static std::string family, shape, experiment;
  static std::vector<std::string> configs, defines;
  static std::string rounds = "7";
  static double rewarm_ms = kRewarmMs;
  static bool json = false;
  cmd->add_option("--family", family, "Family name (default: the experiment's)");
  cmd->add_option("--shape", shape, "Shape, e.g. B=2,H=8,S=512,D=64,causal=0,dtype=f16");
  cmd->add_option("--config", configs,
                  "Config K=V,... (others from the family's first default), or best[,K=V,...] (the stored "
                  "winner with overrides); ';NAME=V,...' adds defines to this config only (repeatable)")
      ->check(printable_text());
  cmd->add_option("--define", defines, "Extra #define NAME=V for every config (repeatable)")->check(printable_text());
  cmd->add_option("--experiment", experiment, "Run an experiment file (experiments/*.json) instead");
  cmd->add_option("--rounds", rounds,
                  "Interleaved timing rounds, or auto: batches of rounds until the fastest config's interval "
                  "separates from the rest or a tie is established (at most 21; the heading says why it stopped)")
      ->check(rounds_or_auto())
      ->capture_default_str();
  cmd->add_option("--rewarm-ms", rewarm_ms,
                  "Warm-up before each config's rounds after its first (its first gets the full 200 ms)")
      ->check(number_in(0, 10000))
      ->capture_default_str();
  cmd->add_flag("--json", json, "Machine-readable output");
  set_action(cmd, [&g] {
    BenchPlan plan;
    if (!experiment.empty()) {
      const Experiment e = load_experiment(experiment);
      if (!family.empty() && family != e.family)
        throw std::runtime_error("--family " + family + " but the experiment is of " + e.family);
      if (!shape.empty() || !configs.empty())
        throw std::runtime_error("--experiment takes its shapes and configs from the file: drop --shape/--config");
      plan = {e.family, e.shapes, e.suite, e.configs, e.defines, {}};
      set_rounds(plan.options, e.rounds);
      if (!json) std::printf("experiment %s%s%s\n\n", e.name.c_str(), e.question.empty() ? "" : ": ",
                             e.question.c_str());
    } else {
      if (family.empty() || shape.empty() || configs.empty())
        throw std::runtime_error("bench needs --family, --shape and at least one --config (or --experiment)");
      plan = {family, {shape}, "", configs, {}, {}};
      set_rounds(plan.options, parse_rounds(rounds));
    }
    plan.options.rewarm_ms = rewarm_ms;
    if (!defines.empty()) {
      const Family f = load_family(g, plan.family);
      for (const auto& [name, value] : parse_defines(f, defines)) plan.defines[name] = value;
    }
    run_plan(g, plan, json);
  });
}

}  // namespace kf::cli
