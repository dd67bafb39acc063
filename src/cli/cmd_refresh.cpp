// kforge refresh: re-gate and re-time each shape's stored top-K with their current kernels.
#include "campaign/refresh.hpp"
#include "cli/campaign_report.hpp"
#include "cli/common.hpp"
#include "cli/device_choice.hpp"

namespace kf::cli {

void add_refresh(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand(
      "refresh",
      "Re-gate and re-time each shape's top-K stored configs with their current kernels (a campaign on the "
      "local GPU), so winners timed with an older kernel source or timing method become current");
  static std::string family, suite;
  static std::vector<std::string> shapes;
  static size_t top = 5;
  static bool json = false;
  cmd->add_option("--family", family, "Family name")->required();
  add_shape_options(cmd, shapes, suite);
  cmd->add_option("--top", top, "Stored configs per shape to refresh (the fastest first)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{1000}));
  static std::string finalist_rounds = "auto";
  cmd->add_option("--finalist-rounds", finalist_rounds,
                  "Rounds of the finalists' re-measure: auto (until the answer is known) or a fixed N")
      ->check(rounds_or_auto())
      ->capture_default_str();
  static std::string from_device;
  cmd->add_option("--from-device", from_device,
                  "Take the top-K of this device's results (a stored device's name or part of it, e.g. H100) and "
                  "re-time them on the local GPU (default: any device's)")
      ->check(printable_text());
  cmd->add_flag("--json", json, "Print the outcome as JSON");
  set_action(cmd, [&g] {
    const Family f = load_family(g, family);
    const auto selected = select_shapes(f, shapes, suite);
    Store store(g.db, Store::Access::ReadWriteExisting);  // refreshes stored results: none in a new file
    const auto from = from_device.empty() ? std::nullopt : choose_device(store, from_device).key;
    CampaignOptions o = refresh_options(store, f, selected, top, base_campaign_options(g), from);
    o.finalist_rounds = parse_rounds(finalist_rounds);
    install_stop_handler();
    const auto outcome = run_campaign(store, f, selected, o);
    report_outcome(outcome, json, g);
  });
}

}  // namespace kf::cli
