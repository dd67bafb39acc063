// Family accessors: look-ups by name and the tolerance for a shape.
#include "family/family.hpp"

namespace kf {

const ParamSpec* Family::param(const std::string& n) const {
  for (const auto& p : params)
    if (p.name == n) return &p;
  return nullptr;
}

const DimSpec* Family::dim(const std::string& n) const {
  for (const auto& d : dims)
    if (d.name == n) return &d;
  return nullptr;
}

const BufferSpec* Family::buffer(const std::string& n) const {
  for (const auto& b : buffers)
    if (b.name == n) return &b;
  return nullptr;
}

Tolerance Family::tolerance_for(const Shape& shape) const {
  auto dtype = shape.find("dtype");
  if (dtype != shape.end() && is_string(dtype->second)) {
    auto it = tolerance.find(std::get<std::string>(dtype->second));
    if (it != tolerance.end()) return it->second;
  }
  auto fallback = tolerance.find("default");
  if (fallback != tolerance.end()) return fallback->second;
  // A zero tolerance would silently fail every candidate; say what is missing instead.
  throw SpecError(spec_path.string() + ":/tolerance: no entry for shape '" + to_string(shape) +
                  "' and no \"default\"");
}

}  // namespace kf
