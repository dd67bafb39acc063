#include "eval/worker/dataset.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "gpu/check.hpp"

namespace kf {

namespace {

size_t checked_count(const BufferSpec& b, const Scope& scope) {
  const int64_t n = b.count.eval_int(scope);
  if (n < 0) throw ExprError("buffer " + b.name + ": negative element count " + std::to_string(n));
  return static_cast<size_t>(n);
}

bool named_in(const std::vector<ArgSpec>& args, const std::string& name) {
  for (const ArgSpec& a : args)
    if ((a.kind == ArgSpec::Kind::Buffer || a.kind == ArgSpec::Kind::TensorMap) && a.buffer == name) return true;
  return false;
}

const BufferSlot& slot_named(const std::vector<BufferSlot>& slots, const std::string& name) {
  for (const BufferSlot& s : slots)
    if (s.spec->name == name) return s;
  throw ExprError("argument names unknown buffer '" + name + "'");
}

std::vector<int64_t> eval_ints(const std::vector<Expr>& exprs, const Scope& scope) {
  std::vector<int64_t> out;
  for (const Expr& e : exprs) out.push_back(e.eval_int(scope));
  return out;
}

// Checks and encodes a tensor_map argument over its buffer's working copy.
void pack_tensor_map(TensorMapBytes& out, const ArgSpec& a, size_t index, const BufferSlot& s, const Scope& scope) {
  const TensorMapGeometry g = tensor_map_geometry(tensor_map_what(index, a.buffer), s.dtype, s.count,
                                                  eval_ints(a.dims, scope), eval_ints(a.box, scope), a.swizzle);
  check_tensor_map_address(g, reinterpret_cast<uintptr_t>(s.work.get()));
  encode_tensor_map(out, g, s.work.get());
}

// A CudaError whose message ends in a hint on its likely cause; caught as any CudaError.
class HintedCudaError : public gpu::CudaError {
 public:
  HintedCudaError(cudaError_t e, const std::string& call, const std::string& hint)
      : gpu::CudaError(e, call), text_(std::string(gpu::CudaError::what()) + " " + hint) {}
  const char* what() const noexcept override { return text_.c_str(); }

 private:
  std::string text_;
};

}  // namespace

DataSet::DataSet(const Family& f, const Shape& shape, double input_scale, uint64_t seed, const DeviceLimits& dev,
                 const gpu::Stream& stream)
    : stream_(stream), shape_(shape) {
  const Scope scope = make_reference_scope(f, shape, dev);
  for (const BufferSpec& b : f.buffers) {
    BufferSlot slot;
    slot.spec = &b;
    slot.dtype = dtype_from_string(b.dtype.eval_string(scope));
    if (b.role != BufferRole::Scratch) {
      slot.count = checked_count(b, scope);
      slot.work = GuardedBuffer(slot.count * dtype_size(slot.dtype), stream);
    }
    // An output initialised from a file starts every launch from its contents instead of NaN.
    if (b.role == BufferRole::Input || (b.role == BufferRole::Output && !b.init.file.empty())) {
      auto host = b.init.file.empty()
                      ? random_fill(slot.dtype, slot.count, b.init.lo, b.init.hi, input_scale, seed, b.name)
                      : read_raw_file(b.init.file.string(), slot.dtype, slot.count);
      slot.pristine = gpu::DeviceBuffer(host.size());
      slot.pristine.upload(host.data(), host.size(), stream);
      stream.synchronize();
      slot.pristine_host = std::move(host);
    }
    slots_.push_back(std::move(slot));
  }
}

void DataSet::prepare(const std::vector<ArgSpec>& args, const Scope& scope, bool zero_scratch) {
  for (BufferSlot& s : slots_) {
    switch (s.spec->role) {
      case BufferRole::Input:
        s.work.copy_from(s.pristine, s.pristine.bytes(), stream_);
        break;
      case BufferRole::Output:
        if (s.pristine.bytes())  // init.file: the given contents
          s.work.copy_from(s.pristine, s.pristine.bytes(), stream_);
        else
          s.work.fill(0xFF, stream_);  // all-ones bytes are NaN in f16, bf16 and f32
        break;
      case BufferRole::Scratch: {
        if (!named_in(args, s.spec->name)) break;
        s.count = checked_count(*s.spec, scope);
        const size_t bytes = s.count * dtype_size(s.dtype);
        if (bytes > s.work.bytes() || !s.work.get()) {
          s.work = GuardedBuffer(bytes, stream_);
          s.work.fill(0, stream_);
        } else if (zero_scratch) {
          s.work.fill(0, stream_);
        }
        break;
      }
    }
  }
}

ArgPack DataSet::pack(const std::vector<ArgSpec>& args, const Scope& scope) const {
  ArgPack p;
  p.slots.resize(args.size(), 0);
  size_t maps = 0;
  for (const ArgSpec& a : args) maps += a.kind == ArgSpec::Kind::TensorMap;
  p.maps.resize(maps);
  for (size_t i = 0, m = 0; i < args.size(); ++i) {
    const ArgSpec& a = args[i];
    void* dst = &p.slots[i];
    switch (a.kind) {
      case ArgSpec::Kind::Buffer: {
        void* ptr = slot_named(slots_, a.buffer).work.get();
        std::memcpy(dst, &ptr, sizeof ptr);
        break;
      }
      case ArgSpec::Kind::I32: {
        const int64_t v = a.value.eval_int(scope);
        if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
          throw ExprError("i32 argument '" + a.value.text() + "' = " + std::to_string(v) + " does not fit");
        const auto v32 = static_cast<int32_t>(v);
        std::memcpy(dst, &v32, sizeof v32);
        break;
      }
      case ArgSpec::Kind::I64: {
        const int64_t v = a.value.eval_int(scope);
        std::memcpy(dst, &v, sizeof v);
        break;
      }
      case ArgSpec::Kind::F32: {
        const auto v = static_cast<float>(a.value.eval_double(scope));
        std::memcpy(dst, &v, sizeof v);
        break;
      }
      case ArgSpec::Kind::TensorMap:
        pack_tensor_map(p.maps[m++], a, i, slot_named(slots_, a.buffer), scope);
        break;
    }
  }
  // The launch copies each parameter from where its pointer points: a map's 128 bytes from
  // its own storage, anything else from its slot.
  for (size_t i = 0, m = 0; i < args.size(); ++i)
    p.ptrs.push_back(args[i].kind == ArgSpec::Kind::TensorMap ? static_cast<void*>(&p.maps[m++])
                                                               : static_cast<void*>(&p.slots[i]));
  return p;
}

std::vector<float> DataSet::read_output(size_t i) const {
  const BufferSlot& s = slots_.at(i);
  const size_t bytes = s.count * dtype_size(s.dtype);
  std::vector<unsigned char> host(bytes);
  s.work.download(host.data(), bytes, stream_);
  stream_.synchronize();
  return to_floats(s.dtype, host.data(), s.count);
}

std::optional<std::string> DataSet::check_integrity(const std::string& where) {
  for (BufferSlot& s : slots_)
    if (auto damage = s.work.check_guards(s.spec->name, dtype_size(s.dtype), stream_)) return *damage + " on " + where;
  std::vector<unsigned char> seen;
  for (BufferSlot& s : slots_) {
    if (s.spec->role != BufferRole::Input) continue;
    seen.resize(s.pristine_host.size());
    s.work.download(seen.data(), seen.size(), stream_);
    stream_.synchronize();
    if (auto d = find_damage(seen.data(), s.pristine_host.data(), seen.size())) {
      // Restored by the next prepare(), like every input.
      return describe_input_change(*d, s.spec->name, seen.size(), dtype_size(s.dtype)) + " on " + where;
    }
  }
  return std::nullopt;
}

std::optional<std::string> DataSet::run_reference(cudaKernel_t ref, const gpu::LaunchDims& dims,
                                                  const ArgPack& args, const DeviceLimits&) {
  if (auto err = launch_and_wait(ref, dims, args, stream_)) return "reference: " + *err;
  if (auto err = check_integrity("shape " + to_string(shape_))) return "reference: " + *err;
  for (size_t i = 0; i < slots_.size(); ++i) {
    const BufferSpec& b = *slots_[i].spec;
    if (b.role != BufferRole::Output || !b.compare) continue;
    if (b.expected.empty()) {
      slots_[i].reference = read_output(i);
    } else {
      try {
        const auto bytes = read_raw_file(b.expected.string(), slots_[i].dtype, slots_[i].count);
        slots_[i].reference = to_floats(slots_[i].dtype, bytes.data(), slots_[i].count);
      } catch (const std::runtime_error& e) {
        return std::string("expected values of output ") + b.name + ": " + e.what();
      }
    }
    size_t bad = 0;
    for (float v : slots_[i].reference) bad += !std::isfinite(v);
    if (bad)
      return (b.expected.empty() ? "reference: output " : "expected values of output ") + b.name + " has " +
             std::to_string(bad) + " NaN/Inf elements (unwritten or overflowing) on shape " + to_string(shape_);
  }
  return std::nullopt;
}

size_t DataSet::device_bytes() const {
  size_t n = 0;
  for (const BufferSlot& s : slots_) n += s.work.device_bytes() + s.pristine.bytes();
  return n;
}

size_t DataSet::host_bytes() const {
  size_t n = 0;
  for (const BufferSlot& s : slots_) n += s.pristine_host.size() + s.reference.size() * sizeof(float);
  return n;
}

std::string describe(const gpu::LaunchDims& d) {
  auto tri = [](const std::array<unsigned, 3>& v) {
    return "(" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) + ")";
  };
  return "grid " + tri(d.grid) + " block " + tri(d.block) + " smem " + std::to_string(d.smem);
}

std::optional<std::string> launch_and_wait(cudaKernel_t k, const gpu::LaunchDims& dims, const ArgPack& args,
                                           const gpu::Stream& stream) {
  // Returns the message for a non-sticky error (after clearing it); throws for a sticky one,
  // saying what it most likely means where that is known.
  auto refused = [&](cudaError_t e, const std::string& what) -> std::optional<std::string> {
    if (gpu::is_sticky(e)) {
      const std::string hint = fault_hint(e, guard_pages_in_use());
      if (!hint.empty()) throw HintedCudaError(e, what, hint);
      throw gpu::CudaError(e, what);
    }
    cudaGetLastError();
    return what + " (" + describe(dims) + "): " + gpu::error_text(e);
  };
  // Static shared memory counts against the default 48 KiB too, so any dynamic request
  // gets an explicit limit; beyond the device's opt-in maximum this is refused.
  if (dims.smem > 0) {
    if (cudaError_t e = gpu::set_max_dynamic_smem(k, dims.smem); e != cudaSuccess)
      return refused(e, "cudaFuncAttributeMaxDynamicSharedMemorySize");
  }
  auto* ptrs = const_cast<void**>(args.ptrs.data());
  if (cudaError_t e = gpu::launch(k, dims, ptrs, stream); e != cudaSuccess) return refused(e, "cudaLaunchKernel");
  if (cudaError_t e = cudaStreamSynchronize(stream.get()); e != cudaSuccess) return refused(e, "kernel execution");
  return std::nullopt;
}

}  // namespace kf
