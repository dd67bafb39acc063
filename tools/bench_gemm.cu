// bench_gemm: times cuBLAS (cublasGemmEx, f16 in, f32 accumulate, f16 or f32 out) at M,N,K with
// CUDA-graph replay and prints the median and TFLOP/s. With --manifest DIR it also loads the
// cubin that `kforge export` wrote (DIR/manifest.json: entry, cubin, launch{grid,block,smem},
// args[{kind:buffer,name,dtype,count}|{kind:i32,value}|{kind:f32,value}|{kind:tensor_map,name,dims,box,
// strides,swizzle}]), times it the same way, and, when its buffers are named A, B and C, checks C against
// cuBLAS on the same inputs. A tensor map is encoded over the buffer it names, as kforge's worker does.
//
// Build (on the GPU node):
//   nvcc -O2 -std=c++17 -arch=sm_90 tools/bench_gemm.cu -lcublas -lcuda -o bench_gemm
// Run:
//   ./bench_gemm [--m 4096 --n 4096 --k 4096] [--out f16|f32] [--manifest DIR] [--json]
#include <fstream>
#include <sstream>

#include "bench_gemm_util.h"

using namespace bench;

static size_t dtype_size(const std::string& d) { return d == "f16" || d == "bf16" ? 2 : 4; }

int main(int argc, char** argv) {
  int M = 4096, N = 4096, K = 4096;
  bool out_f16 = true, json = false;
  std::string manifest_dir;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_gemm: %s needs a value\n", a.c_str());
        std::exit(1);
      }
      return argv[++i];
    };
    if (a == "--m") M = std::stoi(next());
    else if (a == "--n") N = std::stoi(next());
    else if (a == "--k") K = std::stoi(next());
    else if (a == "--out") out_f16 = next() == "f16";
    else if (a == "--manifest") manifest_dir = next();
    else if (a == "--json") json = true;
    else if (a == "--help" || a == "-h") {
      std::printf("usage: bench_gemm [--m M --n N --k K] [--out f16|f32] [--manifest DIR] [--json]\n");
      return 0;
    } else {
      std::fprintf(stderr, "bench_gemm: unknown argument %s\n", a.c_str());
      return 1;
    }
  }
  CK(cudaFree(0));  // creates the primary context, which the driver-API module below shares
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const double flops = 2.0 * M * N * K;

  __half *A, *B;
  void* C;
  CK(cudaMalloc(&A, (size_t)M * K * 2));
  CK(cudaMalloc(&B, (size_t)K * N * 2));
  CK(cudaMalloc(&C, (size_t)M * N * (out_f16 ? 2 : 4)));
  fill_uniform_f16(A, (size_t)M * K, 1);
  fill_uniform_f16(B, (size_t)K * N, 2);
  cublasHandle_t h;
  CKBLAS(cublasCreate(&h));
  Timing tb = time_graph([&](cudaStream_t s) { cublas_gemm(h, s, A, B, C, M, N, K, out_f16); });
  CK(cudaDeviceSynchronize());
  std::vector<float> cref = to_host(C, (size_t)M * N, out_f16);
  const double tf_blas = flops / (tb.median_ms * 1e-3) / 1e12;

  double tf_kernel = 0;
  Timing tk;
  Err err;
  bool checked = false;
  if (!manifest_dir.empty()) {
    std::ifstream f(manifest_dir + "/manifest.json");
    if (!f) {
      std::fprintf(stderr, "bench_gemm: cannot read %s/manifest.json\n", manifest_dir.c_str());
      return 1;
    }
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string text = ss.str();
    Json m = JsonParser(text).parse();
    std::ifstream cf(manifest_dir + "/" + m["cubin"].str, std::ios::binary);
    if (!cf) {
      std::fprintf(stderr, "bench_gemm: cannot read cubin %s\n", m["cubin"].str.c_str());
      return 1;
    }
    std::string cubin((std::istreambuf_iterator<char>(cf)), std::istreambuf_iterator<char>());
    CUmodule mod;
    CUfunction fn;
    CKDRV(cuModuleLoadData(&mod, cubin.data()));
    CKDRV(cuModuleGetFunction(&fn, mod, m["entry"].str.c_str()));
    const Json& L = m["launch"];
    unsigned grid[3], block[3];
    for (int d = 0; d < 3; ++d) {
      grid[d] = (unsigned)L["grid"].arr.at(d).num;
      block[d] = (unsigned)L["block"].arr.at(d).num;
    }
    const unsigned smem = (unsigned)L["smem"].num;
    if (smem > 48 * 1024)
      CKDRV(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem));
    // Arguments: buffers named A/B share cuBLAS's inputs; C gets its own output; others are random.
    std::vector<void*> ptrs;
    std::vector<int32_t> ints;
    std::vector<float> floats;
    const auto& args = m["args"].arr;
    ptrs.reserve(args.size());
    ints.reserve(args.size());
    floats.reserve(args.size());
    std::vector<CUtensorMap> maps;
    maps.reserve(args.size());
    std::map<std::string, void*> by_name;
    std::vector<void*> params;
    void* kC = nullptr;
    std::string c_dtype;
    size_t c_count = 0;
    uint64_t seed = 10;
    for (const Json& a : args) {
      const std::string kind = a["kind"].str;
      if (kind == "buffer") {
        const std::string name = a["name"].str, dt = a["dtype"].str;
        const size_t count = (size_t)a["count"].num;
        void* p = nullptr;
        if (name == "A" && dt == "f16" && count == (size_t)M * K) p = A;
        else if (name == "B" && dt == "f16" && count == (size_t)K * N) p = B;
        else {
          CK(cudaMalloc(&p, count * dtype_size(dt)));
          if (dt == "f16") fill_uniform_f16((__half*)p, count, seed++);
          else fill_uniform_f32((float*)p, count, seed++);
          if (name == "C") {
            kC = p;
            c_dtype = dt;
            c_count = count;
          }
        }
        ptrs.push_back(p);
        params.push_back(&ptrs.back());
        by_name[name] = p;
      } else if (kind == "i32") {
        ints.push_back((int32_t)a["value"].num);
        params.push_back(&ints.back());
      } else if (kind == "f32") {
        floats.push_back((float)a["value"].num);
        params.push_back(&floats.back());
      } else if (kind == "tensor_map") {
        // the buffer it views comes earlier in the argument list
        if (!by_name.count(a["name"].str) || a["dtype"].str != "f16") {
          std::fprintf(stderr, "bench_gemm: tensor map over %s: no f16 buffer of that name before it\n",
                       a["name"].str.c_str());
          return 1;
        }
        const cuuint32_t rank = (cuuint32_t)a["dims"].arr.size();
        cuuint64_t dims[5] = {1, 1, 1, 1, 1}, strides[4] = {0, 0, 0, 0};
        cuuint32_t box[5] = {1, 1, 1, 1, 1}, estrides[5] = {1, 1, 1, 1, 1};
        for (cuuint32_t d = 0; d < rank; ++d) {
          dims[d] = (cuuint64_t)a["dims"].arr.at(d).num;
          box[d] = (cuuint32_t)a["box"].arr.at(d).num;
          if (d + 1 < rank) strides[d] = (cuuint64_t)a["strides"].arr.at(d).num;
        }
        const int sw = (int)a["swizzle"].num;
        const CUtensorMapSwizzle swizzle = sw == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                           : sw == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                           : sw == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                      : CU_TENSOR_MAP_SWIZZLE_NONE;
        maps.emplace_back();
        CKDRV(cuTensorMapEncodeTiled(&maps.back(), CU_TENSOR_MAP_DATA_TYPE_FLOAT16, rank, by_name[a["name"].str], dims,
                                     strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
        params.push_back(&maps.back());
      } else {
        std::fprintf(stderr, "bench_gemm: unknown arg kind %s\n", kind.c_str());
        return 1;
      }
    }
    auto launch = [&](cudaStream_t s) {
      CKDRV(cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, (CUstream)s,
                           params.data(), nullptr));
    };
    tk = time_graph(launch);
    CK(cudaDeviceSynchronize());
    tf_kernel = flops / (tk.median_ms * 1e-3) / 1e12;
    if (kC && c_count == (size_t)M * N && (c_dtype == "f16") == out_f16) {
      err = compare(to_host(kC, c_count, out_f16), cref);
      checked = true;
    }
  }

  if (json) {
    std::printf("{\"device\":\"%s\",\"M\":%d,\"N\":%d,\"K\":%d,\"out\":\"%s\",\"cublas_ms\":%.5f,\"cublas_tflops\":%.1f",
                prop.name, M, N, K, out_f16 ? "f16" : "f32", tb.median_ms, tf_blas);
    if (!manifest_dir.empty()) {
      std::printf(",\"kernel_ms\":%.5f,\"kernel_tflops\":%.1f,\"ratio\":%.3f", tk.median_ms, tf_kernel,
                  tf_kernel / tf_blas);
      if (checked) std::printf(",\"max_abs_vs_cublas\":%.3g,\"rel_l2_vs_cublas\":%.3g,\"nonfinite\":%zu", err.max_abs,
                               err.rel_l2, err.nonfinite);
    }
    std::printf("}\n");
  } else {
    std::printf("device %s  M=%d N=%d K=%d out=%s\n", prop.name, M, N, K, out_f16 ? "f16" : "f32");
    std::printf("cublas  median %.4f ms (p10 %.4f, p90 %.4f)  %.1f TFLOP/s\n", tb.median_ms, tb.p10_ms, tb.p90_ms,
                tf_blas);
    if (!manifest_dir.empty()) {
      std::printf("kernel  median %.4f ms (p10 %.4f, p90 %.4f)  %.1f TFLOP/s  (%.2fx cuBLAS)\n", tk.median_ms,
                  tk.p10_ms, tk.p90_ms, tf_kernel, tf_kernel / tf_blas);
      if (checked)
        std::printf("kernel vs cuBLAS: max_abs %.3g rel_l2 %.3g nonfinite %zu\n", err.max_abs, err.rel_l2,
                    err.nonfinite);
    }
  }
  return 0;
}
