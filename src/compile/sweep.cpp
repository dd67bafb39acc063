#include "compile/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <future>
#include <optional>
#include <random>
#include <set>

#include "compile/compiler.hpp"
#include "family/config_check.hpp"
#include "family/render.hpp"
#include "util/progress_line.hpp"

namespace kf {

namespace {

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
  CompileErrorGroups errors;

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

// Every expression a campaign evaluates, for the reference and each checked config.
struct ExpressionNotes {
  ExpressionReport report;
  void note(const std::string& who, const std::optional<std::string>& failure) {
    if (!failure) return;
    if (report.first.size() < 5) report.first.push_back(who + ": " + *failure);
    ++report.failed;
  }
};

std::string specialization(const Family& f, const Shape& shape) { return to_string(specialization_of(f, shape)); }

// The valid count: exact with --count (a full walk, with a progress line), else estimated.
void count_valid(const SearchSpace& space, const std::string& label, const SweepOptions& o, SweepResult& r) {
  std::mt19937_64 est_rng(o.seed);
  r.valid_configs = space.estimate_valid(est_rng, 200);
  if (!o.count) return;
  ProgressLine counting(label + " counting", "valid configs", 0, false, o.quiet);
  r.valid_configs = static_cast<double>(space.count_valid([&](size_t n) { counting.update(n); }));
  counting.finish(static_cast<size_t>(r.valid_configs));
  r.valid_exact = true;
}

// Compiles the configs of source through a window of compiles in flight; returns how many it walked.
size_t compile_configs(const Family& f, const Shape& shape, const std::string& arch, ConfigSource& source,
                       CompilePool& pool, size_t window_size, Tally& tally, ExpressionNotes& expr,
                       ProgressLine& progress) {
  const DeviceLimits limits = DeviceLimits::for_arch(arch);
  std::deque<std::pair<std::string, std::future<CompiledKernel>>> window;
  size_t walked = 0;
  for (bool more = true; more || !window.empty();) {
    while (more && window.size() < window_size) {
      auto c = source.next();
      if (!c) {
        more = false;
        break;
      }
      ++walked;
      expr.note(to_string(*c), config_expression_failure(f, *c, shape, limits));
      window.emplace_back(to_string(*c), pool.submit(render_variant(f, *c, shape), arch));
    }
    if (window.empty()) break;
    tally.add(window.front().second.get(), window.front().first);
    window.pop_front();
    progress.update(tally.checked);
  }
  return walked;
}

}  // namespace

nlohmann::json to_json(const SweepResult& r) {
  return {{"arch", r.arch}, {"specialization", r.specialization}, {"valid_configs", r.valid_configs},
          {"valid_exact", r.valid_exact}, {"space", r.space}, {"checked", r.checked},
          {"compiled_ok", r.compiled_ok}, {"failed", r.failed}, {"reference_ok", r.reference_ok}, {"cached", r.cached},
          {"spilling", r.spilling}, {"registers", {r.min_registers, r.max_registers}},
          {"compile_cpu_s", r.compile_cpu_s}, {"wall_s", r.wall_s}, {"errors", r.errors.to_json()},
          {"distinct_errors", r.errors.groups()}, {"walked", r.walked},
          {"expression_failures", r.expression_failures}, {"expression_errors", r.expression_errors}};
}

std::vector<Shape> distinct_specializations(const Family& f, const std::vector<Shape>& shapes) {
  std::vector<Shape> out;
  std::set<std::string> seen;
  for (const auto& s : shapes)
    if (seen.insert(specialization(f, s)).second) out.push_back(s);
  return out;
}

SweepResult sweep_space(const Family& f, const Shape& shape, const std::string& arch, const SweepOptions& o,
                        CompilePool& pool, size_t jobs) {
  const SearchSpace space = make_space(f, shape, DeviceLimits::for_arch(arch));
  SweepResult r;
  r.arch = arch;
  r.specialization = specialization(f, shape);
  r.space = space.cardinality();
  const std::string label = "check " + f.name + " " + arch + " " + r.specialization;
  count_valid(space, label, o, r);
  const size_t expected = o.sample ? o.sample : static_cast<size_t>(std::llround(r.valid_configs));
  ProgressLine progress(label, "compiled", expected, !o.sample && !r.valid_exact, o.quiet);
  const auto t0 = std::chrono::steady_clock::now();
  Tally tally;
  // The reference is compiled like a config but counted apart: "6 ok of 5" read as nonsense.
  const CompiledKernel reference = pool.submit(render_reference(f, shape), arch).get();
  r.reference_ok = reference.ok;
  if (!reference.ok) tally.errors.add("reference", reference.log);
  ExpressionNotes expr;
  expr.note("reference", reference_expression_failure(f, shape, DeviceLimits::for_arch(arch)));
  ConfigSource source(space, o.sample, o.seed);
  r.walked = compile_configs(f, shape, arch, source, pool, o.window * jobs, tally, expr, progress);
  progress.finish(tally.checked);
  if (!o.sample) {  // the walk saw every valid config
    r.valid_configs = static_cast<double>(r.walked);
    r.valid_exact = true;
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.checked = tally.checked;
  r.compiled_ok = tally.ok;
  r.failed = tally.checked - tally.ok;
  r.cached = tally.cached;
  r.spilling = tally.spilling;
  r.min_registers = tally.ok ? tally.min_regs : 0;
  r.max_registers = tally.max_regs;
  r.compile_cpu_s = tally.compile_ms / 1000.0;
  r.errors = std::move(tally.errors);
  r.expression_failures = expr.report.failed;
  r.expression_errors = std::move(expr.report.first);
  return r;
}

std::vector<std::string> spec_problems(const SweepResult& r, const Shape& shape) {
  std::vector<std::string> out;
  if (r.walked == 0) out.push_back("no valid config for " + r.arch + " at " + to_string(shape));
  if (r.expression_failures > 0)
    out.push_back(std::to_string(r.expression_failures) + " config(s) at " + to_string(shape) + " (" + r.arch +
                  ") whose expressions fail, e.g. " + r.expression_errors.front());
  return out;
}

}  // namespace kf
