#include "core/vocabulary.hpp"

#include <array>
#include <stdexcept>
#include <utility>

namespace kf {

namespace {

// The spelling of each status in the store, the protocol and the CLI. Order follows the enum.
constexpr std::array<std::pair<Status, const char*>, 8> kNames{{
    {Status::Ok, "ok"},
    {Status::Invalid, "invalid"},
    {Status::CompileError, "compile_error"},
    {Status::LaunchError, "launch_error"},
    {Status::WrongResult, "wrong_result"},
    {Status::RuntimeFault, "runtime_fault"},
    {Status::Timeout, "timeout"},
    {Status::Interrupted, "interrupted"},
}};

}  // namespace

std::string to_string(Status s) {
  for (const auto& [status, name] : kNames)
    if (status == s) return name;
  // Only reachable through a cast from an out-of-range integer.
  throw std::invalid_argument("unknown status value " + std::to_string(static_cast<int>(s)));
}

Status status_from_string(const std::string& s) {
  for (const auto& [status, name] : kNames)
    if (s == name) return status;
  throw std::invalid_argument("unknown status '" + s + "'");
}

}  // namespace kf
