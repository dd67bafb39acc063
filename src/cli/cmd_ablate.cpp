// kforge ablate: from the winner, move each parameter to each of its other valid values, one
// at a time, and time them all interleaved in one worker session next to the winner.
#include <cstdio>
#include <thread>

#include "cli/common.hpp"
#include "compile/compiler.hpp"
#include "eval/worker_client.hpp"

namespace kf::cli {

namespace {

struct Variation {
  std::string param;  // "" for the winner itself
  std::string value;
  Config config;
};

std::vector<Variation> variations(const Family& f, const Config& winner, const SearchSpace& space) {
  std::vector<Variation> out{{"", "", winner}};
  for (const auto& p : f.params)
    for (const auto& v : p.values) {
      if (v == winner.at(p.name)) continue;
      Config c = winner;
      c[p.name] = v;
      if (space.valid(c)) out.push_back({p.name, kf::to_string(v), c});
    }
  return out;
}

}  // namespace

void add_ablate(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand(
      "ablate", "Time each one-parameter change of the winner, side by side in one session");
  static std::string family, shape_text;
  static int rounds = 7;
  static bool json = false;
  cmd->add_option("--family", family, "Family name")->required();
  cmd->add_option("--shape", shape_text, "Shape whose stored winner is ablated")->required();
  cmd->add_option("--rounds", rounds, "Interleaved timing rounds")->capture_default_str();
  cmd->add_flag("--json", json, "Machine-readable output");
  set_action(cmd, [&g] {
    const Family f = load_family(g, family);
    const Shape shape = parse_shape(f, shape_text);
    Store store(g.db);
    WorkerClient worker({self_exe(), "worker", "--device", "0"}, 300);
    const DeviceLimits device = worker.device();
    const auto best = store.best(f.name, shape, device_key(device));
    if (!best) throw std::runtime_error("no gated result for " + to_string(shape) + " on " + device.name);
    const SearchSpace space = make_space(f, shape, device);
    const auto vars = variations(f, complete_stored_config(f, best->config), space);

    CubinCache cache(cache_dir(g));
    CompilePool pool(std::max(1u, std::thread::hardware_concurrency()), &cache);
    const auto ref = compile_variant(render_reference(f, shape), device.arch(), &cache);
    if (!ref.ok) throw std::runtime_error("reference kernel does not compile");
    std::vector<std::future<CompiledKernel>> futures;
    for (const auto& v : vars) futures.push_back(pool.submit(render_variant(f, v.config, shape), device.arch()));
    TimeManyRequest req;
    req.id = 1;
    req.rounds = rounds;
    std::vector<size_t> index;  // item -> variation
    std::vector<std::string> failed(vars.size());
    for (size_t i = 0; i < vars.size(); ++i) {
      const CompiledKernel k = futures[i].get();
      if (!k.ok) {
        failed[i] = "compile_error";
        continue;
      }
      EvalRequest item;
      item.spec_path = f.spec_path.string();
      item.config = vars[i].config;
      item.shape = shape;
      item.cubin_path = k.cubin_path.string();
      item.ref_cubin_path = ref.cubin_path.string();
      req.items.push_back(item);
      index.push_back(i);
    }
    const auto res = worker.time_many(req);
    std::vector<std::optional<double>> times(vars.size());
    for (size_t j = 0; j < res.items.size() && j < index.size(); ++j) {
      if (res.items[j].status == Status::Ok && res.items[j].timing)
        times[index[j]] = res.items[j].timing->median_us;
      else
        failed[index[j]] = kf::to_string(res.items[j].status);
    }
    if (!times[0]) throw std::runtime_error("the winner failed when re-measured: " + failed[0]);
    nlohmann::json out = nlohmann::json::array();
    if (!json)
      std::printf("winner %s: %s us on %s\n\n%-14s %-10s %10s %8s\n", to_string(best->config).c_str(),
                  fmt_us(*times[0]).c_str(), device.name.c_str(), "parameter", "value", "median us",
                  "x winner");
    for (size_t i = 1; i < vars.size(); ++i) {
      nlohmann::json j = {{"param", vars[i].param}, {"value", vars[i].value}};
      if (times[i]) {
        j["median_us"] = *times[i];
        j["ratio"] = *times[i] / *times[0];
      } else {
        j["status"] = failed[i];
      }
      out.push_back(j);
      if (json) continue;
      if (times[i])
        std::printf("%-14s %-10s %10s %8.2f\n", vars[i].param.c_str(), vars[i].value.c_str(),
                    fmt_us(*times[i]).c_str(), *times[i] / *times[0]);
      else
        std::printf("%-14s %-10s %10s %8s\n", vars[i].param.c_str(), vars[i].value.c_str(),
                    failed[i].c_str(), "-");
    }
    if (json)
      print_json({{"winner", to_json(best->config)}, {"winner_us", *times[0]}, {"variations", out}});
  });
}

}  // namespace kf::cli
