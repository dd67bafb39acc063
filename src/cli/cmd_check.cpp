// kforge check: render and NVRTC-compile every valid config of a family, no GPU needed.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <thread>

#include "cli/common.hpp"
#include "compile/error_groups.hpp"
#include "compile/compiler.hpp"

namespace kf::cli {

namespace {

struct CheckOptions {
  std::string family, suite;
  std::vector<std::string> shapes, archs;
  size_t sample = 0;
  uint64_t seed = 1;
  size_t jobs = 0;
  bool no_cache = false, json = false;
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
  for (const auto& arch : o.archs) {
    const DeviceLimits limits = DeviceLimits::for_arch(arch);
    for (const auto& shape : shapes) {
      const SearchSpace space = make_space(f, shape, limits);
      std::vector<Config> configs = space.valid_configs();
      if (o.sample && o.sample < configs.size()) {
        std::mt19937_64 rng(o.seed);
        std::shuffle(configs.begin(), configs.end(), rng);
        configs.resize(o.sample);
      }
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<std::future<CompiledKernel>> futures;
      futures.push_back(pool.submit(render_reference(f, shape), arch));
      for (const auto& c : configs) futures.push_back(pool.submit(render_variant(f, c, shape), arch));
      size_t ok = 0, cached = 0, spilling = 0;
      int min_regs = 1 << 30, max_regs = 0;
      double compile_ms = 0;
      CompileErrorGroups errors;  // each distinct error once, with how many configs it hit
      for (size_t i = 0; i < futures.size(); ++i) {
        const CompiledKernel k = futures[i].get();
        const std::string what = i == 0 ? "reference" : to_string(configs[i - 1]);
        if (!k.ok) {
          errors.add(what, k.log);
          continue;
        }
        ++ok;
        cached += k.from_cache;
        compile_ms += k.info.compile_ms;
        spilling += (k.info.spill_stores + k.info.spill_loads) > 0;
        min_regs = std::min(min_regs, k.info.registers);
        max_regs = std::max(max_regs, k.info.registers);
      }
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      failures += futures.size() - ok;
      Shape spec;
      for (const auto& d : f.specialize) spec[d] = shape.at(d);
      report.push_back({{"arch", arch}, {"specialization", to_string(spec)},
                        {"valid_configs", space.valid_configs().size()},
                        {"space", space.cardinality()}, {"checked", configs.size()},
                        {"compiled_ok", ok}, {"failed", futures.size() - ok}, {"cached", cached},
                        {"spilling", spilling}, {"registers", {min_regs, max_regs}},
                        {"compile_cpu_s", compile_ms / 1000.0}, {"wall_s", wall},
                        {"errors", errors.to_json()}, {"distinct_errors", errors.groups()}});
      error_text.push_back(errors.format());
    }
  }
  if (o.json) {
    print_json(report);
  } else {
    std::printf("%-7s %-28s %8s %8s %8s %6s %6s %8s %9s %8s\n", "arch", "specialization", "space",
                "valid", "checked", "ok", "failed", "spilling", "registers", "wall s");
    for (size_t row = 0; row < report.size(); ++row) {
      const auto& r = report[row];
      const std::string regs = std::to_string(r["registers"][0].get<int>()) + "-" +
                               std::to_string(r["registers"][1].get<int>());
      std::printf("%-7s %-28s %8zu %8zu %8zu %6zu %6zu %8zu %9s %8.1f\n",
                  r["arch"].get<std::string>().c_str(),
                  r["specialization"].get<std::string>().c_str(), r["space"].get<size_t>(),
                  r["valid_configs"].get<size_t>(), r["checked"].get<size_t>(),
                  r["compiled_ok"].get<size_t>(), r["failed"].get<size_t>(),
                  r["spilling"].get<size_t>(), regs.c_str(), r["wall_s"].get<double>());
      std::fputs(error_text[row].c_str(), stdout);
    }
  }
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
  cmd->add_option("--sample", o.sample, "Check a seeded random sample of N configs per arch");
  cmd->add_option("--seed", o.seed, "Seed of the sample")->capture_default_str();
  cmd->add_option("-j,--jobs", o.jobs, "Compile threads (default: all cores)");
  cmd->add_flag("--no-cache", o.no_cache, "Compile everything, ignoring the cubin cache");
  cmd->add_flag("--json", o.json, "Machine-readable output");
  set_action(cmd, [&g] { run_check(g, o); });
}

}  // namespace kf::cli
