#include "family/template_roots.hpp"

#include <algorithm>

namespace kf {

namespace fs = std::filesystem;

fs::path real_path(const fs::path& p) {
  std::error_code ec;
  fs::path real = fs::canonical(p, ec);
  return ec ? fs::absolute(p).lexically_normal() : real;
}

std::vector<fs::path> template_roots(const fs::path& spec_path) {
  std::vector<fs::path> roots;
  if (spec_path.empty()) return roots;
  const fs::path folder = fs::absolute(spec_path).lexically_normal().parent_path();
  roots.push_back(real_path(folder));
  const fs::path templates = folder.parent_path() / "kernel_templates";
  std::error_code ec;
  if (fs::is_directory(templates, ec)) roots.push_back(real_path(templates));
  return roots;
}

bool inside_roots(const fs::path& p, const std::vector<fs::path>& roots) {
  const fs::path real = real_path(p);
  for (const fs::path& root : roots) {
    // Component by component, so /a/bc is not inside /a/b.
    if (std::mismatch(root.begin(), root.end(), real.begin(), real.end()).first == root.end()) return true;
  }
  return false;
}

std::string outside_roots_text(const fs::path& p, const std::vector<fs::path>& roots) {
  std::string listed;
  for (const auto& r : roots) listed += (listed.empty() ? "" : ", ") + r.string();
  const fs::path real = real_path(p);
  return p.string() + (real == p ? "" : " (really " + real.string() + ")") +
         " is outside the spec's folder and the template trees (" + (listed.empty() ? "none" : listed) + ")";
}

}  // namespace kf
