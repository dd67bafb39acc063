#include "campaign/evaluate_job.hpp"

#include <chrono>
#include <cmath>

namespace kf {

namespace {

std::string first_lines(const std::string& text, size_t max_chars) {
  std::string s = text.substr(0, max_chars);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

KernelRecord kernel_record(const CompiledKernel& k, unsigned smem_dynamic) {
  KernelRecord r;
  r.variant_hash = k.hash;
  r.arch = k.arch;
  r.ok = k.ok;
  r.registers = k.info.registers;
  r.smem_static = k.info.smem_static;
  r.smem_dynamic = static_cast<int>(smem_dynamic);
  r.stack_frame = k.info.stack_frame;
  r.spill_stores = k.info.spill_stores;
  r.spill_loads = k.info.spill_loads;
  r.compile_ms = k.info.compile_ms;
  r.log = first_lines(k.log, 4000);
  return r;
}

}  // namespace

std::string resource_violation(const KernelInfo& k, const ResolvedLaunch& launch,
                               const DeviceLimits& d) {
  const long threads = static_cast<long>(launch.block[0]) * launch.block[1] * launch.block[2];
  if (threads > d.max_threads)
    return std::to_string(threads) + " threads per block > " + std::to_string(d.max_threads);
  // Registers are allocated per warp in units of 256.
  const long warps = (threads + 31) / 32;
  const long regs_per_warp = ((static_cast<long>(k.registers) * 32 + 255) / 256) * 256;
  if (warps * regs_per_warp > d.regs_per_block)
    return std::to_string(k.registers) + " registers x " + std::to_string(threads) +
           " threads > " + std::to_string(d.regs_per_block) + " per block";
  const long smem = static_cast<long>(k.smem_static) + launch.smem;
  if (smem > d.smem_optin)
    return std::to_string(smem) + " bytes of shared memory > " + std::to_string(d.smem_optin);
  return "";
}

namespace {

// Why the compiled kernel cannot run (a compile error, launch geometry that does not evaluate, or
// resources over the device's limits): fills rec's status and error; true when it can run.
bool check_runnable(const JobContext& ctx, const CompiledKernel& k, const Config& config, EvaluationRecord& rec) {
  const Family& f = *ctx.family;
  ResolvedLaunch launch;
  std::string invalid;
  try {
    const Scope scope = make_scope(f, config, *ctx.shape, *ctx.device);
    launch = resolve_launch(f.kernel.launch, scope);
    rec.flops = f.flops.empty() ? 0 : f.flops.eval_double(scope);
    rec.bytes = f.bytes.empty() ? 0 : f.bytes.eval_double(scope);
  } catch (const std::exception& e) {
    invalid = std::string("launch geometry: ") + e.what();
  }
  rec.kernel = kernel_record(k, launch.smem);
  if (!k.ok) {
    rec.status = Status::CompileError;
    rec.error = first_lines(k.log, 2000);
    return false;
  }
  if (invalid.empty()) invalid = resource_violation(k.info, launch, *ctx.device);
  if (!invalid.empty()) {
    rec.status = Status::Invalid;
    rec.error = invalid;
  }
  return invalid.empty();
}

EvalRequest worker_request(const JobContext& ctx, int64_t attempt, const Config& config, const CompiledKernel& k) {
  EvalRequest req;
  req.id = attempt;
  req.spec_path = ctx.family->spec_path.string();
  req.config = config;
  req.shape = *ctx.shape;
  req.cubin_path = k.cubin_path.string();
  req.ref_cubin_path = ctx.ref_cubin;
  req.seed = ctx.seed;
  req.timing = ctx.timing;
  return req;
}

}  // namespace

JobResult evaluate_job(const JobContext& ctx, WorkerClient& worker, EvalJob job) {
  const Family& f = *ctx.family;
  JobResult out;
  out.observation.config = job.config;
  EvaluationRecord rec;
  rec.campaign_id = ctx.campaign_id;
  rec.family = f.name;
  rec.config = job.config;
  rec.shape = *ctx.shape;
  rec.device = device_key(*ctx.device);

  const CompiledKernel k = job.compiled.get();
  out.kernel_from_cache = k.from_cache;
  out.compile_ms = k.from_cache ? 0 : k.info.compile_ms;
  if (!check_runnable(ctx, k, job.config, rec)) {  // recorded without an attempt: nothing was dispatched
    if (ctx.recorder) {
      ctx.recorder->add_evaluation(rec);
      out.status = rec.status;
      return out;
    }
    std::lock_guard lock(*ctx.store_mu);
    ctx.store->add_evaluation(rec);
    out.status = rec.status;
    return out;
  }

  int64_t attempt;
  if (ctx.recorder) {
    attempt = ctx.recorder->begin_attempt(rec);
  } else {
    std::lock_guard lock(*ctx.store_mu);
    attempt = ctx.store->begin_attempt(ctx.campaign_id, f.name, job.config, *ctx.shape, rec.device);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const EvalResult res = worker.evaluate(worker_request(ctx, attempt, job.config, k));
  out.gpu_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  rec.status = res.status;
  rec.error = res.error;
  // Non-finite errors (NaN outputs) arrive as NaN; SQLite would store NaN as NULL.
  rec.max_abs = std::isnan(res.max_abs) ? HUGE_VAL : res.max_abs;
  rec.rel_l2 = std::isnan(res.rel_l2) ? HUGE_VAL : res.rel_l2;
  if (res.status == Status::Ok) rec.timing = res.timing;
  if (ctx.recorder) {
    ctx.recorder->finish_attempt(attempt, rec);
  } else {
    std::lock_guard lock(*ctx.store_mu);
    ctx.store->finish_attempt(attempt, rec);
  }
  out.status = rec.status;
  if (rec.status == Status::Ok && rec.timing) {
    // (energy or edp not measured: +infinity, which the strategies treat as a failed config)
    out.observation.time_us = objective_value(*rec.timing, ctx.objective);
    out.time_us = rec.timing->median_us;
    out.tflops = rec.flops / (rec.timing->median_us * 1e-6) / 1e12;
  }
  return out;
}

}  // namespace kf
