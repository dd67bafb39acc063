#include "campaign/sanitize.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "eval/client/worker_client.hpp"

namespace kf {

namespace fs = std::filesystem;

namespace {

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::optional<fs::path> in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && executable(fs::path(dir) / name)) return fs::path(dir) / name;
  return std::nullopt;
}

std::optional<std::string> read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

fs::path find_compute_sanitizer() {
  if (const char* named = std::getenv("KFORGE_COMPUTE_SANITIZER"); named && *named) {
    if (executable(named)) return named;
    throw std::runtime_error(std::string("KFORGE_COMPUTE_SANITIZER=") + named + " is not an executable file");
  }
  if (auto p = in_path("compute-sanitizer")) return *p;
  std::vector<fs::path> dirs;
  if (auto nvcc = in_path("nvcc")) dirs.push_back(nvcc->parent_path());
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) dirs.push_back(fs::path(v) / "bin");
  dirs.emplace_back("/usr/local/cuda/bin");
  for (const auto& d : dirs)
    if (executable(d / "compute-sanitizer")) return d / "compute-sanitizer";
  throw std::runtime_error(
      "--sanitize: compute-sanitizer not found (looked in $PATH, next to nvcc, $CUDA_HOME/bin, $CUDA_PATH/bin, "
      "/usr/local/cuda/bin); install the CUDA toolkit's compute-sanitizer or set KFORGE_COMPUTE_SANITIZER");
}

SanitizerLog parse_sanitizer_log(const std::string& text) {
  static const std::regex error_summary(R"(ERROR SUMMARY:\s*([0-9]+)\s+error)");
  static const std::regex race_summary(
      R"(RACECHECK SUMMARY:\s*([0-9]+)\s+hazards?\s+displayed\s*\(([0-9]+)\s+errors?,\s*([0-9]+)\s+warnings?\))");
  SanitizerLog log;
  std::istringstream lines(text);
  std::string race_line;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, error_summary)) {
      log.has_summary = true;
      log.errors = std::max<int64_t>(log.errors, std::stoll(m[1].str()));
      log.summary = line.substr(static_cast<size_t>(m.position(0)));
    } else if (std::regex_search(line, m, race_summary)) {
      log.has_summary = true;  // racecheck's only summary: on the H100 it prints no ERROR SUMMARY line
      log.errors = std::max<int64_t>(log.errors, std::stoll(m[2].str()));
      log.warnings = std::stoll(m[3].str());
      race_line = line.substr(static_cast<size_t>(m.position(0)));
    }
  }
  if (!race_line.empty()) log.summary = race_line + (log.summary.empty() ? "" : "; " + log.summary);
  return log;
}

std::vector<std::string> sanitizer_argv(const fs::path& sanitizer, const std::string& tool, const fs::path& log_file,
                                        const std::string& entry, const std::vector<std::string>& worker_argv,
                                        int device) {
  std::vector<std::string> argv = {sanitizer.string(), "--tool", tool, "--log-file", log_file.string(),
                                   "--kernel-name", "kns=" + entry};
  argv.insert(argv.end(), worker_argv.begin(), worker_argv.end());
  argv.push_back("--device");
  argv.push_back(std::to_string(device));
  return argv;
}

SanitizerOutcome judge_sanitizer_run(const EvalResult& gate, const std::optional<std::string>& log,
                                     const std::string& exit_description) {
  SanitizerOutcome out;
  const SanitizerLog parsed = log ? parse_sanitizer_log(*log) : SanitizerLog{};
  out.errors = parsed.errors;
  std::string tool_says = parsed.has_summary ? parsed.summary : "no summary in the tool's log (" + exit_description + ")";
  if (gate.status != Status::Ok) {
    out.summary = "gate under the tool: " + to_string(gate.status) + ": " + gate.error + "; " + tool_says;
    return out;
  }
  out.summary = tool_says;
  out.passed = parsed.has_summary && parsed.errors == 0;
  return out;
}

SanitizerOutcome run_under_sanitizer(const SanitizeJob& job, const std::string& tool, EvalRequest req) {
  char tmpl[] = "/tmp/kforge-sanitizer-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) throw std::runtime_error("--sanitize: cannot create a log file in /tmp");
  ::close(fd);
  const fs::path log_file = tmpl;
  req.time = false;  // the gate only: the tools slow kernels down too much to time them
  EvalResult gate;
  std::string how;
  {
    WorkerClient worker(sanitizer_argv(job.sanitizer, tool, log_file, job.entry, job.worker_argv, job.device),
                        job.timeout_s);
    gate = worker.evaluate(req);
    how = worker.shutdown(60.0);  // the tool writes its summary as the worker exits
  }
  const auto log = read_text(log_file);
  std::error_code ec;
  fs::remove(log_file, ec);
  return judge_sanitizer_run(gate, log, how.empty() ? "worker not running" : how);
}

}  // namespace kf
