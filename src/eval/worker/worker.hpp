// Worker side: the `kforge worker` loop. Only this module (and gpu/) talks to CUDA.
#pragma once
#include <iosfwd>

namespace kf {

// Serves protocol requests from in to out on one device until EOF. Returns the exit code.
int run_worker(int device_index, std::istream& in, std::ostream& out);

}  // namespace kf
