#include "export/commands.hpp"

#include <cctype>
#include <cstring>

namespace kf::exporter {

namespace {
bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

std::string join(const std::vector<std::string>& flags) {
  std::string out;
  for (const auto& f : flags) out += " " + shell_quote(f);
  return out;
}
}  // namespace

std::vector<std::string> nvcc_flags(const std::vector<std::string>& nvrtc_options) {
  std::vector<std::string> out;
  for (size_t i = 0; i < nvrtc_options.size(); ++i) {
    const std::string& o = nvrtc_options[i];
    // Only an include path or -default-device style option is NVRTC-specific among what a
    // family spec sets; everything the two compilers share keeps its meaning.
    if (starts_with(o, "-I") || starts_with(o, "--include-path") || starts_with(o, "--pre-include") ||
        starts_with(o, "-include") || o == "-default-device" || o == "--device-as-default-execution-space" ||
        starts_with(o, "--gpu-architecture") || starts_with(o, "-arch") || starts_with(o, "--ptxas-options=-v") ||
        o == "-dw" || o == "--disable-warnings" || starts_with(o, "--minimal") || o == "-minimal") {
      if ((o == "-I" || o == "-include") && i + 1 < nvrtc_options.size()) ++i;  // its argument
      continue;
    }
    out.push_back(o);
  }
  return out;
}

std::string nvcc_arch_flag(const std::string& arch) {
  if (!arch.empty() && (arch.back() == 'a' || arch.back() == 'f')) {
    const std::string compute = "compute" + arch.substr(arch.find('_'));
    return "-gencode " + shell_quote("arch=" + compute + ",code=" + arch);
  }
  return shell_quote("-arch=" + arch);
}

std::string build_command(const std::string& name, const std::string& arch, const std::vector<std::string>& flags) {
  return "nvcc -O3 " + nvcc_arch_flag(arch) + join(flags) + " -I. -o " + shell_quote(name + "_runner") + " " +
         shell_quote(name + ".cu") + " " + shell_quote("runners/" + name + "_runner.cu");
}

std::string object_command(const std::string& name, const std::string& arch, const std::vector<std::string>& flags) {
  return "nvcc -O3 " + nvcc_arch_flag(arch) + join(flags) + " -c " + shell_quote(name + ".cu");
}

std::string ncu_command(const std::string& name) {
  // One profiled launch: the runner calls the launcher many times and --set full replays each.
  return "ncu --set full -k " + shell_quote(name + "_kernel") + " -c 1 " + shell_quote("./" + name + "_runner");
}

}  // namespace kf::exporter
