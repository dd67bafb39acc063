#include "eval/worker/evaluator.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include <unistd.h>

#include "eval/worker/gate.hpp"
#include "eval/worker/timing.hpp"
#include "gpu/check.hpp"
#include "gpu/device.hpp"

namespace kf {

namespace {

// Gate data stays cached up to half of the device memory free at start (the rest is for the candidates'
// scratch and for other processes on the device) and a quarter of the host's memory.
DatasetCache<DataSet>::Budget dataset_budget() {
  DatasetCache<DataSet>::Budget b;
  b.device_bytes = gpu::memory_info().first / 2;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  b.host_bytes = pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) / 4 : size_t{4} << 30;
  return b;
}

// The trusted reference misbehaved: nothing the candidate did, so not wrong_result.
struct ReferenceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

gpu::LaunchDims dims_of(const ResolvedLaunch& l) {
  gpu::LaunchDims d;
  d.grid = l.grid;
  d.block = l.block;
  d.smem = l.smem;
  return d;
}

std::string where_text(size_t gate_index, const GateCase& gc, const Shape& s) {
  return "shape " + to_string(s) + (gate_index == 0 ? ", campaign" : ", gate " + gc.name);
}

// Compares every output with the reference; keeps the worst metrics in r. Returns the first
// failure, or nullopt.
std::optional<std::string> check_outputs(const DataSet& ds, const Tolerance& tol, const std::string& where,
                                         EvalResult& r) {
  std::optional<std::string> failure;
  for (size_t i = 0; i < ds.slots().size(); ++i) {
    const BufferSlot& s = ds.slots()[i];
    if (s.spec->role != BufferRole::Output || !s.spec->compare) continue;
    const Comparison c = compare(ds.read_output(i), s.reference);
    r.max_abs = std::max(r.max_abs, c.non_finite ? std::numeric_limits<double>::infinity() : c.max_abs);
    r.rel_l2 = std::max(r.rel_l2, c.non_finite ? std::numeric_limits<double>::infinity() : c.rel_l2);
    if (!failure) failure = gate_failure(c, tol, s.spec->name, where);
  }
  return failure;
}

// Runs body, mapping what it throws to a status in r. Sticky CUDA errors pass through.
template <class F>
void guarded(EvalResult& r, F&& body) {
  try {
    body();
  } catch (const gpu::CudaError& e) {
    if (e.sticky()) throw;
    cudaGetLastError();
    r.status = Status::LaunchError;
    r.error = e.what();
  } catch (const ReferenceError& e) {
    r.status = Status::RuntimeFault;
    r.error = e.what();
  } catch (const SpecError& e) {
    r.status = Status::Invalid;
    r.error = e.what();
  } catch (const ExprError& e) {
    r.status = Status::Invalid;
    r.error = std::string("expression: ") + e.what();
  } catch (const std::exception& e) {
    r.status = Status::RuntimeFault;
    r.error = std::string("worker: ") + e.what();
  }
}

}  // namespace

struct Evaluator::Candidate {
  const Family* f = nullptr;
  Config config;
  Shape shape;  // the campaign shape
  std::string ref_cubin_path;
  uint64_t seed = 1;
  std::unique_ptr<gpu::Library> lib;
  cudaKernel_t kernel = nullptr;
};

Evaluator::Evaluator(DeviceLimits dev) : dev_(std::move(dev)), datasets_(dataset_budget()) {}

Evaluator::~Evaluator() = default;

const Family& Evaluator::family(const std::string& spec_path) {
  auto it = families_.find(spec_path);
  if (it != families_.end()) return it->second;
  try {
    return families_.emplace(spec_path, load_family(spec_path)).first->second;
  } catch (const SpecError& e) {
    throw ReferenceError(std::string("spec: ") + e.what());
  }
}

cudaKernel_t Evaluator::reference_kernel(const Family& f, const std::string& ref_cubin_path) {
  auto it = references_.find(ref_cubin_path);
  try {
    if (it == references_.end())
      it = references_
               .emplace(ref_cubin_path, std::make_unique<gpu::Library>(gpu::Library::from_file(ref_cubin_path)))
               .first;
    return it->second->kernel(f.reference.entry);
  } catch (const gpu::CudaError& e) {
    if (e.sticky()) throw;
    cudaGetLastError();
    throw ReferenceError(std::string("reference: ") + e.what());
  } catch (const std::runtime_error& e) {
    throw ReferenceError(std::string("reference: ") + e.what());
  }
}

std::shared_ptr<DataSet> Evaluator::dataset(const Family& f, const std::string& ref_cubin_path, const Shape& s,
                                            double input_scale, uint64_t seed) {
  char scale[32];
  std::snprintf(scale, sizeof scale, "%.17g", input_scale);
  const std::string key = f.spec_hash + "|" + f.spec_path.string() + "|" + ref_cubin_path + "|" + to_string(s) +
                          "|" + scale + "|" + std::to_string(seed);
  if (auto hit = datasets_.find(key)) return hit;

  const cudaKernel_t ref = reference_kernel(f, ref_cubin_path);
  auto ds = std::make_shared<DataSet>(f, s, input_scale, seed, dev_, stream_);
  const Scope scope = make_reference_scope(f, s, dev_);
  ds->prepare(f.reference.args, scope, true);
  const ArgPack args = ds->pack(f.reference.args, scope);
  if (auto err = ds->run_reference(ref, dims_of(resolve_launch(f.reference.launch, scope)), args, dev_))
    throw ReferenceError(*err);
  datasets_.add(key, ds, ds->device_bytes(), ds->host_bytes());
  return ds;
}

gpu::DeviceBuffer* Evaluator::l2_flush() {
  // Twice the L2, so nothing the kernel used survives the fill.
  if (!flush_) flush_ = std::make_unique<gpu::DeviceBuffer>(static_cast<size_t>(std::max<int64_t>(dev_.l2_bytes, 32 << 20)) * 2);
  return flush_.get();
}

std::unique_ptr<Evaluator::Candidate> Evaluator::gate(const EvalRequest& req, EvalResult& r) {
  const Family& f = family(req.spec_path);
  auto c = std::make_unique<Candidate>();
  c->f = &f;
  c->config = validate_config(f, req.config);
  c->shape = validate_shape(f, req.shape);
  c->ref_cubin_path = req.ref_cubin_path;
  c->seed = req.seed;
  if (auto v = violated_constraint(f, c->config, c->shape, dev_)) {
    r.status = Status::Invalid;
    r.error = "constraint: " + *v;
    return nullptr;
  }
  try {
    c->lib = std::make_unique<gpu::Library>(gpu::Library::from_file(req.cubin_path));
    c->kernel = c->lib->kernel(f.kernel.entry);
  } catch (const gpu::CudaError& e) {
    if (e.sticky()) throw;
    cudaGetLastError();
    r.status = Status::LaunchError;
    r.error = std::string("load: ") + e.what();
    return nullptr;
  } catch (const std::runtime_error& e) {
    r.status = Status::LaunchError;
    r.error = std::string("load: ") + e.what();
    return nullptr;
  }

  const auto cases = gate_shapes(f, c->shape);
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& [gc, s] = cases[i];
    if (violated_constraint(f, c->config, s, dev_)) continue;  // the config does not claim this shape
    const std::string where = where_text(i, gc, s);
    const auto ds = dataset(f, req.ref_cubin_path, s, gc.input_scale, req.seed);
    const Scope scope = make_scope(f, c->config, s, dev_);
    const gpu::LaunchDims dims = dims_of(resolve_launch(f.kernel.launch, scope));
    ds->prepare(f.kernel.args, scope, true);
    const ArgPack args = ds->pack(f.kernel.args, scope);
    if (auto err = launch_and_wait(c->kernel, dims, args, stream_)) {
      r.status = Status::LaunchError;
      r.error = *err + " on " + where;
      return nullptr;
    }
    // Out-of-bounds writes and modified inputs first: the outputs may well be right.
    if (auto err = ds->check_integrity(where)) {
      r.status = Status::WrongResult;
      r.error = *err;
      return nullptr;
    }
    if (auto err = check_outputs(*ds, f.tolerance_for(s), where, r)) {
      r.status = Status::WrongResult;
      r.error = *err;
      return nullptr;
    }
    ++r.gate_shapes;
  }
  return c;
}

std::optional<TimingStats> Evaluator::time(Candidate& c, EvalResult& r, const TimingOptions& o) {
  const Family& f = *c.f;
  const auto ds = dataset(f, c.ref_cubin_path, c.shape, 1.0, c.seed);
  const Scope scope = make_scope(f, c.config, c.shape, dev_);
  const gpu::LaunchDims dims = dims_of(resolve_launch(f.kernel.launch, scope));
  // Fresh inputs and poisoned outputs, but scratch as the gate left it: a kernel must leave
  // its counters zero, and one that does not shows up in the check below.
  ds->prepare(f.kernel.args, scope, false);
  ArgPack args = ds->pack(f.kernel.args, scope);
  if (dims.smem > 0) gpu::check(gpu::set_max_dynamic_smem(c.kernel, dims.smem), "cudaFuncSetAttribute");
  auto launch = [&] { gpu::check(gpu::launch(c.kernel, dims, args.ptrs.data(), stream_), "cudaLaunchKernel"); };

  TimingStats t;
  try {
    t = measure_kernel(launch, stream_, o, o.cold_l2 ? l2_flush() : nullptr);
    stream_.synchronize();
  } catch (const gpu::CudaError& e) {
    if (e.sticky()) throw;
    cudaGetLastError();
    r.status = Status::LaunchError;
    r.error = std::string("timing: ") + e.what();
    return std::nullopt;
  }
  // A race or a stateful kernel may be right once and wrong on repetition.
  const std::string where = "after timing, shape " + to_string(c.shape);
  if (auto err = ds->check_integrity(where)) {
    r.status = Status::WrongResult;
    r.error = *err;
    return std::nullopt;
  }
  if (auto err = check_outputs(*ds, f.tolerance_for(c.shape), where, r)) {
    r.status = Status::WrongResult;
    r.error = *err;
    return std::nullopt;
  }
  return t;
}

EvalResult Evaluator::evaluate(const EvalRequest& req) {
  EvalResult r;
  r.id = req.id;
  guarded(r, [&] {
    auto c = gate(req, r);
    if (!c || !req.time) return;
    r.timing = time(*c, r, req.timing);
  });
  return r;
}

TimeManyResult Evaluator::time_many(const TimeManyRequest& req) {
  const auto t0 = std::chrono::steady_clock::now();
  TimeManyResult out;
  out.id = req.id;
  const size_t n = req.items.size();
  std::vector<std::unique_ptr<Candidate>> cands(n);
  std::vector<std::vector<TimingStats>> rounds(n);
  out.items.resize(n);
  // Each item is gated once; the rounds time the survivors only.
  for (size_t i = 0; i < n; ++i) {
    out.items[i].id = req.items[i].id;
    guarded(out.items[i], [&] { cands[i] = gate(req.items[i], out.items[i]); });
    if (out.items[i].status != Status::Ok) cands[i].reset();
  }
  auto time_one = [&](size_t i) -> std::optional<double> {
    if (!cands[i]) return std::nullopt;
    EvalResult& r = out.items[i];
    TimingOptions o = req.items[i].timing;
    if (!rounds[i].empty()) {
      o.warmup_ms = std::min(o.warmup_ms, req.rewarm_ms);  // (kRewarmMs says why)
      o.energy_ms = 0;  // power once a contender, in its first round: a round's cost stays its timing's
    }
    const size_t before = rounds[i].size();
    guarded(r, [&] {
      if (auto t = time(*cands[i], r, o)) rounds[i].push_back(*t);
    });
    if (r.status != Status::Ok || rounds[i].size() == before) {
      cands[i].reset();
      return std::nullopt;
    }
    return rounds[i].back().median_us;
  };
  auto elapsed_s = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  RoundPlan plan;
  plan.rounds = req.rounds;
  plan.until_decided = req.until_decided;
  plan.rule = req.rule;
  plan.max_s = req.until_decided ? req.max_s : 0;
  RoundsRun run = run_rounds(n, plan, time_one, elapsed_s);
  out.rounds = run.rounds;
  out.stop = run.stop;
  for (size_t i = 0; i < n; ++i) {
    if (cands[i] && !rounds[i].empty()) {
      out.items[i].timing = combine_rounds(rounds[i]);
    } else {
      run.samples[i].clear();  // no timing for an item that failed a round
    }
  }
  out.round_us = std::move(run.samples);
  return out;
}

}  // namespace kf
