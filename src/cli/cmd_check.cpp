// kforge check: render and NVRTC-compile every valid config of a family (or a sample of them),
// no GPU needed. The space is walked or sampled, never listed; a progress line every 10 s.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <future>
#include <optional>
#include <set>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <thread>

#include "cli/common.hpp"
#include "compile/error_groups.hpp"
#include "compile/compiler.hpp"
#include "util/progress_line.hpp"
#include "family/config_check.hpp"

namespace kf::cli {

namespace {

struct CheckOptions {
  std::string family, suite;
  std::vector<std::string> shapes, archs;
  size_t sample = 0;
  uint64_t seed = 1;
  size_t jobs = 0;
  bool no_cache = false, json = false, count = false;
  bool quiet = false;  // -q or --json: no progress line
};

// One shape per specialization: configs compile identically for shapes that only differ in
// runtime dimensions, and constraints that depend on those are checked for the first such shape.
std::vector<Shape> distinct_specializations(const Family& f, const std::vector<Shape>& shapes) {
  std::vector<Shape> out;
  std::set<std::string> seen;
  for (const auto& s : shapes) {
    Shape spec;
    for (const auto& d : f.specialize) spec[d] = s.at(d);
    if (seen.insert(to_string(spec)).second) out.push_back(s);
  }
  return out;
}

// The configs to check, one at a time: a seeded random sample of `sample` distinct configs
// (drawn, never listed: fewer only when the space holds fewer), or the whole space walked.
class ConfigSource {
 public:
  ConfigSource(const SearchSpace& space, size_t sample, uint64_t seed)
      : space_(space), sample_(sample), rng_(seed), walk_(space) {}
  std::optional<Config> next() {
    if (!sample_) return walk_.next();
    if (drawn_.size() >= sample_) return std::nullopt;
    auto c = space_.random_valid(rng_, [&](const Config& x) { return !drawn_.count(to_string(x)); });
    if (c) drawn_.insert(to_string(*c));
    return c;
  }

 private:
  const SearchSpace& space_;
  size_t sample_;
  std::mt19937_64 rng_;
  SpaceWalker walk_;
  std::set<std::string> drawn_;
};

struct Tally {
  size_t checked = 0, ok = 0, cached = 0, spilling = 0;
  int min_regs = 1 << 30, max_regs = 0;
  double compile_ms = 0;
  CompileErrorGroups errors;  // each distinct error once, with how many configs it hit

  void add(const CompiledKernel& k, const std::string& what) {
    ++checked;
    if (!k.ok) {
      errors.add(what, k.log);
      return;
    }
    ++ok;
    cached += k.from_cache;
    compile_ms += k.info.compile_ms;
    spilling += (k.info.spill_stores + k.info.spill_loads) > 0;
    min_regs = std::min(min_regs, k.info.registers);
    max_regs = std::max(max_regs, k.info.registers);
  }
};

nlohmann::json check_space(const Family& f, const Shape& shape, const std::string& arch, const CheckOptions& o,
                           CompilePool& pool, size_t jobs, std::vector<std::string>& error_text) {
  const SearchSpace space = make_space(f, shape, DeviceLimits::for_arch(arch));
  Shape spec;
  for (const auto& d : f.specialize) spec[d] = shape.at(d);
  const std::string label = "check " + f.name + " " + arch + " " + to_string(spec);
  // The valid count: exact with --count or a full check (the walk counts it), else estimated.
  std::mt19937_64 est_rng(o.seed);
  double valid = space.estimate_valid(est_rng, 200);
  bool exact = false;
  if (o.count) {
    ProgressLine counting(label + " counting", "valid configs", 0, false, o.quiet);
    valid = static_cast<double>(space.count_valid([&](size_t n) { counting.update(n); }));
    counting.finish(static_cast<size_t>(valid));
    exact = true;
  }
  const size_t expected = o.sample ? o.sample : static_cast<size_t>(std::llround(valid));
  ProgressLine progress(label, "compiled", expected, !o.sample && !exact, o.quiet);
  const auto t0 = std::chrono::steady_clock::now();
  Tally tally;
  const CompiledKernel ref = pool.submit(render_reference(f, shape), arch).get();
  tally.add(ref, "reference");
  // A window of compiles in flight: memory stays bounded however large the space.
  ConfigSource source(space, o.sample, o.seed);
  // Every expression a campaign evaluates, for the reference and each checked config.
  const DeviceLimits limits = DeviceLimits::for_arch(arch);
  ExpressionReport expr;
  const auto note = [&](const std::string& who, const std::optional<std::string>& failure) {
    if (!failure) return;
    if (expr.first.size() < 5) expr.first.push_back(who + ": " + *failure);
    ++expr.failed;
  };
  note("reference", reference_expression_failure(f, shape, limits));
  std::deque<std::pair<std::string, std::future<CompiledKernel>>> window;
  size_t walked = 0;
  for (bool more = true; more || !window.empty();) {
    while (more && window.size() < 4 * jobs) {
      auto c = source.next();
      if (!c) {
        more = false;
        break;
      }
      ++walked;
      note(to_string(*c), config_expression_failure(f, *c, shape, limits));
      window.emplace_back(to_string(*c), pool.submit(render_variant(f, *c, shape), arch));
    }
    if (window.empty()) break;
    tally.add(window.front().second.get(), window.front().first);
    window.pop_front();
    progress.update(tally.checked - 1);
  }
  progress.finish(tally.checked - 1);
  if (!o.sample) {  // the walk saw every valid config
    valid = static_cast<double>(walked);
    exact = true;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  error_text.push_back(tally.errors.format());
  return {{"arch", arch}, {"specialization", to_string(spec)}, {"valid_configs", valid},
          {"valid_exact", exact}, {"space", space.cardinality()}, {"checked", tally.checked - 1},
          {"compiled_ok", tally.ok}, {"failed", tally.checked - tally.ok}, {"cached", tally.cached},
          {"spilling", tally.spilling}, {"registers", {tally.min_regs, tally.max_regs}},
          {"compile_cpu_s", tally.compile_ms / 1000.0}, {"wall_s", wall}, {"errors", tally.errors.to_json()},
          {"distinct_errors", tally.errors.groups()}, {"walked", walked},
          {"expression_failures", expr.failed}, {"expression_errors", expr.first}};
}

void run_check(const Globals& g, const CheckOptions& o) {
  const Family f = load_family(g, o.family);
  const auto shapes = distinct_specializations(f, select_shapes(f, o.shapes, o.suite));
  const size_t jobs = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::unique_ptr<CubinCache> cache;
  if (!o.no_cache) cache = std::make_unique<CubinCache>(cache_dir(g));
  CompilePool pool(jobs, cache.get());
  nlohmann::json report = nlohmann::json::array();
  std::vector<std::string> error_text;  // per report row
  size_t failures = 0;
  std::vector<std::string> spec_problems;  // empty spaces and expressions that fail to evaluate
  for (const auto& arch : o.archs)
    for (const auto& shape : shapes) {
      report.push_back(check_space(f, shape, arch, o, pool, jobs, error_text));
      failures += report.back()["failed"].get<size_t>();
      const auto& r = report.back();
      if (r["walked"].get<size_t>() == 0)
        spec_problems.push_back("no valid config for " + arch + " at " + to_string(shape));
      if (r["expression_failures"].get<size_t>() > 0)
        spec_problems.push_back(std::to_string(r["expression_failures"].get<size_t>()) + " config(s) at " +
                                to_string(shape) + " (" + arch + ") whose expressions fail, e.g. " +
                                r["expression_errors"][0].get<std::string>());
    }
  if (o.json) {
    print_json(report);
  } else {
    std::printf("%-7s %-28s %14s %10s %8s %6s %6s %8s %9s %8s\n", "arch", "specialization", "space",
                "valid", "checked", "ok", "failed", "spilling", "registers", "wall s");
    for (size_t row = 0; row < report.size(); ++row) {
      const auto& r = report[row];
      const std::string regs = std::to_string(r["registers"][0].get<int>()) + "-" +
                               std::to_string(r["registers"][1].get<int>());
      const double valid = r["valid_configs"].get<double>();
      char valid_text[32];
      if (r["valid_exact"].get<bool>())
        std::snprintf(valid_text, sizeof valid_text, "%.0f", valid);
      else
        std::snprintf(valid_text, sizeof valid_text, "~%.3g", valid);
      std::printf("%-7s %-28s %14zu %10s %8zu %6zu %6zu %8zu %9s %8.1f\n",
                  r["arch"].get<std::string>().c_str(),
                  r["specialization"].get<std::string>().c_str(), r["space"].get<size_t>(),
                  valid_text, r["checked"].get<size_t>(),
                  r["compiled_ok"].get<size_t>(), r["failed"].get<size_t>(),
                  r["spilling"].get<size_t>(), regs.c_str(), r["wall_s"].get<double>());
      std::fputs(error_text[row].c_str(), stdout);
    }
  }
  if (!spec_problems.empty())
    throw std::runtime_error(f.name + ": " + spec_problems.front() +
                             (spec_problems.size() > 1 ? " (and " + std::to_string(spec_problems.size() - 1) + " more)" : ""));
  if (failures)
    throw std::runtime_error(std::to_string(failures) + " config(s) of " + f.name +
                             " failed to compile");
}

}  // namespace

void add_check(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand(
      "check", "Render and NVRTC-compile every valid config of a family (no GPU needed)");
  static CheckOptions o;
  cmd->add_option("--family", o.family, "Family name (see `kforge list`)")->required();
  add_shape_options(cmd, o.shapes, o.suite);
  cmd->add_option("--arch", o.archs, "Target architecture(s), e.g. sm_90 sm_89")
      ->default_val(std::vector<std::string>{"sm_90"});
  cmd->add_option("--sample", o.sample,
                  "Check a seeded random sample of N configs per arch, drawn without listing the space")
      ->check(whole_number(1));
  cmd->add_flag("--count", o.count, "Count the valid configs exactly (a full walk; minutes on large spaces)");
  cmd->add_option("--seed", o.seed, "Seed of the sample")->check(whole_number(0))->capture_default_str();
  cmd->add_option("-j,--jobs", o.jobs, "Compile threads (default: all cores)")
      ->check(whole_number(1, kMaxThreads));
  cmd->add_flag("--no-cache", o.no_cache, "Compile everything, ignoring the cubin cache");
  cmd->add_flag("--json", o.json, "Machine-readable output");
  set_action(cmd, [&g] {
    o.quiet = g.quiet || o.json;
    run_check(g, o);
  });
}

}  // namespace kf::cli
