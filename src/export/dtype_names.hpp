// The element types an exported kernel's buffers may have, and how each is spelled in the C
// launcher, in ATen and in Python: one table, so the launcher and the torch op agree.
#pragma once
#include <string>

namespace kf::exporter {

struct DtypeNames {
  const char* dtype;   // kforge's name: "f16"
  const char* ctype;   // the launcher's element type: "__half"
  const char* aten;    // "at::kHalf"
  const char* python;  // "torch.float16"
};

// nullptr for a dtype an exported buffer cannot have.
const DtypeNames* dtype_names(const std::string& dtype);

}  // namespace kf::exporter
