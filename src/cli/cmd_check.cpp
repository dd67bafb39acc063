// kforge check: render and NVRTC-compile every valid config of a family (or a sample of them),
// no GPU needed (compile/sweep); this file reads the options and prints the rows.
#include <algorithm>
#include <cstdio>
#include <thread>

#include "cli/common.hpp"
#include "compile/compiler.hpp"
#include "compile/sweep.hpp"

namespace kf::cli {

namespace {

struct CheckOptions {
  std::string family, suite;
  std::vector<std::string> shapes, archs;
  size_t jobs = 0;
  bool no_cache = false, json = false;
  SweepOptions sweep;
};

void print_rows(const std::vector<SweepResult>& rows) {
  // "checked", "ok" and "failed" count configs; the reference has its own column.
  std::printf("%-7s %-28s %14s %10s %8s %6s %6s %8s %9s %9s %8s\n", "arch", "specialization", "space",
              "valid", "checked", "ok", "failed", "spilling", "registers", "reference", "wall s");
  for (const auto& r : rows) {
    const std::string regs = std::to_string(r.min_registers) + "-" + std::to_string(r.max_registers);
    char valid_text[32];
    if (r.valid_exact)
      std::snprintf(valid_text, sizeof valid_text, "%.0f", r.valid_configs);
    else
      std::snprintf(valid_text, sizeof valid_text, "~%.3g", r.valid_configs);
    std::printf("%-7s %-28s %14zu %10s %8zu %6zu %6zu %8zu %9s %9s %8.1f\n", r.arch.c_str(),
                r.specialization.c_str(), r.space, valid_text, r.checked, r.compiled_ok, r.failed, r.spilling,
                r.compiled_ok ? regs.c_str() : "-", r.reference_ok ? "ok" : "failed", r.wall_s);
    std::fputs(r.errors.format().c_str(), stdout);
  }
}

void run_check(const Globals& g, const CheckOptions& o) {
  const Family f = load_family(g, o.family);
  const auto shapes = distinct_specializations(f, select_shapes(f, o.shapes, o.suite));
  const size_t jobs = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::unique_ptr<CubinCache> cache;
  if (!o.no_cache) cache = std::make_unique<CubinCache>(cache_dir(g));
  CompilePool pool(jobs, cache.get());
  std::vector<SweepResult> rows;
  size_t failures = 0;
  bool reference_failed = false;
  std::vector<std::string> problems;  // empty spaces and expressions that fail to evaluate
  for (const auto& arch : o.archs)
    for (const auto& shape : shapes) {
      rows.push_back(sweep_space(f, shape, arch, o.sweep, pool, jobs));
      failures += rows.back().failed;
      if (!rows.back().reference_ok) reference_failed = true;
      for (auto& p : spec_problems(rows.back(), shape)) problems.push_back(std::move(p));
    }
  if (o.json) {
    nlohmann::json report = nlohmann::json::array();
    for (const auto& r : rows) report.push_back(to_json(r));
    print_json(report);
  } else {
    print_rows(rows);
  }
  if (!problems.empty())
    throw std::runtime_error(f.name + ": " + problems.front() +
                             (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : ""));
  if (reference_failed && failures)
    throw std::runtime_error("the reference kernel and " + std::to_string(failures) + " config(s) of " + f.name +
                             " failed to compile");
  if (reference_failed) throw std::runtime_error("the reference kernel of " + f.name + " failed to compile");
  if (failures)
    throw std::runtime_error(std::to_string(failures) + " config(s) of " + f.name + " failed to compile");
}

}  // namespace

void add_check(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand(
      "check", "Render and NVRTC-compile every valid config of a family (no GPU needed)");
  static CheckOptions o;
  cmd->add_option("--family", o.family, "Family name (see `kforge list`)")->required();
  add_shape_options(cmd, o.shapes, o.suite);
  cmd->add_option("--arch", o.archs, "Target architecture(s), e.g. sm_90 sm_89")
      ->default_val(std::vector<std::string>{"sm_90"})
      ->check(known_arch());
  cmd->add_option("--sample", o.sweep.sample,
                  "Check a seeded random sample of N configs per arch, drawn without listing the space")
      ->check(whole_number(1));
  cmd->add_flag("--count", o.sweep.count, "Count the valid configs exactly (a full walk; minutes on large spaces)");
  cmd->add_option("--seed", o.sweep.seed, "Seed of the sample")->check(whole_number(0))->capture_default_str();
  cmd->add_option("-j,--jobs", o.jobs, "Compile threads (default: all cores)")
      ->check(whole_number(1, kMaxThreads));
  cmd->add_flag("--no-cache", o.no_cache, "Compile everything, ignoring the cubin cache");
  cmd->add_flag("--json", o.json, "Machine-readable output");
  set_action(cmd, [&g] {
    o.sweep.quiet = g.quiet || o.json;
    run_check(g, o);
  });
}

}  // namespace kf::cli
