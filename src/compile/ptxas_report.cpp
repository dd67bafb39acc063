#include "compile/ptxas_report.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <regex>
#include <sstream>
#include <vector>

namespace kf {

namespace {

int to_int(const std::string& s) {
  try {
    return std::stoi(s);
  } catch (...) {
    return 0;
  }
}

// The lines of the block ptxas prints for one entry: from "Compiling entry function 'e'"
// up to the next "Compiling entry function" line.
std::vector<std::string> entry_block(const std::string& log, const std::string& entry) {
  std::vector<std::string> block;
  std::istringstream in(log);
  std::string line;
  const std::string start = "Compiling entry function '" + entry + "'";
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.find("Compiling entry function '") != std::string::npos) {
      if (inside) break;
      inside = line.find(start) != std::string::npos;
    }
    if (inside) block.push_back(line);
  }
  return block;
}

}  // namespace

std::optional<KernelInfo> parse_ptxas_report(const std::string& log, const std::string& entry) {
  const std::vector<std::string> block = entry_block(log, entry);
  if (block.empty()) return std::nullopt;

  static const std::regex frame_re(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex regs_re(R"(Used (\d+) registers)");
  static const std::regex smem_re(R"((\d+) bytes smem)");
  static const std::regex cumulative_re(R"((\d+) bytes cumulative stack size)");
  const std::string props = "Function properties for ";

  KernelInfo info;
  bool have_regs = false;
  bool next_is_own_frame = false;
  for (const std::string& line : block) {
    std::smatch m;
    if (std::regex_search(line, m, frame_re)) {
      // Spills anywhere under the entry cost it (callees run on its behalf).
      info.spill_stores += to_int(m[2]);
      info.spill_loads += to_int(m[3]);
      if (next_is_own_frame) info.stack_frame = std::max(info.stack_frame, to_int(m[1]));
    }
    const size_t pos = line.find(props);
    next_is_own_frame = pos != std::string::npos && trim(line.substr(pos + props.size())) == entry;
    if (!have_regs && std::regex_search(line, m, regs_re)) {
      have_regs = true;
      info.registers = to_int(m[1]);
      if (std::regex_search(line, m, smem_re)) info.smem_static = to_int(m[1]);
      // The cumulative size includes the frames of called functions: the local memory a
      // thread really needs.
      if (std::regex_search(line, m, cumulative_re))
        info.stack_frame = std::max(info.stack_frame, to_int(m[1]));
    }
  }
  if (!have_regs) return std::nullopt;
  return info;
}

}  // namespace kf
