#include "export/torch_gen.hpp"

#include <sstream>

#include "export/cxx_expr.hpp"
#include "export/launcher_abi.hpp"

namespace kf::exporter {

namespace {

bool is_int_dim(const TorchDim& d) { return !d.spec->is_enum; }

// The op's C++ parameters: inputs, then the dims the schema takes as arguments.
std::string parameters(const TorchOpModel& op) {
  std::string out;
  for (const auto& t : op.buffers)
    if (t.role == BufferRole::Input) out += (out.empty() ? "" : ", ") + std::string("const at::Tensor& t_") + t.name;
  for (const auto& d : op.dims) {
    if (d.source != TorchDim::Source::Argument) continue;
    out += std::string(", ") + (d.spec->is_enum ? "c10::string_view a_" : d.is_bool ? "bool a_" : "int64_t a_") + d.spec->name;
  }
  return out;
}

std::string call_arguments(const TorchOpModel& op) {
  std::string out;
  for (const auto& t : op.buffers)
    if (t.role == BufferRole::Input) out += (out.empty() ? "" : ", ") + std::string("t_") + t.name;
  for (const auto& d : op.dims)
    if (d.source == TorchDim::Source::Argument) out += ", a_" + d.spec->name;
  return out;
}

std::string return_type(const TorchOpModel& op) {
  std::string outs;
  int n = 0;
  for (const auto& t : op.buffers)
    if (t.role == BufferRole::Output) {
      outs += (n++ ? ", " : "") + std::string("at::Tensor");
    }
  return n == 1 ? outs : "std::tuple<" + outs + ">";
}

std::string shape_list(const TorchTensor& t) {
  std::string out;
  for (const auto& d : t.dims) out += (out.empty() ? "" : ", ") + d;
  return "[" + out + "]";
}

// kfx_check: everything about the call that holds on any device (Meta included): dims counts,
// sizes that must agree, dtypes, enum values. Sizes stay symbolic (c10::SymInt) for torch.compile.
std::string check_function(const TorchOpModel& op) {
  std::ostringstream o;
  o << "struct kfx_shape {\n";
  for (const auto& d : op.dims) o << "  " << (is_int_dim(d) ? "c10::SymInt " : "std::string ") << d.spec->name << ";\n";
  o << "};\n\n";
  // Sizes go into messages as text: a concrete size as its number, a symbolic one (torch.compile) as such,
  // so no message streams a c10::SymInt.
  o << "std::string kfx_text(const c10::SymInt& v) {\n"
       "  const auto i = v.maybe_as_int();\n"
       "  return i ? std::to_string(*i) : std::string(\"(symbolic)\");\n}\n"
       "const std::string& kfx_text(const std::string& v) { return v; }\n\n";
  o << "std::string kfx_shape_text(const kfx_shape& s) {\n  std::ostringstream o;\n  o";
  for (size_t i = 0; i < op.dims.size(); ++i)
    o << " << " << c_string_literal((i ? "," : "") + op.dims[i].spec->name + "=") << " << kfx_text(s." << op.dims[i].spec->name
      << ")";
  o << ";\n  return o.str();\n}\n\n";

  o << "kfx_shape kfx_check(" << parameters(op) << ") {\n  kfx_shape s;\n";
  // Dims from the inputs (the first input having each one), or from the arguments.
  for (const auto& t : op.buffers) {
    if (t.role != BufferRole::Input) continue;
    o << "  TORCH_CHECK(t_" << t.name << ".dim() == " << t.dims.size() << ", kfx_op, \": " << t.name << " must have "
      << t.dims.size() << " dims " << shape_list(t) << ", got \", t_" << t.name << ".dim());\n";
  }
  for (const auto& d : op.dims) {
    const std::string& n = d.spec->name;
    if (d.source == TorchDim::Source::InputAxis)
      o << "  s." << n << " = t_" << d.tensor << ".sym_size(" << d.axis << ");\n";
    else if (d.source == TorchDim::Source::InputDtype)
      o << "  s." << n << " = kfx_dtype_name(t_" << d.tensor << ".scalar_type());\n";
    else if (d.spec->is_enum)
      o << "  s." << n << " = std::string(a_" << n << ".data(), a_" << n << ".size());\n";
    else
      o << "  s." << n << " = c10::SymInt(static_cast<int64_t>(a_" << n << "));\n";
    if (d.spec->is_enum) {
      std::string cond, names;
      for (const auto& c : d.spec->choices) {
        cond += (cond.empty() ? "" : " || ") + std::string("s.") + n + " == " + c_string_literal(c);
        names += (names.empty() ? "" : ", ") + c;
      }
      o << "  TORCH_CHECK(" << (cond.empty() ? "false" : cond) << ", kfx_op, \": " << n << " is '\", s." << n
        << ", \"'"
        << (d.source == TorchDim::Source::InputDtype ? " (the dtype of " + d.tensor + ")" : "") << "; the kernel takes "
        << names << "\");\n";
    }
  }
  // Every input's sizes and dtype against the dims (but the ones the dims were read from).
  const auto read_from = [&](const std::string& dim, const std::string& tensor, int axis) {
    for (const auto& d : op.dims)
      if (d.spec->name == dim) return d.tensor == tensor && (axis < 0 || d.axis == axis);
    return false;
  };
  for (const auto& t : op.buffers) {
    if (t.role != BufferRole::Input) continue;
    for (size_t a = 0; a < t.dims.size(); ++a)
      if (!read_from(t.dims[a], t.name, static_cast<int>(a)))
        o << "  TORCH_CHECK(t_" << t.name << ".sym_size(" << a << ") == s." << t.dims[a] << ", kfx_op, \": " << t.name
        << ".size(" << a << ") is \", kfx_text(t_" << t.name << ".sym_size(" << a << ")), \" but " << t.dims[a]
        << " is \", kfx_text(s." << t.dims[a] << "), \" (" << t.name << " is " << shape_list(t) << ")\");\n";
    if (!t.dtype_dim.empty()) {
      if (!read_from(t.dtype_dim, t.name, -1))
        o << "  TORCH_CHECK(kfx_dtype_name(t_" << t.name << ".scalar_type()) == s." << t.dtype_dim << ", kfx_op, \": "
        << t.name << " has dtype \", t_" << t.name << ".scalar_type(), \" but " << t.dtype_dim << " is \", s."
          << t.dtype_dim << ");\n";
    } else {
      o << "  TORCH_CHECK(t_" << t.name << ".scalar_type() == " << aten_scalar_type(t.dtype) << ", kfx_op, \": " << t.name
        << " must be " << python_dtype(t.dtype) << ", got \", t_" << t.name << ".scalar_type());\n";
    }
  }
  o << "  return s;\n}\n\n";
  return o.str();
}

std::string output_dtype(const TorchTensor& t) {
  return t.dtype_dim.empty() ? aten_scalar_type(t.dtype) : "kfx_scalar_type(s." + t.dtype_dim + ")";
}

std::string output_sizes(const TorchTensor& t, const std::string& prefix) {
  std::string out;
  for (const auto& d : t.dims) out += (out.empty() ? "" : ", ") + prefix + d;
  return "{" + out + "}";
}

std::string returned(const TorchOpModel& op) {
  std::string outs;
  int n = 0;
  for (const auto& t : op.buffers)
    if (t.role == BufferRole::Output) outs += (n++ ? ", " : "") + std::string("o_") + t.name;
  return n == 1 ? outs : "{" + outs + "}";
}

std::string meta_function(const TorchOpModel& op) {
  const TorchTensor& first = *op.first_input();
  std::ostringstream o;
  o << "// Meta: the outputs' shapes and dtypes only (torch.compile's fake tensors).\n"
    << return_type(op) << " kfx_meta(" << parameters(op) << ") {\n  const kfx_shape s = kfx_check(" << call_arguments(op)
    << ");\n";
  for (const auto& t : op.buffers) {
    if (t.role != BufferRole::Output) continue;
    std::string sizes;
    for (const auto& d : t.dims) sizes += (sizes.empty() ? "" : ", ") + std::string("s.") + d;
    o << "  at::Tensor o_" << t.name << " = at::empty_symint({" << sizes << "}, t_" << first.name
      << ".options().dtype(" << output_dtype(t) << "));\n";
  }
  o << "  return " << returned(op) << ";\n}\n\n";
  return o.str();
}

std::string cuda_function(const TorchOpModel& op) {
  const TorchTensor& first = *op.first_input();
  std::ostringstream o;
  o << "// CUDA: checks, outputs and workspace from torch's caching allocator, launch on the current\n"
       "// stream. No sync and no other allocation: a CUDA graph can capture it.\n"
    << return_type(op) << " kfx_cuda(" << parameters(op) << ") {\n  const kfx_shape s = kfx_check(" << call_arguments(op)
    << ");\n";
  for (const auto& t : op.buffers)
    if (t.role == BufferRole::Input)
      o << "  kfx_check_cuda(t_" << t.name << ", \"" << t.name << "\", t_" << first.name << ", \"" << first.name << "\");\n";
  o << "  const c10::cuda::CUDAGuard kfx_guard(t_" << first.name << ".device());\n";
  for (const auto& d : op.dims)
    if (is_int_dim(d)) o << "  const int64_t d_" << d.spec->name << " = s." << d.spec->name << ".expect_int();\n";
  for (const auto& t : op.buffers) {
    if (t.role != BufferRole::Output) continue;
    o << "  at::Tensor o_" << t.name << " = at::empty(" << output_sizes(t, "d_") << ", t_" << first.name
      << ".options().dtype(" << output_dtype(t) << "));\n";
  }
  std::string dims;
  for (const auto& d : op.dims) dims += ", " + (is_int_dim(d) ? "d_" + d.spec->name : "s." + d.spec->name + ".c_str()");
  if (op.scratch_count > 0) {
    o << "  // Scratch: one zeroed allocation (the kernels expect zeroed scratch; a reused block is not).\n"
      << "  size_t kfx_offsets[" << op.scratch_count << "];\n"
      << "  const size_t kfx_bytes = " << op.launcher << "_workspace_layout(" << dims.substr(2) << ", kfx_offsets);\n"
      << "  TORCH_CHECK(kfx_bytes != SIZE_MAX, kfx_op, \": shape \", kfx_shape_text(s), \" is not supported: \", kfx_supported);\n"
      << "  at::Tensor kfx_workspace = at::zeros({static_cast<int64_t>(kfx_bytes)}, t_" << first.name
      << ".options().dtype(at::kByte));\n"
      << "  char* kfx_base = static_cast<char*>(kfx_workspace.data_ptr());\n";
  }
  o << "  const cudaError_t kfx_err = " << op.launcher << "(";
  int scratch = 0;
  for (size_t i = 0; i < op.buffers.size(); ++i) {
    const TorchTensor& t = op.buffers[i];
    o << (i ? ", " : "");
    if (t.role == BufferRole::Scratch)
      o << "reinterpret_cast<" << t.pointer_type << ">(kfx_base + kfx_offsets[" << scratch++ << "])";
    else
      o << "static_cast<" << t.pointer_type << ">(" << (t.role == BufferRole::Input ? "t_" : "o_") << t.name
        << ".data_ptr())";
  }
  o << dims << ", at::cuda::getCurrentCUDAStream().stream());\n"
    << "  kfx_check_launch(kfx_err, s);\n  return " << returned(op) << ";\n}\n\n";
  return o.str();
}

const char* kHelpers = R"CXX(const char* kfx_dtype_name(at::ScalarType t) {
  switch (t) {
    case at::kHalf: return "f16";
    case at::kBFloat16: return "bf16";
    case at::kFloat: return "f32";
    case at::kDouble: return "f64";
    case at::kInt: return "i32";
    default: return "(no kforge dtype)";
  }
}

at::ScalarType kfx_scalar_type(const std::string& n) {
  if (n == "f16") return at::kHalf;
  if (n == "bf16") return at::kBFloat16;
  if (n == "f32") return at::kFloat;
  if (n == "f64") return at::kDouble;
  TORCH_CHECK(n == "i32", kfx_op, ": no torch dtype for '", n, "'");
  return at::kInt;
}

// The launcher refuses (cudaErrorInvalidDevicePointer) what these checks name first.
void kfx_check_cuda(const at::Tensor& t, const char* name, const at::Tensor& first, const char* first_name) {
  TORCH_CHECK(t.is_cuda(), kfx_op, ": ", name, " must be a CUDA tensor, got one on ", t.device());
  TORCH_CHECK(t.device() == first.device(), kfx_op, ": ", name, " is on ", t.device(), " but ", first_name, " on ",
              first.device());
  TORCH_CHECK(t.is_contiguous(), kfx_op, ": ", name, " must be contiguous (call .contiguous())");
  TORCH_CHECK(reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0, kfx_op, ": ", name,
              "'s data is not 16-byte aligned (a view with a storage offset?); pass a copy (.clone())");
}

)CXX";

}  // namespace

std::string generate_torch_op(const TorchOpModel& op, const std::string& header, const std::string& supported) {
  std::ostringstream o;
  o << "// " << op.op << "_op.cpp: generated by kforge " << KFORGE_VERSION << ". The export in the folder above as\n"
    << "// the torch custom op\n//   kforge::" << op.schema << "\n"
    << "// Build and load with load.py beside this file; then torch.ops.kforge." << op.op << "(...).\n"
    << "#include <ATen/ATen.h>\n#include <ATen/cuda/CUDAContext.h>\n#include <c10/cuda/CUDAGuard.h>\n"
    << "#include <torch/library.h>\n\n#include <cstdint>\n#include <sstream>\n#include <string>\n#include <tuple>\n\n"
    << "#include \"" << header << "\"\n\nnamespace {\n\n"
    << "constexpr const char* kfx_op = " << c_string_literal("kforge::" + op.op) << ";\n"
    << "constexpr const char* kfx_supported = " << c_string_literal(supported) << ";\n\n"
    << kHelpers << check_function(op);
  o << "void kfx_check_launch(cudaError_t e, const kfx_shape& s) {\n"
    << "  TORCH_CHECK(e != cudaErrorInvalidValue, kfx_op, \": shape \", kfx_shape_text(s),\n"
    << "              \" is not supported on this device by the exported kernel(s): \", kfx_supported);\n"
    << "  TORCH_CHECK(e != cudaErrorInvalidDevicePointer, kfx_op, \": a buffer is NULL or not "
    << kPointerAlignment << "-byte aligned\");\n"
    << "  TORCH_CHECK(e == cudaSuccess, kfx_op, \": the launch failed: \", cudaGetErrorString(e));\n}\n\n";
  o << meta_function(op) << cuda_function(op) << "}  // namespace\n\n";
  // A fragment, not TORCH_LIBRARY: exports of several families load into one process side by side.
  o << "TORCH_LIBRARY_FRAGMENT(kforge, m) { m.def(" << c_string_literal(op.schema) << "); }\n"
    << "TORCH_LIBRARY_IMPL(kforge, CUDA, m) { m.impl(" << c_string_literal(op.op) << ", &kfx_cuda); }\n"
    << "TORCH_LIBRARY_IMPL(kforge, Meta, m) { m.impl(" << c_string_literal(op.op) << ", &kfx_meta); }\n";
  return o.str();
}

namespace {

const char* kLoaderBody = R"PY(

def _nvcc():
    from torch.utils.cpp_extension import CUDA_HOME
    for cand in [os.path.join(CUDA_HOME, "bin", "nvcc") if CUDA_HOME else "", shutil.which("nvcc") or ""]:
        if cand and os.path.exists(cand):
            return cand
    raise RuntimeError("kforge torch op: nvcc not found (set CUDA_HOME or put nvcc on PATH)")


def _run(cmd, what, verbose):
    if verbose:
        print(" ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"kforge torch op: {what} failed ({r.returncode}):\n{(r.stderr or r.stdout)[-4000:]}")


def _newer(target, sources):
    return os.path.exists(target) and all(os.path.getmtime(target) >= os.path.getmtime(s) for s in sources)


def _objects(build_dir, verbose):
    """Each exported .cu compiled by nvcc for its own target (torch's nvcc flags would add others)."""
    nvcc, objects = None, []
    for source, flags in KERNELS:
        path = os.path.join(EXPORT, source)
        obj = os.path.join(build_dir, os.path.splitext(source)[0] + ".o")
        if not _newer(obj, [path, __file__]):
            nvcc = nvcc or _nvcc()
            _run([nvcc, "-O3", *flags, "-Xcompiler", "-fPIC", "-I", EXPORT, "-c", path, "-o", obj],
                 f"nvcc on {source}", verbose)
        objects.append(obj)
    return objects


def _paths(fn):
    try:
        return fn(device_type="cuda")
    except TypeError:  # torch before 2.6
        return fn(cuda=True)


def _link_without_ninja(source, objects, build_dir, verbose):
    """The same extension built by one compiler call (torch.utils.cpp_extension.load needs ninja)."""
    import torch
    from torch.utils import cpp_extension
    lib = os.path.join(build_dir, EXTENSION + ".so")
    if not _newer(lib, [source, *objects]):
        includes = _paths(cpp_extension.include_paths)
        with open(os.path.join(includes[0], "ATen", "ATen.h")) as f:
            std = "c++20" if "C++20 or later" in f.read() else "c++17"  # what this torch's headers need
        cmd = [os.environ.get("CXX", "c++"), "-O2", f"-std={std}", "-shared", "-fPIC",
               f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}", f"-I{EXPORT}"]
        cmd += [f"-I{p}" for p in includes]
        cmd += [source, *objects] + [f"-L{p}" for p in _paths(cpp_extension.library_paths)]
        cmd += ["-lc10", "-lc10_cuda", "-ltorch", "-ltorch_cpu", "-ltorch_cuda", "-lcudart", "-o", lib]
        _run(cmd, "building the op", verbose)
    return lib


def load(build_dir=None, verbose=False):
    """Builds the op once (later calls and processes reuse the build) and returns torch.ops.kforge.<op>."""
    import torch
    try:
        return getattr(torch.ops.kforge, OP)
    except (AttributeError, RuntimeError):
        pass
    from torch.utils import cpp_extension
    build_dir = os.path.abspath(build_dir or os.path.join(HERE, "build"))
    os.makedirs(build_dir, exist_ok=True)
    objects = _objects(build_dir, verbose)
    source = os.path.join(HERE, SOURCE)
    if cpp_extension.is_ninja_available():
        cpp_extension.load(name=EXTENSION, sources=[source], extra_include_paths=[EXPORT], extra_ldflags=objects,
                           with_cuda=True, is_python_module=False, build_directory=build_dir, verbose=verbose)
    else:
        torch.ops.load_library(_link_without_ninja(source, objects, build_dir, verbose))
    return getattr(torch.ops.kforge, OP)


if __name__ == "__main__":
    op = load(verbose="-v" in sys.argv)
    print(f"kforge::{SCHEMA} loaded as torch.ops.kforge.{OP}")
)PY";

std::string python_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + c_string_literal(s);
  return "[" + out + "]";
}

}  // namespace

std::string generate_torch_loader(const TorchOpModel& op,
                                  const std::vector<std::pair<std::string, std::vector<std::string>>>& kernels,
                                  const std::string& extension) {
  std::string example;
  for (const auto& t : op.buffers)
    if (t.role == BufferRole::Input) example += (example.empty() ? "" : ", ") + t.name;
  std::ostringstream o;
  o << "\"\"\"kforge::" << op.op << " as a torch custom op (generated by kforge " << KFORGE_VERSION << ").\n\n"
    << "    import sys; sys.path.insert(0, \"<this folder>\")\n"
    << "    import load; op = load.load()      # builds once into ./build, registers torch.ops.kforge." << op.op << "\n"
    << "    out = op(" << example << ")\n\n"
    << "Schema: kforge::" << op.schema << "\n"
    << "The export's .cu files are compiled by nvcc for the targets they were tuned for, the op by\n"
    << "torch.utils.cpp_extension.load (or, without ninja, by one compiler call with torch's paths).\n\"\"\"\n"
    << "import os\nimport shutil\nimport subprocess\nimport sys\n\n"
    << "HERE = os.path.dirname(os.path.abspath(__file__))\nEXPORT = os.path.dirname(HERE)\n"
    << "OP = " << c_string_literal(op.op) << "\nSCHEMA = " << c_string_literal(op.schema) << "\n"
    << "SOURCE = " << c_string_literal(op.op + "_op.cpp") << "\nEXTENSION = " << c_string_literal(extension) << "\n"
    << "KERNELS = [  # (source, nvcc flags): the CMakeLists.txt beside them builds them alike\n";
  for (const auto& [source, flags] : kernels) o << "    (" << c_string_literal(source) << ", " << python_list(flags) << "),\n";
  o << "]\n" << kLoaderBody;
  return o.str();
}

}  // namespace kf::exporter
