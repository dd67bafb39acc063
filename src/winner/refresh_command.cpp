#include "winner/refresh_command.hpp"

#include <filesystem>

#include "util/shell_quote.hpp"

namespace kf {

std::string refresh_command(const Store& store, const Family& family, const Shape& shape) {
  std::string cmd = "kforge --db " + shell_quote(store.path().string());  // a PostgreSQL password is masked
  // A family found in ./search_spaces needs no --spec-dir; one found elsewhere does.
  std::error_code ec;
  const auto spec_dir = family.spec_path.parent_path();
  if (!spec_dir.empty() && !std::filesystem::equivalent(spec_dir, "search_spaces", ec))
    cmd += " --spec-dir " + shell_quote(spec_dir.string());
  return cmd + " refresh --family " + shell_quote(family.name) + " --shape " + shell_quote(to_string(shape));
}

}  // namespace kf
