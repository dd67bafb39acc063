// kforge export: stored winners, or any config (--config), as standalone source, C launcher and
// manifest. Every kernel written as a result passed kforge's gate; `--config ... --ungated` is the one
// way to write one that did not, and its manifest says so.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>

#include "campaign/config_gate.hpp"
#include "campaign/refresh.hpp"
#include "cli/common.hpp"
#include "cli/device_choice.hpp"
#include "export/export.hpp"
#include "family/user_config.hpp"
#include "store/sql.hpp"
#include "util/shell_quote.hpp"

namespace kf::cli {

namespace {

std::optional<DeviceKey> device_named(Store& store, const std::string& device) {
  if (device.empty()) return std::nullopt;
  return choose_device(store, device).key;
}

// The database, read-only until something must be gated here (a campaign on the local GPU writes its
// records): then opened for writing, once.
class ExportStore {
 public:
  explicit ExportStore(std::string db) : db_(std::move(db)) {}
  bool exists() const { return sql::is_postgres_url(db_) || std::filesystem::exists(db_); }
  Store& read() {
    if (write_) return *write_;
    if (!read_) read_.emplace(db_, Store::Access::ReadOnly);
    return *read_;
  }
  Store& write() {
    if (!write_) {
      read_.reset();
      write_.emplace(db_);
    }
    return *write_;
  }

 private:
  std::string db_;
  std::optional<Store> read_, write_;
};

// "no gated result for S in DB", and why where the shape has only other tools' records.
std::string no_gated_result(Store& store, const Family& f, const Shape& s, const std::optional<DeviceKey>& only,
                            const std::string& db) {
  const ImportedRecords imported = imported_records(store, f, s, only);
  return "no gated result for " + to_string(s) + " in " + db +
         (imported.timed ? " (only " + std::to_string(imported.timed) +
                               " imported record(s), which kforge's gate never ran: never exported)"
                         : std::string());
}

// The stored winner of each shape. With regate (exporting the winners themselves), a winner timed with an
// older kernel source is re-gated and re-timed on the local GPU first, or refused with the command that
// refreshes it: export never writes an ungated kernel. Without (--config best only takes its config), it is
// used as stored.
std::vector<EvaluationRecord> stored_winners(ExportStore& db, const Family& f, const std::vector<Shape>& shapes,
                                             const std::string& device, const std::string& db_name,
                                             const CampaignOptions* regate = nullptr) {
  std::vector<EvaluationRecord> out;
  const DeviceChoice here = choose_device(db.read(), device.empty() ? "local" : device);
  for (const auto& s : shapes) {
    auto only = here.key;
    auto best = best_current(db.read(), f, s, only);
    if (!best && here.fallback) {  // none of the local GPU: another device's, said
      only.reset();
      best = best_current(db.read(), f, s, only);
      if (best)
        spdlog::warn("{}: no result on this {}; exporting {}'s winner (`{} --from-device {}` re-times it here)",
                     to_string(s), here.local, best->record.device.name, refresh_command(db.read(), f, s),
                     shell_quote(best->record.device.name));
    }
    if (!best) throw std::runtime_error(no_gated_result(db.read(), f, s, only, db_name));
    if (regate) {
      // Re-gating runs a campaign, which records its results: only then is the database opened for writing.
      Store& store = best->source_stale ? db.write() : db.read();
      out.push_back(gated_winner(store, f, s, only, *regate, 3).record);
      continue;
    }
    if (best->stale)
      spdlog::warn("{}: the stored winner was timed with an older kernel source or timing method; taking its config", to_string(s));
    out.push_back(std::move(best->record));
  }
  return out;
}

// The record that vouches for a --config export: the config's gated record, the config gated here first where
// there is none (campaign/config_gate), or with --ungated none at all.
EvaluationRecord config_record(ExportStore& db, const Globals& g, const Family& f, const Shape& s, const Config& c,
                               const std::string& device, bool ungated) {
  if (ungated) return unmeasured_record(f, c, s);
  if (db.exists()) {
    if (auto r = gated_record(db.read(), f, s, c, device_named(db.read(), device))) return *r;
  } else if (!device.empty()) {
    throw std::runtime_error("no results for device " + device);
  }
  Store& store = db.write();
  return gate_config(store, f, s, c, device_named(store, device), base_campaign_options(g));
}

}  // namespace

void add_export(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand("export", "Write the best kernel(s), or a given config, as standalone CUDA source");
  static std::string family, suite, out = "exported", name, arch, device, config;
  static std::vector<std::string> shapes, defines;
  static bool json = false, torch = false, ungated = false;
  cmd->add_option("--family", family, "Family name")->required();
  cmd->add_option("--shape", shapes, "Shape, e.g. M=4096,N=4096,K=4096,dtype=f16 (repeatable)");
  cmd->add_option("--suite", suite, "Named shape suite of the family (default: every shape with results, as best)");
  cmd->add_option("--config", config,
                  "Export this config instead of the winners: K=V,... (others from the family's first default) or "
                  "best[,K=V,...] (the stored winner with overrides); ';NAME=V' adds defines. A config without a "
                  "gated record is gated on the local GPU first")
      ->check(printable_text());
  cmd->add_flag("--ungated", ungated,
                "With --config: write the config without a gate (its manifest says \"gate\": \"not run\")");
  cmd->add_option("--define", defines, "Extra #define NAME=V rendered into every kernel (repeatable)")
      ->check(printable_text());
  cmd->add_option("--out", out, "Output folder")->capture_default_str();
  cmd->add_option("--name", name, "Launcher name (several shapes: prefix)");
  cmd->add_option("--arch", arch, "Target, e.g. sm_90 (default: the measured device's; with --ungated: sm_90)")
      ->check(known_arch());
  cmd->add_option("--device", device,
                  "Whose results: a stored device's name or part of it (e.g. H100), or all (default: the local GPU's, "
                  "else any device's, said)");
  cmd->add_flag("--json", json, "Print the manifest");
  cmd->add_flag("--torch", torch,
                "Also write torch/: the kernel(s) as the torch custom op kforge::<name> (torch/load.py builds and loads it)");
  set_action(cmd, [&g] {
    if (ungated && config.empty())
      throw std::runtime_error("--ungated goes with --config: stored winners have passed the gate");
    const Family f = load_family(g, family);
    ExportInput in;
    in.family = &f;
    in.out_dir = out;
    in.name = name;
    in.base_arch = arch;
    in.db_path = g.db;
    in.torch = torch;
    in.ungated = ungated;
    in.defines = parse_defines(f, defines);
    ExportStore db(g.db);
    if (!config.empty()) {
      if (shapes.empty() && suite.empty()) throw std::runtime_error("--config needs --shape or --suite");
      for (const auto& s : select_shapes(f, shapes, suite)) {
        const auto stored_best = [&]() -> Config {
          return complete_stored_config(f, stored_winners(db, f, {s}, device, g.db).front().config);
        };
        const UserVariant v = parse_user_variant(f, config, stored_best);
        for (const auto& [define, value] : v.defines) in.defines[define] = value;
        in.winners.push_back(config_record(db, g, f, s, v.config, device, ungated));
      }
      if (ungated) {  // measured nowhere: no device to take the target from
        if (in.base_arch.empty()) in.base_arch = "sm_90";
        in.db_path.clear();
      }
    } else {
      std::vector<Shape> selected;
      if (shapes.empty() && suite.empty()) {
        selected = db.read().shapes(f.name);  // everything stored, as `best` shows
        if (selected.empty()) throw std::runtime_error("no results for " + f.name + " in " + g.db);
      } else {
        selected = select_shapes(f, shapes, suite);
      }
      const CampaignOptions regate = base_campaign_options(g);
      in.winners = stored_winners(db, f, selected, device, g.db, &regate);
    }
    const ExportOutput res = export_kernels(in);
    // One line on stderr (shown with -q too): a re-export over an earlier one is the common case,
    // but a folder of someone else's files should not be overwritten unnoticed.
    if (!res.replaced.empty()) {
      std::string names;
      for (size_t i = 0; i < res.replaced.size() && i < 4; ++i) names += (i ? ", " : "") + res.replaced[i];
      if (res.replaced.size() > 4) names += ", ...";
      spdlog::warn("export: replaced {} existing file(s) in {} ({})", res.replaced.size(), in.out_dir.string(), names);
    }
    if (json) return print_json(res.manifest);
    for (const auto& p : res.files) std::printf("wrote %s\n", p.string().c_str());
  });
}

}  // namespace kf::cli
