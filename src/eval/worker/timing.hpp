// Timing one kernel on the GPU: warm-up, CUDA graph replays until the median's CI is tight,
// then plain launches (optionally with a cold L2).
#pragma once
#include <functional>
#include <vector>

#include "eval/protocol.hpp"
#include "gpu/buffer.hpp"
#include "gpu/stream.hpp"

namespace kf {

// `launch` enqueues one launch on `stream` and throws gpu::CudaError if it cannot. `flush`
// (at least twice the L2 size) is overwritten before each plain launch when o.cold_l2.
TimingStats measure_kernel(const std::function<void()>& launch, const gpu::Stream& stream,
                           const TimingOptions& o, gpu::DeviceBuffer* flush);

// time_many: one TimingStats per round -> medians, spread and CI over the rounds.
TimingStats combine_rounds(const std::vector<TimingStats>& rounds);

}  // namespace kf
