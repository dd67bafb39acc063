// kforge import: summarise a recorded space (Kernel Tuner cache, T4 results), optionally
// writing it into the database (--store); or turn a T1 tuning-problem file into a family
// spec draft.
#include <cstdio>
#include <fstream>

#include "cli/common.hpp"
#include "importers/import.hpp"
#include "importers/store_import.hpp"
#include "importers/t1.hpp"
#include "util/shell_quote.hpp"

namespace kf::cli {

namespace {

struct ImportArgs {
  std::string file, family, shape, device, out;
  bool json = false, store = false;
};

void summarise(const RecordedSpace& space, const ImportArgs& a) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& p : space.space().params()) params[p.name] = p.values.size();
  nlohmann::json out = {{"name", space.name()}, {"info", space.info()},
                        {"configs", space.size()}, {"failed", space.failed()},
                        {"params", params}};
  if (const auto* best = space.optimum())
    out["optimum"] = {{"config", to_json(best->config)}, {"time_us", *best->time_us}};
  if (a.json) return print_json(out);
  std::printf("%s: %zu recorded configs (%zu failed), %zu parameters\n", space.name().c_str(),
              space.size(), space.failed(), space.space().params().size());
  if (const auto* best = space.optimum())
    std::printf("optimum %s us: %s\n", fmt_us(*best->time_us).c_str(),
                to_string(best->config).c_str());
  std::printf("replay strategies on it with: kforge replay --import %s\n", shell_quote(a.file).c_str());
}

void store_space(const Globals& g, const RecordedSpace& space, const ImportArgs& a) {
  if (a.family.empty() || a.shape.empty())
    throw std::runtime_error("--store needs --family and --shape (the family and shape the recorded configs belong to)");
  const Family f = load_family(g, a.family);
  const Shape s = parse_shape(f, a.shape);
  std::string device = a.device;
  if (device.empty() && space.info().contains("device_name") && space.info()["device_name"].is_string())
    device = space.info()["device_name"].get<std::string>();
  Store store(g.db);
  const auto summary = store_recorded(store, f, s, space, device);
  std::printf("stored %zu evaluations of %s at %s on '%s' in %s (%zu already there)\n", summary.written,
              f.name.c_str(), to_string(s).c_str(), device.c_str(), g.db.c_str(), summary.already_stored);
  // Another tool's times: kforge's gate never ran these kernels, so they are data, never a winner.
  std::printf("imported records seed campaigns and replay (never best or export: kforge's gate never ran them); "
              "replay them with: %s replay --family %s --shape %s --device %s\n",
              kforge_command(g).c_str(), shell_quote(f.name).c_str(), shell_quote(to_string(s)).c_str(),
              shell_quote(device).c_str());
}

void write_t1_draft(const ImportArgs& a) {
  const T1Draft draft = t1_family_draft(a.file);
  const std::string text = draft.spec.dump(2) + "\n";
  if (a.out.empty()) {
    std::fputs(text.c_str(), stdout);
  } else {
    std::ofstream out(a.out);
    if (!out || !(out << text).flush()) throw std::runtime_error("cannot write " + a.out);
  }
  // What T1 cannot say goes to stderr, so stdout stays a clean JSON draft.
  std::fprintf(stderr, "family spec draft from the T1 file %s%s\n", a.file.c_str(),
               a.out.empty() ? "" : (" written to " + a.out).c_str());
  std::fprintf(stderr, "before `kforge check` accepts it, complete what T1 cannot express:\n");
  for (const auto& note : draft.notes) std::fprintf(stderr, "  - %s\n", note.c_str());
}

}  // namespace

void add_import(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand(
      "import", "Read a Kernel Tuner cache or T4 results file (summary, or --store it), or a T1 "
                "tuning-problem file (a family spec draft)");
  static ImportArgs a;
  cmd->add_option("file", a.file, "Kernel Tuner cache, T4 results or T1 tuning-problem file (.json)")->required();
  cmd->add_flag("--json", a.json, "Machine-readable summary");
  cmd->add_flag("--store", a.store,
                "Write the recorded configs into the database as imported evaluations of --family at --shape "
                "(for replay and seeding; never best or export)");
  cmd->add_option("--family", a.family, "With --store: the family the configs belong to");
  cmd->add_option("--shape", a.shape, "With --store: the shape they were measured at");
  cmd->add_option("--device", a.device, "With --store: device name (default: the file's device_name)");
  cmd->add_option("--out", a.out, "T1 file: write the spec draft here (default: stdout)");
  set_action(cmd, [&g] {
    if (is_t1_file(a.file)) {
      if (a.store) throw std::runtime_error("a T1 file describes a problem, not results: nothing to --store");
      return write_t1_draft(a);
    }
    if (!a.out.empty()) throw std::runtime_error("--out is for T1 files (a spec draft)");
    const RecordedSpace space = import_recorded(a.file);
    if (a.store) return store_space(g, space, a);
    if (!a.family.empty() || !a.shape.empty() || !a.device.empty())
      throw std::runtime_error("--family, --shape and --device go with --store");
    summarise(space, a);
  });
}

}  // namespace kf::cli
