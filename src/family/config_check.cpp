#include "family/config_check.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "family/buffers.hpp"
#include "family/tensor_map.hpp"
#include "util/text.hpp"

namespace kf {

namespace {

// Runs one step; its exception becomes "<what>: <message>".
std::optional<std::string> attempt(const std::string& what, const std::function<void()>& step) {
  try {
    step();
  } catch (const std::exception& e) {
    return what + ": " + first_line(e.what());
  }
  return std::nullopt;
}

struct BufferFacts {
  DType dtype = DType::F32;
  int64_t count = 0;
};

// A buffer's dtype and count: the worker allocates inputs and outputs from the reference scope
// (dims and device) and sizes scratch from the kernel's scope.
BufferFacts buffer_facts(const BufferSpec& b, const Scope& dims_scope, const Scope& kernel_scope) {
  BufferFacts out;
  out.dtype = dtype_from_string(b.dtype.eval_string(dims_scope));
  out.count = b.count.eval_int(b.role == BufferRole::Scratch ? kernel_scope : dims_scope);
  if (out.count < 0) throw ExprError("negative element count " + std::to_string(out.count));
  return out;
}

std::optional<std::string> check_kernel(const Family& f, const KernelSpec& k, const char* who, const Scope& scope,
                                        const Scope& dims_scope) {
  const std::string w = who;
  if (auto e = attempt(w + " launch", [&] { resolve_launch(k.launch, scope); })) return e;
  // Scratch is sized from the kernel's own scope, and only for a kernel that takes it: the reference's scope
  // has no config, so a scratch size that reads config parameters (sdpa_fwd's split-KV partials) is no fault
  // of a reference that never receives that buffer.
  std::set<std::string> taken;
  for (const ArgSpec& a : k.args)
    if (a.kind == ArgSpec::Kind::Buffer || a.kind == ArgSpec::Kind::TensorMap) taken.insert(a.buffer);
  std::map<std::string, BufferFacts> buffers;
  for (const BufferSpec& b : f.buffers) {
    if (b.role == BufferRole::Scratch && !taken.count(b.name)) continue;
    if (auto e = attempt("buffer " + b.name, [&] { buffers[b.name] = buffer_facts(b, dims_scope, scope); }))
      return e;
  }
  for (size_t i = 0; i < k.args.size(); ++i) {
    const ArgSpec& a = k.args[i];
    const std::string what = w + " argument " + std::to_string(i);
    auto e = attempt(what, [&] {
      switch (a.kind) {
        case ArgSpec::Kind::Buffer:
          break;
        case ArgSpec::Kind::I32: {
          const int64_t v = a.value.eval_int(scope);
          if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
            throw ExprError("'" + a.value.text() + "' = " + std::to_string(v) + " does not fit in i32");
          break;
        }
        case ArgSpec::Kind::I64:
          a.value.eval_int(scope);
          break;
        case ArgSpec::Kind::F32: {
          const double v = a.value.eval_double(scope);
          if (!std::isfinite(v)) throw ExprError("'" + a.value.text() + "' is not finite");
          break;
        }
        case ArgSpec::Kind::TensorMap: {
          const BufferFacts& b = buffers.at(a.buffer);
          std::vector<int64_t> dims, box;
          for (const Expr& x : a.dims) dims.push_back(x.eval_int(scope));
          for (const Expr& x : a.box) box.push_back(x.eval_int(scope));
          tensor_map_geometry(tensor_map_what(i, a.buffer), b.dtype, static_cast<uint64_t>(b.count), dims, box,
                              a.swizzle);
          break;
        }
      }
    });
    if (e) return e;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> config_expression_failure(const Family& f, const Config& c, const Shape& s,
                                                     const DeviceLimits& d) {
  Scope scope;
  if (auto e = attempt("derived values", [&] { scope = make_scope(f, c, s, d); })) return e;
  const Scope dims_scope = make_reference_scope(f, s, d);
  if (auto e = check_kernel(f, f.kernel, "kernel", scope, dims_scope)) return e;
  for (const auto* cost : {&f.flops, &f.bytes}) {
    if (cost->empty()) continue;
    auto e = attempt(cost == &f.flops ? "flops" : "bytes", [&] {
      const double v = cost->eval_double(scope);
      if (!std::isfinite(v) || v < 0) throw ExprError("'" + cost->text() + "' = " + std::to_string(v) + " is not a cost");
    });
    if (e) return e;
  }
  return attempt("tolerance", [&] { f.tolerance_for(s); });
}

std::optional<std::string> reference_expression_failure(const Family& f, const Shape& s, const DeviceLimits& d) {
  Scope scope;
  if (auto e = attempt("reference scope", [&] { scope = make_reference_scope(f, s, d); })) return e;
  return check_kernel(f, f.reference, "reference", scope, scope);
}

ExpressionReport check_expressions(const Family& f, const std::vector<Config>& configs, const Shape& s,
                                   const DeviceLimits& d, size_t keep) {
  ExpressionReport r;
  const auto note = [&](const std::string& who, const std::optional<std::string>& failure) {
    if (!failure) return;
    ++r.failed;
    if (r.first.size() < keep) r.first.push_back(who + ": " + *failure);
  };
  note("reference", reference_expression_failure(f, s, d));
  for (const Config& c : configs) note(to_string(c), config_expression_failure(f, c, s, d));
  return r;
}

}  // namespace kf
