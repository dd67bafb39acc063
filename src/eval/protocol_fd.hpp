// Where a worker writes its protocol lines: a descriptor of its own (not stdout, where a kernel's
// device printf lands). The orchestrator's subprocess sets it up; the worker's channel takes it.
#pragma once

namespace kf {

// The child's descriptor for protocol lines, and the variable that tells it so.
inline constexpr int kProtocolFd = 3;
inline constexpr const char* kProtocolFdEnv = "KFORGE_PROTOCOL_FD";

}  // namespace kf
