#pragma once
#include <string>

namespace kf {

// Outcome of one evaluation (see docs/architecture.md).
enum class Status { Ok, Invalid, CompileError, LaunchError, WrongResult, RuntimeFault, Timeout, Interrupted };

std::string to_string(Status s);                 // "ok", "invalid", "compile_error", ...
Status status_from_string(const std::string& s);  // throws std::invalid_argument

}  // namespace kf
