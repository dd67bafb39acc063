// kforge: the command line. Each subcommand lives in its own cmd_*.cpp and holds no logic.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/common.hpp"
#include "cli/unknown_command.hpp"

int main(int argc, char** argv) {
  using namespace kf::cli;
  CLI::App app{"kforge: autotuning and evolutionary search of CUDA kernel families", "kforge"};
  app.set_version_flag("--version", std::string("kforge ") + KFORGE_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // global options (--db, ...) may also follow the subcommand
  Globals g;
  app.add_option("--db", g.db, "Results database: a SQLite file, or postgresql://user@host/db")->capture_default_str();
  app.add_option("--spec-dir", g.spec_dir, "Folder of family specs (default: ./search_spaces, else the installed ones)");
  app.add_option("--cache-dir", g.cache_dir, "Cubin cache (default: .kforge-cache beside the db)");
  app.add_flag("-v,--verbose", g.verbose, "Debug logging");
  app.add_flag("-q,--quiet", g.quiet, "Warnings and errors only; no progress line");

  add_list(app, g);
  add_check(app, g);
  add_search(app, g);
  add_resume(app, g);
  add_refresh(app, g);
  add_best(app, g);
  add_show(app, g);
  add_export(app, g);
  add_ablate(app, g);
  add_bench(app, g);
  add_replay(app, g);
  add_import(app, g);
  add_results(app, g);
  add_baseline(app, g);
  add_worker(app, g);
  add_db(app, g);
  add_agent(app, g);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A bad command line: one line, exit code 2 (README, "Using it"), like other tools'
    // usage errors; CLI11's own exit codes (1xx) and second line are not part of the promise.
    // A mistyped command reads to CLI11 as a stray word ("A subcommand is required"): name it.
    if (app.get_subcommands().empty())
      if (auto unknown = unknown_command(app, std::vector<std::string>(argv + 1, argv + argc)))
        return usage_error(*unknown);
    return usage_error(e.what());
  }
  // Logs go to stderr so that --json output on stdout stays clean.
  auto logger = spdlog::stderr_color_mt("kforge");
  logger->set_pattern("%^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(g.verbose ? spdlog::level::debug
                              : (g.quiet ? spdlog::level::warn : spdlog::level::info));
  return run_selected(app);
}
