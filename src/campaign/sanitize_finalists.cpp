#include <spdlog/spdlog.h>

#include "campaign/sanitize.hpp"
#include "compile/compiler.hpp"
#include "family/render.hpp"
#include "winner/current_results.hpp"

namespace kf {

namespace {

bool already_checked(const std::vector<SanitizerRecord>& runs, const std::string& tool, const DeviceKey& d) {
  for (const auto& r : runs)
    if (r.tool == tool && r.device.name == d.name && r.device.cc == d.cc && r.device.driver == d.driver) return true;
  return false;
}

}  // namespace

size_t sanitize_finalists(const FinalistRun& run) {
  const Family& family = *run.family;
  const DeviceKey dkey = device_key(*run.device);
  std::vector<EvaluationRecord> top;
  {
    std::lock_guard lock(*run.store_mu);
    top = run.store->top(family.name, run.shape, dkey, run.top_k);
  }
  KernelSourceCheck check(family, run.shape);
  SanitizeJob job = run.job;
  job.entry = family.kernel.entry;
  size_t failed = 0;
  for (const auto& e : top) {
    const Config config = complete_stored_config(family, e.config);
    if (check.stale(e, config)) continue;  // timed with another source: refresh it first
    const CompiledKernel k = compile_variant(render_variant(family, config, run.shape), run.device->arch(), run.cache);
    if (!k.ok) continue;
    std::vector<SanitizerRecord> runs;
    {
      std::lock_guard lock(*run.store_mu);
      runs = run.store->sanitizer_runs(family.name, k.hash);
    }
    bool finalist_failed = false;
    for (const char* tool : kSanitizerTools) {
      if (already_checked(runs, tool, dkey)) continue;
      EvalRequest req;
      req.id = 1;
      req.spec_path = family.spec_path.string();
      req.config = config;
      req.shape = run.shape;
      req.cubin_path = k.cubin_path.string();
      req.ref_cubin_path = run.ref_cubin;
      req.seed = run.seed;
      const SanitizerOutcome out = run_under_sanitizer(job, tool, req);
      SanitizerRecord rec;
      rec.family = family.name;
      rec.variant_hash = k.hash;
      rec.arch = k.arch;
      rec.shape = run.shape;
      rec.device = dkey;
      rec.campaign_id = run.campaign_id;
      rec.tool = tool;
      rec.passed = out.passed;
      rec.errors = out.errors;
      rec.summary = out.summary;
      {
        std::lock_guard lock(*run.store_mu);
        run.store->add_sanitizer_run(rec);
      }
      finalist_failed |= !out.passed;
      if (out.passed)
        spdlog::info("{} {}: {} clean ({})", to_string(run.shape), to_string(config), tool, out.summary);
      else
        spdlog::warn("{} {}: {} FAILED: {}", to_string(run.shape), to_string(config), tool, out.summary);
    }
    failed += finalist_failed ? 1 : 0;
  }
  return failed;
}

}  // namespace kf
