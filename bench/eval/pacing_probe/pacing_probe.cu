// Does a kernel measured after an L2 flush take longer when the GPU idled longer before the flush?
//
// Issue 26, P3: the harness before the speed work (6a2bd48) left the GPU mostly idle for 1.25-1.91 ms
// between the candidate's call and the reference's L2 flush (a synchronisation per guard and
// checksum); the harness since the batched checks leaves 0.29-0.41 ms, and it measures the same
// cuBLASLt GEMM 0.1-1.2 % shorter. This probe changes nothing but what precedes the flush, in one
// process: for g ms the host waits with the GPU idle ("idle"), or ticks it with tiny kernels and a
// synchronisation each ("ticks"), or does what each of 6a2bd48's checks did: a few bytes from the
// default stream-ordered pool (cudaMallocAsync), a copy in, a tiny kernel, a copy out,
// cudaFreeAsync, a synchronisation ("pool": the pool's default release threshold, 0, gives the
// memory back to the driver at each synchronisation), the same from a pool that keeps its memory
// ("pool_kept"), or cudaMalloc/cudaFree ("malloc"); the three allocating kinds do at least one
// cycle. Then it flushes L2 as the harness does (persisting lines reset, a memset of twice the
// L2), synchronises, and times one kernel between two events. Gaps, kinds and kernels are
// interleaved in a shuffled order each round (fixed seed), so drift falls on all alike.
//
// Kernels: the GEMM task's cuBLASLt GEMM (bf16 TN, fp32 compute, M 8192, N 7168, K 5120; the
// heuristic's first algorithm), a compute-bound FMA loop of about the same length (no memory
// traffic: clock alone), and a clock probe that reads the SM clock against the global timer in 20
// windows of 10 us right after the flush (the ramp, if there is one).
//
// A standalone program, not part of the build: bench/eval/pacing_probe.sh compiles it with the GPU
// host's nvcc. Output: one line per sample (samples.tsv) and a summary on stdout.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "pacing_probe: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)
#define CHECK_LT(x)                                                                          \
  do {                                                                                       \
    cublasStatus_t s_ = (x);                                                                 \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                       \
      std::fprintf(stderr, "pacing_probe: %s: status %d (line %d)\n", #x, (int)s_, __LINE__); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

namespace {

constexpr int k_windows = 20;

__global__ void fill_bf16(__nv_bfloat16* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    p[i] = __float2bfloat16(((h & 0xFFFF) / 65535.0f - 0.5f));
  }
}

__global__ void fma_loop(float* out, int iters) {
  float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 1e-4f;
  for (int i = 0; i < iters; ++i) {
    a = fmaf(a, b, c);
    b = fmaf(b, 0.99999f, c);
  }
  if (a == 12345.f) out[0] = a + b;  // never true; keeps the loop
}

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One thread: SM cycles per global-timer microsecond in consecutive 10 us windows.
__global__ void clock_windows(float* mhz) {
  for (int w = 0; w < k_windows; ++w) {
    unsigned long long t0 = global_ns();
    long long c0 = clock64();
    unsigned long long t1;
    do t1 = global_ns(); while (t1 - t0 < 10000);
    long long c1 = clock64();
    mhz[w] = float(double(c1 - c0) / double(t1 - t0) * 1000.0);
  }
}

__global__ void tick(unsigned long long* p) { p[0] += 1; }

struct gemm {
  cublasLtHandle_t handle{};
  cublasLtMatmulDesc_t op{};
  cublasLtMatrixLayout_t la{}, lb{}, lc{};
  cublasLtMatmulAlgo_t algo{};
  void* workspace = nullptr;
  size_t workspace_bytes = 32u << 20;
  __nv_bfloat16 *A = nullptr, *B = nullptr, *C = nullptr;
  int m = 8192, n = 7168, k = 5120;

  void create(cudaStream_t s) {
    CHECK(cudaMalloc(&A, size_t(m) * k * 2));
    CHECK(cudaMalloc(&B, size_t(n) * k * 2));
    CHECK(cudaMalloc(&C, size_t(m) * n * 2));
    CHECK(cudaMalloc(&workspace, workspace_bytes));
    fill_bf16<<<1024, 256, 0, s>>>(A, size_t(m) * k, 1);
    fill_bf16<<<1024, 256, 0, s>>>(B, size_t(n) * k, 2);
    CHECK_LT(cublasLtCreate(&handle));
    CHECK_LT(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CHECK_LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CHECK_LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    // Column-major view of row-major C = A B^T: C^T (N x M) = B (K x N)^T * A^T (K x M).
    CHECK_LT(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, k, n, k));
    CHECK_LT(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, m, k));
    CHECK_LT(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, n, m, n));
    cublasLtMatmulPreference_t pref;
    CHECK_LT(cublasLtMatmulPreferenceCreate(&pref));
    CHECK_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                  sizeof workspace_bytes));
    cublasLtMatmulHeuristicResult_t r{};
    int found = 0;
    CHECK_LT(cublasLtMatmulAlgoGetHeuristic(handle, op, la, lb, lc, lc, pref, 1, &r, &found));
    if (found < 1) {
      std::fprintf(stderr, "pacing_probe: cuBLASLt found no algorithm\n");
      std::exit(1);
    }
    algo = r.algo;
    cublasLtMatmulPreferenceDestroy(pref);
  }
  void run(cudaStream_t s) {
    float alpha = 1, beta = 0;
    CHECK_LT(cublasLtMatmul(handle, op, &alpha, B, la, A, lb, &beta, C, lc, C, lc, &algo, workspace,
                            workspace_bytes, s));
  }
};

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 120;
  const char* samples_path = argc > 2 ? argv[2] : "samples.tsv";
  if (rounds < 1 || rounds > 100000) {
    std::fprintf(stderr, "pacing_probe: rounds must be 1-100000, got '%s'\n", argv[1]);
    return 2;
  }
  CHECK(cudaSetDeviceFlags(cudaDeviceScheduleSpin));  // as the harness waits
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int l2 = 0;
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  size_t flush_bytes = std::max<size_t>(2 * size_t(l2), 64u << 20);
  void* flush_buf;
  CHECK(cudaMalloc(&flush_buf, flush_bytes));
  (void)cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
  gemm g;
  g.create(s);
  float* fma_out;
  float* mhz_dev;
  unsigned long long* tick_dev;
  CHECK(cudaMalloc(&fma_out, 4));
  CHECK(cudaMalloc(&mhz_dev, k_windows * sizeof(float)));
  CHECK(cudaMalloc(&tick_dev, sizeof *tick_dev));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));

  // The FMA loop's length: about the GEMM's, found once on a busy GPU.
  auto time_once = [&](auto&& launch) {
    CHECK(cudaEventRecord(e0, s));
    launch();
    CHECK(cudaEventRecord(e1, s));
    CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    return double(ms);
  };
  for (int i = 0; i < 20; ++i) time_once([&] { g.run(s); });
  double gemm_ms = time_once([&] { g.run(s); });
  int fma_blocks = prop.multiProcessorCount * 4, iters = 20000;
  double fma_ms = time_once([&] { fma_loop<<<fma_blocks, 256, 0, s>>>(fma_out, iters); });
  iters = std::max(1000, int(iters * gemm_ms / std::max(fma_ms, 1e-3)));
  for (int i = 0; i < 5; ++i) time_once([&] { fma_loop<<<fma_blocks, 256, 0, s>>>(fma_out, iters); });

  const std::vector<double> gaps = {0, 0.1, 0.3, 0.6, 1.5, 3.0};
  const std::vector<std::string> kernels = {"cublaslt_gemm", "fma_loop", "clock_probe"};
  const std::vector<std::string> kinds = {"idle", "ticks", "pool", "pool_kept", "malloc"};
  cudaMemPool_t default_pool, kept_pool;
  CHECK(cudaDeviceGetDefaultMemPool(&default_pool, 0));
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  CHECK(cudaMemPoolCreate(&kept_pool, &props));
  uint64_t keep = UINT64_MAX;
  CHECK(cudaMemPoolSetAttribute(kept_pool, cudaMemPoolAttrReleaseThreshold, &keep));
  // One of 6a2bd48's device checks (check_bytes, checksum, compare): allocate, copy in, a kernel,
  // copy out, free, synchronise.
  auto check_cycle = [&](const std::string& kind) {
    unsigned long long* d = nullptr;
    unsigned long long host[2] = {0, ~0ull};
    if (kind == "malloc")
      CHECK(cudaMalloc(reinterpret_cast<void**>(&d), sizeof host));
    else
      CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&d), sizeof host, kind == "pool" ? default_pool : kept_pool, s));
    CHECK(cudaMemcpyAsync(d, host, sizeof host, cudaMemcpyHostToDevice, s));
    tick<<<1, 1, 0, s>>>(d);
    CHECK(cudaMemcpyAsync(host, d, sizeof host, cudaMemcpyDeviceToHost, s));
    if (kind == "malloc") {
      CHECK(cudaStreamSynchronize(s));
      CHECK(cudaFree(d));
    } else {
      CHECK(cudaFreeAsync(d, s));
    }
    CHECK(cudaStreamSynchronize(s));
  };
  struct cell {
    int kernel, kind;
    double gap;
  };
  std::vector<cell> cells;
  for (int k = 0; k < int(kernels.size()); ++k)
    for (int d = 0; d < int(kinds.size()); ++d)
      for (double gap : gaps) cells.push_back({k, d, gap});
  FILE* out = std::fopen(samples_path, "w");
  if (!out) {
    std::fprintf(stderr, "pacing_probe: cannot write %s\n", samples_path);
    return 1;
  }
  std::fprintf(out, "round\tkernel\tgap_kind\tgap_ms\tkernel_ms");
  for (int w = 0; w < k_windows; ++w) std::fprintf(out, "\tmhz_w%d", w);
  std::fprintf(out, "\n");
  std::mt19937 rng(20261207);
  unsigned round_byte = 0;
  for (int round = 0; round < rounds; ++round) {
    std::shuffle(cells.begin(), cells.end(), rng);
    for (const auto& c : cells) {
      CHECK(cudaStreamSynchronize(s));
      double t0 = now_ms();
      const std::string& kind = kinds[c.kind];
      if (kind == "idle") {
        while (now_ms() - t0 < c.gap) {
        }
      } else if (kind == "ticks") {
        while (now_ms() - t0 < c.gap) {
          tick<<<1, 1, 0, s>>>(tick_dev);
          CHECK(cudaStreamSynchronize(s));
        }
      } else {
        do check_cycle(kind);
        while (now_ms() - t0 < c.gap);
      }
      (void)cudaCtxResetPersistingL2Cache();
      CHECK(cudaMemsetAsync(flush_buf, int(++round_byte & 0xFF), flush_bytes, s));
      CHECK(cudaStreamSynchronize(s));
      std::vector<float> mhz(k_windows, 0.f);
      double ms;
      if (kernels[c.kernel] == "cublaslt_gemm") {
        ms = time_once([&] { g.run(s); });
      } else if (kernels[c.kernel] == "fma_loop") {
        ms = time_once([&] { fma_loop<<<fma_blocks, 256, 0, s>>>(fma_out, iters); });
      } else {
        ms = time_once([&] { clock_windows<<<1, 1, 0, s>>>(mhz_dev); });
        CHECK(cudaMemcpy(mhz.data(), mhz_dev, k_windows * sizeof(float), cudaMemcpyDeviceToHost));
      }
      std::fprintf(out, "%d\t%s\t%s\t%.3f\t%.6f", round, kernels[c.kernel].c_str(), kinds[c.kind].c_str(), c.gap, ms);
      for (float m : mhz) std::fprintf(out, "\t%.1f", m);
      std::fprintf(out, "\n");
    }
  }
  std::fclose(out);
  std::printf("# pacing_probe: %s, %d rounds, cuBLASLt GEMM %.4f ms on a busy GPU, fma_loop %d iterations\n",
              prop.name, rounds, gemm_ms, iters);
  return 0;
}
