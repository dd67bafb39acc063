// Where a family's kernel sources may be read from: the spec's folder, the kernel_templates
// folder beside it (search_spaces/ and kernel_templates/ are siblings in the source tree and
// when installed) and the spec's include_dirs (which must lie in those two). A spec names its
// templates, and templates their quoted #includes, by path; without this a spec could read any
// file ("../../../../etc/passwd") into the compile log, the cubin cache and the store.
// A path counts as inside by its real location (links resolved), so a link in a template tree
// cannot lead out of it either.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace kf {

// The real paths of the spec's folder and, when it exists, of <spec folder>/../kernel_templates.
std::vector<std::filesystem::path> template_roots(const std::filesystem::path& spec_path);
// Whether the existing file or folder p really lies in (or is) one of roots (real paths).
bool inside_roots(const std::filesystem::path& p, const std::vector<std::filesystem::path>& roots);
// The real path of an existing p (p itself when it cannot be resolved).
std::filesystem::path real_path(const std::filesystem::path& p);
// "<p> [(really <real path>)] is outside the spec's folder and the template trees (<roots>)"
std::string outside_roots_text(const std::filesystem::path& p, const std::vector<std::filesystem::path>& roots);

}  // namespace kf
