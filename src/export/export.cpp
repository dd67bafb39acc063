#include "export/export.hpp"

#include <cctype>
#include <ctime>
#include <set>
#include <stdexcept>

#include "compile/compiler.hpp"
#include "eval/protocol.hpp"
#include "export/commands.hpp"
#include "export/dispatch_gen.hpp"
#include "export/kernel_model.hpp"
#include "export/launcher_gen.hpp"
#include "export/output_dir.hpp"
#include "export/runner_gen.hpp"
#include "export/workspace_gen.hpp"
#include "export/cmake_gen.hpp"
#include "export/torch_gen.hpp"
#include "family/user_config.hpp"
#include "util/hash.hpp"
#include "util/text.hpp"

namespace kf {

using namespace exporter;

namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("export: " + what); }

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The target device: the architecture's known limits, named and sized like the device the
// winner was measured on when that device is of this architecture.
DeviceLimits target_limits(const std::string& base_arch, const EvaluationRecord& w) {
  DeviceLimits d = DeviceLimits::for_arch(base_arch);
  if (w.device.cc == d.cc()) {
    if (!w.device.name.empty()) d.name = w.device.name;
    if (w.device.sm_count > 0) d.sm_count = w.device.sm_count;
    d.driver = w.device.driver;
  }
  return d;
}

double cost_of(const Expr& e, const Scope& scope) {
  if (e.empty()) return 0;
  try {
    return e.eval_double(scope);
  } catch (const ExprError&) {
    return 0;
  }
}

nlohmann::json timing_json(const EvaluationRecord& w, double flops, double bytes) {
  if (!w.timing) return nullptr;
  const TimingStats& t = *w.timing;
  nlohmann::json j = to_json(t);
  if (t.median_us > 0) {
    j["tflops"] = flops > 0 ? flops / t.median_us * 1e-6 : 0.0;
    j["gbps"] = bytes > 0 ? bytes / t.median_us * 1e-3 : 0.0;
  }
  return j;
}

nlohmann::json kernel_entry(const KernelModel& m, const EvaluationRecord& w, const Assignment& defines) {
  const Family& f = *m.family;
  const Scope scope = make_scope(f, m.config, m.shape, m.limits);
  const double flops = w.flops > 0 ? w.flops : cost_of(f.flops, scope);
  const double bytes = w.bytes > 0 ? w.bytes : cost_of(f.bytes, scope);
  const std::vector<std::string> flags = nvcc_flags(m.variant.options);
  nlohmann::json j;
  j["name"] = m.name;
  j["entry"] = m.entry();
  j["source"] = m.name + ".cu";
  j["header"] = m.name + ".h";
  j["cubin"] = m.name + ".cubin";
  j["runner"] = std::string(runners_subdir()) + "/" + m.name + "_runner.cu";
  j["config"] = to_json(m.config);
  j["config_key"] = to_string(m.config);
  j["shape"] = to_json(m.shape);
  j["shape_key"] = to_string(m.shape);
  j["variant_hash"] = render_variant(f, m.config, m.shape, defines).hash;
  j["defines"] = to_json(defines);
  const bool gated = w.provenance == Provenance::Kforge;  // check_input let only gate passes and --ungated through
  // What kforge's gate said, and about which kernel: the config's kernel without the extra defines when there
  // are some (the record gated that one), else the exported kernel itself; nothing when it never ran.
  j["gate"] = !gated ? "not run" : defines.empty() ? "passed" : "passed without the defines";
  // The kernel the gate and the timing below were measured on: equal to variant_hash unless defines were
  // added (a winner timed with an older template is re-gated first); null when no gate ran.
  j["gated_kernel_hash"] = !gated ? nlohmann::json() : nlohmann::json(w.kernel ? w.kernel->variant_hash : "");
  j["arch"] = m.arch;
  j["device"] = !gated ? nlohmann::json()
                       : nlohmann::json{{"name", w.device.name}, {"cc", w.device.cc}, {"sm_count", w.device.sm_count},
                                        {"driver", w.device.driver}};
  j["timing"] = timing_json(w, flops, bytes);
  j["flops"] = flops;
  j["bytes"] = bytes;
  j["correctness"] = !gated ? nlohmann::json() : nlohmann::json{{"max_abs", w.max_abs}, {"rel_l2", w.rel_l2}};
  if (w.kernel) {
    const KernelRecord& k = *w.kernel;
    j["kernel"] = {{"registers", k.registers},     {"smem_static", k.smem_static}, {"smem_dynamic", k.smem_dynamic},
                   {"stack_frame", k.stack_frame}, {"spill_stores", k.spill_stores}, {"spill_loads", k.spill_loads},
                   {"compile_ms", k.compile_ms}};
  } else {
    j["kernel"] = nullptr;
  }
  j["compile"] = {{"nvrtc_options", m.variant.options}, {"nvcc_flags", flags}};
  j["launch"] = {{"grid", m.launch.grid}, {"block", m.launch.block}, {"smem", m.launch.smem}};
  j["args"] = m.args;
  j["signature"] = launcher_signature(m);
  j["supports_signature"] = supports_signature(m);
  j["workspace_signature"] = workspace_signature(m);
  j["supports"] = supported_rule(m);
  j["commands"] = {{"build", build_command(m.name, m.arch, flags)},
                   {"object", object_command(m.name, m.arch, flags)},
                   {"ncu", ncu_command(m.name)}};
  j["evaluation_id"] = w.id > 0 ? nlohmann::json(w.id) : nlohmann::json();
  j["campaign_id"] = w.campaign_id > 0 ? nlohmann::json(w.campaign_id) : nlohmann::json();
  return j;
}

void check_input(const ExportInput& in) {
  if (!in.family) fail("no family given");
  try {
    check_defines(*in.family, in.defines);
  } catch (const SpecError& e) {
    fail(e.what());
  }
  if (in.winners.empty()) fail("nothing to export: no winning evaluation given");
  if (in.out_dir.empty()) fail("no output directory given");
  if (!in.name.empty() && !is_c_identifier(in.name))
    fail("name '" + in.name + "' is not a C identifier (letters, digits, '_'; not starting with a digit)");
  std::set<std::string> shapes;
  for (const EvaluationRecord& w : in.winners) {
    if (w.family != in.family->name)
      fail("evaluation " + std::to_string(w.id) + " is of family '" + w.family + "', not '" + in.family->name + "'");
    if (w.status != Status::Ok)
      fail("evaluation " + std::to_string(w.id) + " has status " + to_string(w.status) + ", not ok");
    // Only a kernel kforge's gate passed is written as a result; another tool's time vouches for nothing here.
    if (w.provenance == Provenance::Imported)
      fail("evaluation " + std::to_string(w.id) + " of " + to_string(w.config) +
           " was imported from another tool and never passed kforge's gate; it is not exported");
    if (w.provenance == Provenance::Unmeasured && !in.ungated)
      fail("config " + to_string(w.config) + " at " + to_string(w.shape) +
           " has not passed the gate; export it on a machine with a GPU (it is gated there first), or --ungated");
    if (!shapes.insert(to_string(w.shape)).second) fail("two winners for shape " + to_string(w.shape));
  }
}

// The CMake target's and the torch op's name: --name, else the family. With several winners
// also what each kernel's name and the dispatcher's start with.
std::string export_target(const ExportInput& in) { return in.name.empty() ? c_identifier(in.family->name) : in.name; }

// --arch, else the arch of the device the first winner was measured on.
std::string target_arch(const ExportInput& in) {
  if (!in.base_arch.empty()) return in.base_arch;
  const EvaluationRecord& first = in.winners.front();
  if (first.device.cc <= 0) fail("no target architecture given and the winner's device has none");
  return "sm_" + std::to_string(first.device.cc);
}

// torch/<target>_op.cpp and torch/load.py over the launcher (one kernel) or the dispatcher.
nlohmann::json write_torch_op(OutputDir& dir, const std::string& target, const std::vector<KernelModel>& models,
                              const std::string& dispatcher) {
  const std::string launcher = dispatcher.empty() ? models.front().name : dispatcher;
  const TorchOpModel op = make_torch_op_model(target, launcher, models);
  std::vector<std::pair<std::string, std::vector<std::string>>> kernels;
  std::string hashes;
  const auto flags_for = [](const std::string& arch, const std::vector<std::string>& extra) {
    std::vector<std::string> flags;
    std::string flag = nvcc_arch_flag(arch);
    for (size_t at = 0; at != std::string::npos;) {  // "-gencode arch=...": two arguments
      const size_t space = flag.find(' ', at);
      flags.push_back(flag.substr(at, space == std::string::npos ? space : space - at));
      at = space == std::string::npos ? space : space + 1;
    }
    flags.insert(flags.end(), extra.begin(), extra.end());
    return flags;
  };
  for (const auto& m : models) {
    kernels.push_back({m.name + ".cu", flags_for(m.arch, nvcc_flags(m.variant.options))});
    hashes += m.variant.hash;
  }
  if (!dispatcher.empty()) kernels.push_back({dispatcher + ".cu", flags_for(dispatch_arch(models), {})});
  // The dims part of the rule; the constraints (long) stay in manifest.json.
  std::string supported = "the shapes one of the dispatcher's kernels supports (manifest.json)";
  if (dispatcher.empty()) {
    supported = supported_rule(models.front())["text"].get<std::string>();
    const size_t constraints = supported.find("; constraints hold");
    if (constraints != std::string::npos)
      supported = supported.substr(0, constraints) + "; the family's constraints with the tuned config (manifest.json: supports)";
  }
  const std::string source = std::string(torch_subdir()) + "/" + target + "_op.cpp";
  const std::string loader = std::string(torch_subdir()) + "/load.py";
  dir.add(source, generate_torch_op(op, "../" + launcher + ".h", supported));
  dir.add(loader, generate_torch_loader(op, kernels, "kforge_" + target + "_" + content_hash(hashes).substr(0, 10)));
  return {{"source", source}, {"loader", loader}, {"op", "kforge::" + target}, {"schema", "kforge::" + op.schema},
          {"calls", launcher}};
}

// The exported kernel for one winner: its shape and config checked again on the target, its name.
KernelModel winner_model(const ExportInput& in, const EvaluationRecord& w, const std::string& base_arch) {
  const Family& f = *in.family;
  const Shape shape = validate_shape(f, w.shape);
  const Config config = validate_config(f, complete_stored_config(f, w.config));
  const DeviceLimits limits = target_limits(base_arch, w);
  if (auto bad = violated_constraint(f, config, shape, limits))
    fail("config " + to_string(config) + " does not satisfy '" + *bad + "' for shape " + to_string(shape) + " on " +
         base_arch);
  std::string name = in.winners.size() > 1 ? export_target(in) + "_" + short_shape(f, shape) : in.name;
  if (name.empty()) name = default_export_name(f, shape);
  if (!is_c_identifier(name)) fail("derived name '" + name + "' is not a C identifier");
  try {
    return make_kernel_model(f, config, shape, name, base_arch, limits, in.defines);
  } catch (const ExprError& e) {
    fail(std::string(e.what()));
  }
}

// <name>.cu, <name>.h, runners/<name>_runner.cu and <name>.cubin (compiled by NVRTC).
void write_kernel_files(const ExportInput& in, const KernelModel& m, const EvaluationRecord& w,
                        const std::string& base_arch, OutputDir& dir) {
  const std::optional<double> measured = w.timing ? std::optional<double>(w.timing->median_us) : std::nullopt;
  std::string source, header;
  try {
    source = generate_source(m) + generate_workspace_source(m);
    header = generate_header(m) + generate_workspace_header(m);
  } catch (const ExprError& e) {
    fail("cannot translate an expression of " + in.family->name + " to C++: " + std::string(e.what()));
  }
  dir.add(m.name + ".cu", source);
  dir.add(m.name + ".h", header);
  // Runners (each with a main()) in their own folder, so a project can glob the top-level .cu files.
  dir.add(std::string(runners_subdir()) + "/" + m.name + "_runner.cu", generate_runner(m, measured));

  const CompiledKernel ck = compile_variant(m.variant, base_arch, nullptr);
  if (!ck.ok) fail("NVRTC could not compile " + m.name + " for " + m.arch + ": " + first_line(ck.log));
  dir.add_copy(m.name + ".cubin", ck.cubin_path);
}

// <dname>.cu and <dname>.h over several kernels, and the manifest's "dispatcher".
nlohmann::json write_dispatcher(OutputDir& dir, const std::string& dname, const std::vector<KernelModel>& models) {
  dir.add(dname + ".cu", generate_dispatch_source(dname, models));
  dir.add(dname + ".h", generate_dispatch_header(dname, models));
  nlohmann::json order = nlohmann::json::array();
  for (const auto& m : models) order.push_back(m.name);
  std::string objects = "nvcc -O3 " + nvcc_arch_flag(dispatch_arch(models)) + " -c " + shell_quote(dname + ".cu");
  for (const auto& m : models) objects += " " + shell_quote(m.name + ".cu");
  return {{"name", dname},
          {"source", dname + ".cu"},
          {"header", dname + ".h"},
          {"signature", dispatch_signature(dname, models)},
          {"kernels", order},
          {"rule",
           "kernels whose enum dims equal the call's, nearest first by sum over int dims of "
           "|log2 x - log2 y| (ties in manifest order); the first launcher that does not return "
           "cudaErrorInvalidValue runs"},
          {"commands", {{"object", objects}}}};
}

}  // namespace

EvaluationRecord unmeasured_record(const Family& f, const Config& c, const Shape& s) {
  EvaluationRecord r;
  r.family = f.name;
  r.config = c;
  r.shape = s;
  r.status = Status::Ok;  // what it is exported as; its provenance says no gate ran
  r.provenance = Provenance::Unmeasured;
  return r;
}

std::string default_export_name(const Family& f, const Shape& s) {
  return c_identifier(f.name + "_" + short_shape(f, s));
}

ExportOutput export_kernels(const ExportInput& in) {
  check_input(in);
  const Family& f = *in.family;
  const std::string base_arch = target_arch(in);
  const bool several = in.winners.size() > 1;

  // Everything is staged and written at the end: a failed export writes nothing.
  OutputDir dir(in.out_dir);
  ExportOutput out;
  std::vector<KernelModel> models;
  nlohmann::json kernels = nlohmann::json::array();
  for (const EvaluationRecord& w : in.winners) {
    KernelModel m = winner_model(in, w, base_arch);
    if (in.torch && models.empty()) make_torch_op_model(export_target(in), m.name, {m});  // refuses before writing
    write_kernel_files(in, m, w, base_arch, dir);
    kernels.push_back(kernel_entry(m, w, in.defines));
    models.push_back(std::move(m));
  }

  nlohmann::json& man = out.manifest;
  man["format"] = "kforge-export/2";  // docs/export.md; /2: runners/ subfolder, CMakeLists.txt, workspace query
  man["family"] = f.name;
  man["description"] = f.description;
  man["spec"] = f.spec_path.filename().string();
  man["spec_hash"] = f.spec_hash;
  man["arch"] = models.front().arch;
  man["kernels"] = kernels;
  man["dispatcher"] = nullptr;
  const std::string dispatcher = several ? export_target(in) + "_dispatch" : std::string();
  if (several) {
    man["dispatcher"] = write_dispatcher(dir, dispatcher, models);
  } else {
    for (const auto& [k, v] : kernels.front().items()) man[k] = v;
  }
  // The folder as a CMake subproject: add_subdirectory() gives kforge::<prefix>.
  const std::string target = export_target(in);
  dir.add("CMakeLists.txt", generate_cmake(target, models, dispatcher));
  man["cmake"] = {{"file", "CMakeLists.txt"}, {"target", "kforge::" + target}, {"library", "kforge_" + target},
                  {"runners_option", "KFORGE_" + to_upper(target) + "_RUNNERS"}};
  man["torch"] = in.torch ? write_torch_op(dir, target, models, dispatcher) : nlohmann::json();
  man["provenance"] = {{"kforge_version", KFORGE_VERSION}, {"database", in.db_path}, {"created_utc", utc_now()}};
  dir.add("manifest.json", man.dump(2) + "\n");
  OutputDir::Written written = dir.commit();
  out.files = std::move(written.files);
  out.replaced = std::move(written.replaced);
  return out;
}

}  // namespace kf
