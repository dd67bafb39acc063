// Runs the built kforge binary (or the one named by $KFORGE_TEST_BINARY, e.g. an older build to
// see a test fail) and captures its exit status, stdout and stderr.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

struct CliResult {
  int rc = -1;      // exit code, or 128 + signal
  std::string out;  // stdout
  std::string err;  // stderr
  std::vector<std::string> err_lines() const {
    std::vector<std::string> lines;
    std::istringstream in(err);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  }
};

// Single-quotes a word for /bin/sh.
inline std::string sh_word(const std::string& w) {
  std::string out = "'";
  for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string kforge_binary() {
  const char* over = std::getenv("KFORGE_TEST_BINARY");
  return over && *over ? over : KFORGE_BINARY;
}

// `prefix` is shell text put before the binary (environment, ulimit, setpriv ...).
inline CliResult run_kforge(const std::vector<std::string>& args, const std::filesystem::path& work_dir,
                            const std::string& prefix = "") {
  const auto out = work_dir / "cli.stdout", err = work_dir / "cli.stderr";
  std::string cmd = "cd " + sh_word(work_dir.string()) + " && " + prefix + " " + sh_word(kforge_binary());
  for (const auto& a : args) cmd += " " + sh_word(a);
  cmd += " > " + sh_word(out.string()) + " 2> " + sh_word(err.string()) + " < /dev/null";
  const int status = std::system(("/bin/sh -c " + sh_word(cmd)).c_str());
  CliResult r;
  if (WIFEXITED(status)) r.rc = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.rc = 128 + WTERMSIG(status);
  const auto slurp = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  };
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}
