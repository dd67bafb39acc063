// Helpers for tools/bench_gemm.cu: error checks, graph-replay timing, a tiny JSON reader (enough for
// kforge's export manifest), f16 fills and error metrics.
#pragma once
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                             \
    }                                                                                           \
  } while (0)
#define CKDRV(x)                                                                               \
  do {                                                                                         \
    CUresult r_ = (x);                                                                         \
    if (r_ != CUDA_SUCCESS) {                                                                  \
      const char* s_ = nullptr;                                                                \
      cuGetErrorString(r_, &s_);                                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?");          \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)
#define CKBLAS(x)                                                                              \
  do {                                                                                         \
    cublasStatus_t s_ = (x);                                                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
      std::fprintf(stderr, "%s:%d: %s: cublas status %d\n", __FILE__, __LINE__, #x, (int)s_);  \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)

namespace bench {

struct Timing {
  double median_ms = 0, p10_ms = 0, p90_ms = 0;
  int reps = 0;
};

// Captures `per_graph` calls of `enqueue` into a CUDA graph, replays it `warmup` times, then `reps`
// times between events; returns per-call statistics over the replays.
inline Timing time_graph(const std::function<void(cudaStream_t)>& enqueue, int per_graph = 20, int warmup = 3,
                         int reps = 15) {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  enqueue(s);  // one eager call first: module load, lazy init
  CK(cudaStreamSynchronize(s));
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < per_graph; ++i) enqueue(s);
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  for (int i = 0; i < warmup; ++i) CK(cudaGraphLaunch(ge, s));
  CK(cudaStreamSynchronize(s));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(a, s));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms / per_graph);
  }
  std::sort(t.begin(), t.end());
  Timing r;
  r.reps = reps;
  r.median_ms = t[t.size() / 2];
  r.p10_ms = t[t.size() / 10];
  r.p90_ms = t[(t.size() * 9) / 10];
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  CK(cudaStreamDestroy(s));
  return r;
}

inline void fill_uniform_f16(__half* dev, size_t n, uint64_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<__half> h(n);
  for (auto& x : h) x = __float2half(d(rng));
  CK(cudaMemcpy(dev, h.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
}
inline void fill_uniform_f32(float* dev, size_t n, uint64_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> h(n);
  for (auto& x : h) x = d(rng);
  CK(cudaMemcpy(dev, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
}

// Reads n elements of an f16 (is_f16) or f32 device buffer into floats.
inline std::vector<float> to_host(const void* dev, size_t n, bool is_f16) {
  std::vector<float> out(n);
  if (is_f16) {
    std::vector<__half> h(n);
    CK(cudaMemcpy(h.data(), dev, n * 2, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; ++i) out[i] = __half2float(h[i]);
  } else {
    CK(cudaMemcpy(out.data(), dev, n * 4, cudaMemcpyDeviceToHost));
  }
  return out;
}

struct Err {
  double max_abs = 0, rel_l2 = 0;
  size_t nonfinite = 0;
};
inline Err compare(const std::vector<float>& got, const std::vector<float>& ref) {
  Err e;
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) {
      ++e.nonfinite;
      continue;
    }
    const double d = (double)got[i] - ref[i];
    e.max_abs = std::max(e.max_abs, std::fabs(d));
    num += d * d;
    den += (double)ref[i] * ref[i];
  }
  e.rel_l2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return e;
}

// C[M,N] = A[M,K] B[K,N], all row-major, through cuBLAS's column-major API: C^T = B^T A^T.
inline void cublas_gemm(cublasHandle_t h, cudaStream_t s, const __half* A, const __half* B, void* C, int M, int N,
                        int K, bool out_f16) {
  const float alpha = 1.f, beta = 0.f;
  CKBLAS(cublasSetStream(h, s));
  CKBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_16F, N, A, CUDA_R_16F, K, &beta, C,
                      out_f16 ? CUDA_R_16F : CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// ---- a minimal JSON reader (objects, arrays, strings without \u escapes, numbers, true/false/null) ----
struct Json {
  enum Kind { Null, Bool, Num, Str, Arr, Obj } kind = Null;
  double num = 0;
  bool b = false;
  std::string str;
  std::vector<Json> arr;
  std::map<std::string, Json> obj;
  const Json& operator[](const std::string& k) const {
    static const Json none;
    auto it = obj.find(k);
    return it == obj.end() ? none : it->second;
  }
  bool has(const std::string& k) const { return obj.count(k) != 0; }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& t) : t_(t) {}
  Json parse() {
    Json v = value();
    ws();
    if (p_ != t_.size()) fail("trailing text");
    return v;
  }

 private:
  const std::string& t_;
  size_t p_ = 0;
  [[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "json: %s at offset %zu\n", what, p_);
    std::exit(2);
  }
  void ws() {
    while (p_ < t_.size() && std::isspace((unsigned char)t_[p_])) ++p_;
  }
  char peek() {
    ws();
    return p_ < t_.size() ? t_[p_] : '\0';
  }
  void expect(char c) {
    if (peek() != c) fail("unexpected character");
    ++p_;
  }
  std::string string() {
    expect('"');
    std::string s;
    while (p_ < t_.size() && t_[p_] != '"') {
      char c = t_[p_++];
      if (c == '\\' && p_ < t_.size()) {
        char e = t_[p_++];
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
      }
      s += c;
    }
    expect('"');
    return s;
  }
  Json value() {
    Json v;
    char c = peek();
    if (c == '{') {
      ++p_;
      v.kind = Json::Obj;
      if (peek() == '}') {
        ++p_;
        return v;
      }
      for (;;) {
        std::string k = string();
        expect(':');
        v.obj[k] = value();
        if (peek() == ',') {
          ++p_;
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      ++p_;
      v.kind = Json::Arr;
      if (peek() == ']') {
        ++p_;
        return v;
      }
      for (;;) {
        v.arr.push_back(value());
        if (peek() == ',') {
          ++p_;
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind = Json::Str;
      v.str = string();
      return v;
    }
    if (t_.compare(p_, 4, "true") == 0) { p_ += 4; v.kind = Json::Bool; v.b = true; return v; }
    if (t_.compare(p_, 5, "false") == 0) { p_ += 5; v.kind = Json::Bool; return v; }
    if (t_.compare(p_, 4, "null") == 0) { p_ += 4; return v; }
    char* end = nullptr;
    v.num = std::strtod(t_.c_str() + p_, &end);
    if (end == t_.c_str() + p_) fail("bad value");
    p_ = end - t_.c_str();
    v.kind = Json::Num;
    return v;
  }
};

}  // namespace bench
