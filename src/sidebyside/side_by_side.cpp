#include "sidebyside/side_by_side.hpp"

#include <algorithm>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>

namespace kf {

namespace {

double cost_for(const Family& f, const Config& c, const Shape& s, const DeviceLimits& d) {
  if (f.flops.empty()) return 0;
  try {
    return f.flops.eval_double(make_scope(f, c, s, d));
  } catch (const ExprError&) {
    return 0;  // a cost that does not evaluate only loses the TFLOP/s column
  }
}

}  // namespace

double ContenderResult::tflops() const {
  return timing && timing->median_us > 0 && flops > 0 ? flops / (timing->median_us * 1e-6) / 1e12 : 0;
}

SideBySideRun time_side_by_side(const Family& f, const Shape& shape, const DeviceLimits& device,
                                WorkerClient& worker, CubinCache& cache, const std::vector<Contender>& contenders,
                                const SideBySideOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  SideBySideRun run;
  run.stop = options.until_decided ? RoundStop::OneKernel : RoundStop::Fixed;
  auto finish = [&] {
    run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return run;
  };
  const std::string arch = device.arch();
  const CompiledKernel ref = compile_variant(render_reference(f, shape), arch, &cache);
  if (!ref.ok) throw std::runtime_error("the reference kernel of " + f.name + " does not compile for " + arch);

  std::vector<ContenderResult>& out = run.contenders;
  out.resize(contenders.size());
  std::vector<std::optional<std::future<CompiledKernel>>> compiled(contenders.size());
  {
    const size_t threads = options.compile_threads ? options.compile_threads
                                                   : std::max(1u, std::thread::hardware_concurrency());
    CompilePool pool(std::min(threads, std::max<size_t>(1, contenders.size())), &cache);
    for (size_t i = 0; i < contenders.size(); ++i) {
      const Contender& c = contenders[i];
      out[i].flops = cost_for(f, c.config, shape, device);
      if (auto bad = violated_constraint(f, c.config, shape, device)) {
        out[i].status = Status::Invalid;
        out[i].error = "violates " + *bad;
        continue;
      }
      Variant v = render_variant(f, c.config, shape, c.defines);
      out[i].variant_hash = v.hash;
      compiled[i] = pool.submit(std::move(v), arch);
    }

    TimeManyRequest req;
    req.id = 1;
    req.rounds = options.rounds;
    req.until_decided = options.until_decided;
    req.rule = options.rule;
    req.max_s = options.max_s;
    req.rewarm_ms = options.rewarm_ms;
    std::vector<size_t> index;  // request item -> contender
    for (size_t i = 0; i < contenders.size(); ++i) {
      if (!compiled[i]) continue;
      const CompiledKernel k = compiled[i]->get();
      if (!k.ok) {
        out[i].status = Status::CompileError;
        const size_t nl = k.log.find('\n');
        out[i].error = nl == std::string::npos ? k.log : k.log.substr(0, nl);
        continue;
      }
      EvalRequest item;
      item.id = static_cast<int64_t>(i) + 1;
      item.spec_path = f.spec_path.string();
      item.config = contenders[i].config;
      item.shape = shape;
      item.cubin_path = k.cubin_path.string();
      item.ref_cubin_path = ref.cubin_path.string();
      item.seed = options.seed;
      item.timing = options.timing;
      req.items.push_back(std::move(item));
      index.push_back(i);
    }
    if (req.items.empty()) return finish();
    const TimeManyResult res = worker.time_many(req);
    // A worker that does not say how many rounds or why it stopped ran the fixed count.
    const bool said = res.stop != RoundStop::Continue;
    run.rounds = said ? res.rounds : options.rounds;
    run.stop = said ? res.stop : RoundStop::Fixed;
    for (size_t j = 0; j < index.size(); ++j) {
      ContenderResult& r = out[index[j]];
      if (j >= res.items.size()) {
        r.status = Status::RuntimeFault;
        r.error = "the worker answered fewer items than it was sent";
        continue;
      }
      const EvalResult& e = res.items[j];
      r.status = e.status;
      r.error = e.error;
      r.max_abs = e.max_abs;
      r.rel_l2 = e.rel_l2;
      if (e.status == Status::Ok) r.timing = e.timing;
      if (r.timing) {
        if (j < res.round_us.size()) r.round_us = res.round_us[j];
        r.rounds = r.round_us.empty() ? run.rounds : static_cast<int>(r.round_us.size());
      }
      if (e.status == Status::Ok && !e.timing) {
        r.status = Status::RuntimeFault;
        r.error = "passed the gate but came back without a timing";
      }
    }
  }
  return finish();
}

std::string rounds_text(const SideBySideOptions& options, const SideBySideRun& run) {
  std::string text = std::to_string(run.rounds) + " interleaved round" + (run.rounds == 1 ? "" : "s");
  if (options.until_decided)
    text += " (auto, at most " + std::to_string(options.rounds) + ": " + to_string(run.stop) + ")";
  return text;
}

std::vector<Contender> one_parameter_changes(const Family& f, const Config& base, const SearchSpace& space) {
  std::vector<Contender> out{{"", base, {}}};
  for (const auto& p : f.params)
    for (const auto& v : p.values) {
      if (v == base.at(p.name)) continue;
      Config c = base;
      c[p.name] = v;
      if (space.valid(c)) out.push_back({p.name + "=" + to_string(v), c, {}});
    }
  return out;
}

double side_by_side_timeout_s(size_t n, const SideBySideOptions& options) {
  // Gate plus warm-up and measurement per kernel per round, at the timing options' caps, with slack
  // (every round counted with the full warm-up: a bound, not an estimate).
  const double per_round = options.timing.max_ms / 1000.0 + options.timing.warmup_ms / 1000.0 + 1.0;
  return 120.0 + static_cast<double>(n) * (5.0 + std::max(options.rounds, 1) * per_round);
}

}  // namespace kf
