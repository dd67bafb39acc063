// The family spec loader (internal to family/): one method per top-level field, in the order
// load() reads them, since each field may name what the ones before it defined. The space
// (params, dims, derived, constraints, defaults, suites) is read in family_load.cpp, the priors
// in family_load_priors.cpp, the kernel's interface (gate, buffers, args, launch, reference,
// tolerance, cost) in family_load_kernel.cpp.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "family/spec_reader.hpp"

namespace kf::detail {

class FamilyLoader : public SpecReader {
 public:
  explicit FamilyLoader(const std::filesystem::path& spec_path);
  Family load();

 private:
  std::string read_file() const;
  Json parse(const std::string& bytes) const;

  // The space.
  void load_header(const Json& root);
  void load_params(const Json& params);
  void load_priors(const Json& priors);
  void load_dims(const Json& dims);
  void load_shape_constraints(const Json& constraints);
  DimSpec load_dim(const std::string& name, const Json& spec, const std::string& ptr) const;
  void load_enum_choices(DimSpec& d, const Json& spec, const std::string& ptr) const;
  void load_specialize(const Json& spec);
  void load_derived(const Json& derived);
  void load_constraints(const Json& constraints);
  // A list of constraint expressions over `names` at JSON pointer ptr, bounded in number, into out.
  void load_constraint_list(const Json& constraints, const std::string& ptr, const Names& names,
                            std::vector<Constraint>& out);
  void load_arch_suffix(const Json& j);
  void load_defaults(const Json& defaults);
  void load_suites(const Json& suites);

  // The kernel's interface.
  void load_gate(const Json& gate);
  Shape load_gate_overrides(const Json& over, const std::string& ptr) const;
  void load_buffers(const Json& buffers);
  BufferSpec load_buffer(const Json& b, const std::string& ptr);
  std::string buffer_name(const Json& j, const std::string& ptr) const;
  ArgSpec load_tensor_map(const Json& a, const std::string& aptr, const Names& known) const;
  std::vector<ArgSpec> load_args(const Json& args, const std::string& ptr, const Names& known) const;
  LaunchSpec load_launch(const Json& launch, const std::string& ptr, const Names& known) const;
  std::filesystem::path template_path(const Json& obj, const std::string& ptr) const;
  std::filesystem::path data_path(const Json& obj, const std::string& ptr, const char* key) const;
  std::string entry_name(const Json& obj, const std::string& ptr) const;
  void load_reference(const Json& ref);
  void load_tolerance(const Json& tol);
  void load_cost(const Json& cost);

  // Everything the kernel's expressions may read; set once the derived names are known.
  const Names& known_all();
  Names params_and_dims() const;

  Family f_;
  std::vector<std::string> device_names_;  // device.* as DeviceLimits::add_to defines them
  Names names_;  // params, dims, then derived names as they are defined
  Names dim_names_;
  Names all_names_;
  bool all_names_ready_ = false;
};

}  // namespace kf::detail
