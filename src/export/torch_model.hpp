// The torch custom op's interface, derived from the family spec alone (buffers, dims), so any
// family whose buffers are shaped by its dims gets an op, attention and gemm alike:
//   - an input buffer whose count is a product of int dims ("B * H * S * D") is a Tensor argument of
//     that shape (dims in that order); an output buffer so shaped is returned, allocated by torch;
//     scratch buffers live in one workspace the op allocates (torch's caching allocator);
//   - an int dim is read from the first input that has it (the others must agree); one no input has
//     is an argument (bool when its range is 0..1), defaulting to the exported shape's value;
//   - an enum dim that is an input's dtype ("dtype": "dtype") is read from that tensor's dtype; any
//     other is a str argument, defaulting to the exported shape's value.
// A family this cannot express (a count that is not such a product, a dtype that is neither a
// literal nor an enum dim) is refused at export with the reason.
#pragma once
#include <string>
#include <vector>

#include "export/kernel_model.hpp"

namespace kf::exporter {

struct TorchTensor {
  std::string name;              // the buffer's name: schema argument or output
  BufferRole role = BufferRole::Input;
  std::vector<std::string> dims;  // its shape, outermost first (empty for scratch)
  std::string dtype_dim;         // the enum dim giving its dtype, or ""
  std::string dtype;             // else its fixed dtype ("f16", "f32", ...)
  std::string pointer_type;      // the launcher's parameter type, as its header spells it
};

struct TorchDim {
  const DimSpec* spec = nullptr;
  // Where the op gets it: from an input's axis, from an input's dtype, or as an argument.
  enum class Source { InputAxis, InputDtype, Argument } source = Source::Argument;
  std::string tensor;  // InputAxis / InputDtype: the input
  int axis = 0;        // InputAxis
  bool is_bool = false;         // Argument of an int dim with range 0..1
  std::string default_value;    // Argument: the exported shape's value, as the schema spells it
};

struct TorchOpModel {
  std::string op;        // kforge::<op>
  std::string launcher;  // the C function it calls: the kernel's launcher or the dispatcher
  std::vector<TorchTensor> buffers;  // every buffer, in the launcher's parameter order
  std::vector<TorchDim> dims;        // in the family's dim order (the launcher's)
  int scratch_count = 0;
  std::string schema;    // "sdpa_fwd(Tensor Q, Tensor K, Tensor V, bool causal=False) -> Tensor"

  const TorchTensor* first_input() const;
};

// Throws std::runtime_error ("export --torch: ...") for a family the op cannot express.
// launcher: the kernel's name with one kernel, the dispatcher's with several.
TorchOpModel make_torch_op_model(const std::string& op, const std::string& launcher,
                                 const std::vector<KernelModel>& kernels);

// torch's dtype for a kforge dtype name: "at::kHalf" / "torch.float16"; "" for an unknown one.
std::string aten_scalar_type(const std::string& dtype);
std::string python_dtype(const std::string& dtype);

}  // namespace kf::exporter
