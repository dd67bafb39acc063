// A kernel family: the declarative spec (search_spaces/<name>.json) loaded and validated.
// Everything here is pure data + pure functions; no CUDA.
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/vocabulary.hpp"
#include "space/expr.hpp"
#include "space/space.hpp"
#include "space/value.hpp"

namespace kf {

// Thrown for any problem with a spec, a shape or a config given by the user. The message is
// one line: "<file>:<json pointer>: <problem>" for spec errors.
struct SpecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct DimSpec {
  std::string name;
  bool is_enum = false;
  std::vector<std::string> choices;  // for enums
  int64_t min = 1;                   // for ints
  int64_t max = INT64_MAX;
  std::string doc;
  // Optional (int dims): the value a shape that omits the dim takes, an expression over the dims declared
  // before it ("Hkv": "H"). A shape is kept without such a dim where it has that value, so shapes stored
  // before the dim existed keep their keys (docs/family_spec.md, "Adding a dimension").
  Expr default_value;
};

struct NamedExpr {
  std::string name;
  Expr expr;
};

struct Constraint {
  std::string text;
  Expr expr;
};

// Scratch buffers (split-KV partials, counters) are zero-filled once at allocation and not compared.
enum class BufferRole { Input, Output, Scratch };

struct InitSpec {
  double lo = -1.0;  // uniform in [lo, hi), times the gate case's input_scale
  double hi = 1.0;
  // Or the contents of a raw file (exactly count elements in the buffer's dtype, little-endian):
  // an input's values, an output's contents before every launch (instead of NaN). Absolute,
  // resolved against the spec's folder; empty: the uniform range above.
  std::filesystem::path file;
};

struct BufferSpec {
  std::string name;
  Expr dtype;  // evaluates to "f16" | "bf16" | "f32" | "i32"
  Expr count;  // elements
  // Optional: the buffer's axes as a tensor, outermost first, as a string expression over the dims ("'K, N'",
  // or "b_layout == 'nk' ? 'N, K' : 'K, N'"). Without it, the factors of `count` in their order. Only the
  // torch op reads it (the shape checks of its inputs and outputs).
  Expr axes;
  BufferRole role = BufferRole::Input;
  InitSpec init;
  // Outputs only. `expected`: the values to compare with come from this raw file instead of the
  // reference kernel (user-supplied answers, as Kernel Tuner's `answer`). `compare` false: the
  // output is never compared (a buffer the kernel may write that nobody checks).
  std::filesystem::path expected;
  bool compare = true;
};

struct ArgSpec {
  enum class Kind { Buffer, I32, I64, F32, TensorMap };
  Kind kind = Kind::Buffer;
  std::string buffer;  // for Kind::Buffer and Kind::TensorMap
  Expr value;          // for the scalar kinds
  // Kind::TensorMap: a TMA descriptor (CUtensorMap, 128 bytes) over `buffer`, passed by value.
  // The buffer is viewed as a packed tensor of `dims`, innermost first (1 to 5 of them); `box`
  // is the tile one copy moves, one entry per dim; `swizzle` is 0, 32, 64 or 128 bytes.
  std::vector<Expr> dims;
  std::vector<Expr> box;
  int swizzle = 0;
};

struct LaunchSpec {
  std::array<Expr, 3> grid;
  std::array<Expr, 3> block;
  Expr smem;  // dynamic shared memory bytes
};

struct KernelSpec {
  std::filesystem::path template_path;  // absolute, resolved against the spec's folder
  std::string entry;                    // an extern "C" __global__ function
  std::vector<ArgSpec> args;
  LaunchSpec launch;
};

struct Tolerance {
  double max_abs = 0;
  double rel_l2 = 0;
};

// A gate case: the campaign shape with some dimensions overridden (odd sizes, ...), and an
// input scale (large scores expose a softmax that skips its running max).
struct GateCase {
  std::string name;
  Shape overrides;
  double input_scale = 1.0;
};

struct Family {
  std::string name;
  std::string description;
  std::filesystem::path spec_path;
  std::string spec_hash;  // of the spec file's bytes
  std::vector<std::filesystem::path> include_dirs;
  std::vector<std::string> compile_options;
  Expr arch_suffix;  // optional: evaluates to "a" when a config needs sm_90a (wgmma)
  bool sanitize = false;  // campaigns run their finalists under compute-sanitizer (search --sanitize)
  std::vector<ParamSpec> params;
  std::vector<Config> defaults;
  std::vector<NamedExpr> derived;  // evaluated in order after params, dims and device
  std::vector<Constraint> constraints;
  std::vector<DimSpec> dims;
  std::vector<Constraint> shape_constraints;  // over dims only: a shape that breaks one is refused in one line
  std::vector<std::string> specialize;  // dims baked into the source as #defines
  std::map<std::string, std::vector<Shape>> suites;
  std::vector<GateCase> gate;
  std::vector<BufferSpec> buffers;
  KernelSpec kernel;
  KernelSpec reference;
  std::map<std::string, Tolerance> tolerance;  // keyed by the shape's "dtype", or "default"
  Expr flops;
  Expr bytes;

  const ParamSpec* param(const std::string& name) const;
  const DimSpec* dim(const std::string& name) const;
  const BufferSpec* buffer(const std::string& name) const;
  Tolerance tolerance_for(const Shape& shape) const;
};

// Loads and validates a spec; throws SpecError naming file, JSON location and problem.
Family load_family(const std::filesystem::path& spec_path);
// All *.json specs directly in dir, sorted by name.
std::vector<std::filesystem::path> find_family_specs(const std::filesystem::path& dir);
// By name ("gemm") in dir, or by path if name ends in .json. Throws SpecError listing the known names.
Family load_family_named(const std::string& name_or_path, const std::filesystem::path& dir);

// "M=4096,N=4096,K=4096,dtype=f16" -> Shape; throws SpecError for unknown, missing or
// out-of-range dimensions and bad enum values.
Shape parse_shape(const Family& f, const std::string& text);
Shape validate_shape(const Family& f, const Shape& s);
// The shape with every dim: those a (validated) shape omits at their defaults. Expressions, launchers and
// exported kernels see full shapes; stores and names keep the shape as validated.
Shape full_shape(const Family& f, const Shape& s);
// Throws SpecError for an unknown parameter or a value outside its domain; fills nothing in.
Config validate_config(const Family& f, const Config& c);
// A stored config recorded before the family gained a parameter: the missing parameter takes
// the first value of its domain, which a new parameter must give to the behaviour the family
// had without it (docs/family_spec.md, "Adding a parameter"). Other parameters are left as they are.
Config complete_stored_config(const Family& f, Config c);
const std::vector<Shape>& suite_shapes(const Family& f, const std::string& suite);  // throws SpecError

// params + dims + device.* + derived values, in that order. Throws ExprError naming the derived
// value that fails.
Scope make_scope(const Family& f, const Config& c, const Shape& s, const DeviceLimits& d);
// Scope for the reference kernel: dims + device.* only.
Scope make_reference_scope(const Family& f, const Shape& s, const DeviceLimits& d);
// The first constraint the config violates for this shape and device (its text), or nullopt.
// Constraints are checked in the order the space's walks check them (docs/family_spec.md); a
// constraint or derived value that fails to evaluate on the way is the spec's error: SpecError
// "<spec>:/constraints/<i>: <error>, for config ... at shape ... on sm_XY" (or /derived/<name>).
std::optional<std::string> violated_constraint(const Family& f, const Config& c, const Shape& s,
                                               const DeviceLimits& d);
// The family's space for one shape and device: constraints become the validity predicate. Its
// checks throw violated_constraint's SpecError out of the walks and samplers.
SearchSpace make_space(const Family& f, const Shape& s, const DeviceLimits& d);

struct ResolvedLaunch {
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  unsigned smem = 0;
};
ResolvedLaunch resolve_launch(const LaunchSpec& l, const Scope& scope);  // throws ExprError

// The gate shapes for a campaign shape: the campaign shape itself (scale 1) followed by each
// gate case applied to it. Cases whose shape is invalid are skipped; the caller drops those
// whose constraints the config violates.
std::vector<std::pair<GateCase, Shape>> gate_shapes(const Family& f, const Shape& campaign_shape);

}  // namespace kf
