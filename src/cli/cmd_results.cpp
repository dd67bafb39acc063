// kforge results: one shape's recorded results written in a community format (a Kernel Tuner
// cache or T4 results), so other tuners can replay kforge's measured spaces.
#include <cstdio>
#include <fstream>

#include "cli/common.hpp"
#include "importers/writers.hpp"

namespace kf::cli {

namespace {

// The stored results of (family, shape) on one device (the one with most results unless
// named), optionally of one campaign, with each domain narrowed to the values recorded (in
// spec order) so the written space is no larger than what was measured.
ResultTable stored_table(const Globals& g, const Family& f, const Shape& shape,
                         const std::string& device_name, std::optional<int64_t> campaign) {
  Store store(g.db, Store::Access::ReadOnly);  // reads only: works on a read-only file, never creates one
  std::map<std::string, std::vector<EvaluationRecord>> by_device;
  for (auto& e : store.evaluations(f.name, shape, std::nullopt, campaign))
    if (e.status != Status::Interrupted) by_device[e.device.name].push_back(std::move(e));
  if (by_device.empty())
    throw std::runtime_error("no stored results of " + f.name + " at " + to_string(shape) +
                             (campaign ? " in campaign " + std::to_string(*campaign) : std::string()));
  std::string chosen = device_name;
  if (chosen.empty())
    for (const auto& [name, evals] : by_device)
      if (chosen.empty() || evals.size() > by_device[chosen].size()) chosen = name;
  if (!by_device.count(chosen)) throw std::runtime_error("no results on device '" + chosen + "'");

  ResultTable t;
  t.kernel_name = f.name;
  t.device_name = chosen;
  for (const auto& d : f.dims)
    if (auto it = shape.find(d.name); it != shape.end() && is_int(it->second))
      t.problem_size.push_back(std::get<int64_t>(it->second));
  t.provenance = {{"family", f.name}, {"shape", to_string(shape)}, {"database", g.db}};
  if (campaign) t.provenance["campaign"] = *campaign;
  for (const auto& e : by_device[chosen]) {
    ResultRow r;
    r.config = complete_stored_config(f, e.config);
    r.status = e.status;
    if (e.status == Status::Ok && e.timing) r.time_us = e.timing->median_us;
    if (e.kernel) r.compile_ms = e.kernel->compile_ms;
    if (e.timing) r.benchmark_ms = e.timing->median_us * 1e-3 * e.timing->reps * std::max(1, e.timing->launches_per_rep);
    r.timestamp = e.created_at;
    t.rows.push_back(std::move(r));
  }
  for (const auto& p : f.params) {
    ParamSpec narrowed{p.name, {}};
    for (const auto& v : p.values)
      for (const auto& r : t.rows)
        if (r.config.at(p.name) == v) {
          narrowed.values.push_back(v);
          break;
        }
    t.params.push_back(std::move(narrowed));
  }
  return t;
}

}  // namespace

void add_results(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand(
      "results", "Write a shape's recorded results as a Kernel Tuner cache or T4 file");
  static std::string family, shape, device, format, out;
  static int64_t campaign = 0;
  cmd->add_option("--format", format, "kernel-tuner-cache or t4")->required()->check(one_of({"kernel-tuner-cache", "t4"}));
  cmd->add_option("--family", family, "Family name")->required();
  cmd->add_option("--shape", shape, "The shape, e.g. M=4096,N=4096,K=4096,dtype=f16")->required();
  cmd->add_option("--campaign", campaign, "Only this campaign's results (default: every campaign)")
      ->check(whole_number(1));
  cmd->add_option("--device", device, "Device name (default: the one with most results)");
  cmd->add_option("--out", out, "Output file")->required();
  set_action(cmd, [&g] {
    const Family f = load_family(g, family);
    const Shape s = parse_shape(f, shape);
    const ResultTable t = stored_table(g, f, s, device, campaign ? std::optional(campaign) : std::nullopt);
    const nlohmann::ordered_json j = format == "t4" ? t4_results(t) : kernel_tuner_cache(t);
    std::ofstream file(out);
    if (!file) throw std::runtime_error("cannot write " + out);
    file << j.dump(1) << "\n";
    if (!file.flush()) throw std::runtime_error("cannot write " + out);
    size_t ok = 0;
    for (const auto& r : t.rows) ok += r.time_us ? 1 : 0;
    std::fprintf(stderr, "%s: %zu results (%zu ok) of %s at %s on %s\n", out.c_str(), t.rows.size(), ok,
                 f.name.c_str(), to_string(s).c_str(), t.device_name.c_str());
  });
}

}  // namespace kf::cli
