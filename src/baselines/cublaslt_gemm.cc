#include "baselines/cublaslt_gemm.h"

#include <cublasLt.h>

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "core/json_check.h"
#include "core/tuned_choice.h"
#include "gpu/common/cuda_check.h"

namespace ptxbench::gpu {
namespace {

constexpr std::size_t k_workspace_bytes = 32u << 20;
constexpr int k_requested_algos = 16;

#define PTXB_CUBLAS_CALL(call)                                                                           \
  do {                                                                                                   \
    cublasStatus_t s_ = (call);                                                                          \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                                                     \
      throw std::runtime_error(std::string(#call) + " failed: " + cublasLtGetStatusName(s_) + " (" +     \
                               cublasLtGetStatusString(s_) + ")");                                       \
  } while (0)

class cublaslt_gemm final : public baseline {
 public:
  cublaslt_gemm(int64_t m, int64_t n, int64_t k) : m_m(m), m_n(n), m_k(k) {
    PTXB_CUBLAS_CALL(cublasLtCreate(&m_handle));
    PTXB_CUDA_CALL(cudaMalloc(&m_workspace, k_workspace_bytes));
    // Row-major C = A·Bᵀ is column-major Cᵀ (N×M) = Bᵀᵀ... i.e. op(B_cm)=T (K×N → N×K) times A_cm (K×M):
    // the "TN" form with m=N, n=M, k=K.
    PTXB_CUBLAS_CALL(cublasLtMatmulDescCreate(&m_op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    PTXB_CUBLAS_CALL(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    PTXB_CUBLAS_CALL(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    PTXB_CUBLAS_CALL(cublasLtMatrixLayoutCreate(&m_a, CUDA_R_16BF, m_k, m_n, m_k));  // B as K×N, ld K
    PTXB_CUBLAS_CALL(cublasLtMatrixLayoutCreate(&m_b, CUDA_R_16BF, m_k, m_m, m_k));  // A as K×M, ld K
    PTXB_CUBLAS_CALL(cublasLtMatrixLayoutCreate(&m_c, CUDA_R_16BF, m_n, m_m, m_n));  // C as N×M, ld N
  }
  ~cublaslt_gemm() override {
    cublasLtMatrixLayoutDestroy(m_a);
    cublasLtMatrixLayoutDestroy(m_b);
    cublasLtMatrixLayoutDestroy(m_c);
    cublasLtMatmulDescDestroy(m_op);
    cudaFree(m_workspace);
    cublasLtDestroy(m_handle);
  }

  std::vector<cublasLtMatmulHeuristicResult_t> heuristics() {
    cublasLtMatmulPreference_t pref;
    PTXB_CUBLAS_CALL(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws = k_workspace_bytes;
    PTXB_CUBLAS_CALL(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    std::vector<cublasLtMatmulHeuristicResult_t> results(k_requested_algos);
    int returned = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(m_handle, m_op, m_a, m_b, m_c, m_c, pref, k_requested_algos,
                                                       results.data(), &returned);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string("cuBLASLt heuristic: ") + cublasLtGetStatusString(st));
    results.resize(static_cast<std::size_t>(returned));
    results.erase(std::remove_if(results.begin(), results.end(),
                                 [](const auto& r) { return r.state != CUBLAS_STATUS_SUCCESS; }),
                  results.end());
    if (results.empty()) throw std::runtime_error("cuBLASLt returned no algorithm for this GEMM");
    return results;
  }

  void enqueue(const cublasLtMatmulAlgo_t& algo, const void* A, const void* B, void* C, cudaStream_t s) {
    float alpha = 1.f, beta = 0.f;
    PTXB_CUBLAS_CALL(cublasLtMatmul(m_handle, m_op, &alpha, B, m_a, A, m_b, &beta, C, m_c, C, m_c, &algo, m_workspace,
                                    k_workspace_bytes, s));
  }

  // Times every heuristic candidate (median of 5 after 2 warm-ups, events) and keeps the fastest.
  void autotune(const void* A, const void* B, void* C, cudaStream_t s) {
    auto cands = heuristics();
    cudaEvent_t e0, e1;
    PTXB_CUDA_CALL(cudaEventCreate(&e0));
    PTXB_CUDA_CALL(cudaEventCreate(&e1));
    float best = 1e30f;
    for (std::size_t i = 0; i < cands.size(); ++i) {
      std::vector<float> t;
      try {
        for (int w = 0; w < 2; ++w) enqueue(cands[i].algo, A, B, C, s);
        for (int r = 0; r < 5; ++r) {
          PTXB_CUDA_CALL(cudaEventRecord(e0, s));
          enqueue(cands[i].algo, A, B, C, s);
          PTXB_CUDA_CALL(cudaEventRecord(e1, s));
          PTXB_CUDA_CALL(cudaEventSynchronize(e1));
          float ms = 0;
          PTXB_CUDA_CALL(cudaEventElapsedTime(&ms, e0, e1));
          t.push_back(ms);
        }
      } catch (const std::exception&) {
        continue;  // an algorithm that fails to run is simply not a candidate
      }
      std::sort(t.begin(), t.end());
      if (t[t.size() / 2] < best) {
        best = t[t.size() / 2];
        m_algo = cands[i].algo;
        m_algo_index = static_cast<int>(i);
      }
    }
    m_candidates = static_cast<int>(cands.size());
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    if (m_algo_index < 0) throw std::runtime_error("no cuBLASLt algorithm ran for this GEMM");
  }

  void set_algo(const cublasLtMatmulAlgo_t& a, int index, int candidates) {
    m_algo = a;
    m_algo_index = index;
    m_candidates = candidates;
  }
  void set_from_cache(bool from_cache) { m_from_cache = from_cache; }
  const cublasLtMatmulAlgo_t& algo() const { return m_algo; }
  int algo_index() const { return m_algo_index; }
  int candidates() const { return m_candidates; }

  std::string description() const override {
    int algo_id = 0;
    std::size_t written = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&m_algo, CUBLASLT_ALGO_CONFIG_ID, &algo_id, sizeof algo_id, &written);
    std::size_t v = cublasLtGetVersion();
    return fmt::format("cuBLASLt {}.{}.{} bf16 TN GEMM, fp32 compute, 32 MiB workspace, algo id {} (heuristic #{} of {}, {})",
                       v / 10000, (v / 100) % 100, v % 100, algo_id, m_algo_index, m_candidates,
                       m_from_cache ? "autotuned earlier, from the cache" : "autotuned now");
  }

  void run(const std::vector<device_tensor>& in, const std::vector<device_tensor>& out, cudaStream_t s) override {
    enqueue(m_algo, in.at(0).data, in.at(1).data, out.at(0).data, s);
  }

 private:
  int64_t m_m, m_n, m_k;
  cublasLtHandle_t m_handle = nullptr;
  cublasLtMatmulDesc_t m_op = nullptr;
  cublasLtMatrixLayout_t m_a = nullptr, m_b = nullptr, m_c = nullptr;
  void* m_workspace = nullptr;
  cublasLtMatmulAlgo_t m_algo{};
  int m_algo_index = -1, m_candidates = 0;
  bool m_from_cache = false;
};

std::string algo_hex(const cublasLtMatmulAlgo_t& a) {
  std::string out;
  const auto* p = reinterpret_cast<const unsigned char*>(&a);
  for (std::size_t i = 0; i < sizeof a; ++i) out += fmt::format("{:02x}", p[i]);
  return out;
}

bool algo_from_hex(const std::string& hex, cublasLtMatmulAlgo_t& a) {
  if (hex.size() != 2 * sizeof a) return false;
  auto* p = reinterpret_cast<unsigned char*>(&a);
  for (std::size_t i = 0; i < sizeof a; ++i) {
    const std::string byte = hex.substr(2 * i, 2);
    if (byte.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) return false;
    p[i] = static_cast<unsigned char>(std::stoi(byte, nullptr, 16));
  }
  return true;
}

}  // namespace

result<std::unique_ptr<baseline>> make_cublaslt_gemm(const baseline_request& req, const std::vector<device_tensor>& in,
                                                     const std::vector<device_tensor>& out, cudaStream_t s,
                                                     const std::filesystem::path& cache_dir) {
  try {
    int64_t m = req.axes.at("M"), n = req.axes.at("N"), k = req.axes.at("K");
    auto g = std::make_unique<cublaslt_gemm>(m, n, k);
    cudaDeviceProp prop{};
    PTXB_CUDA_CALL(cudaGetDeviceProperties(&prop, req.device));
    std::string key = fmt::format("cublaslt_gemm-{}-{}-M{}-N{}-K{}", prop.name, cublasLtGetVersion(), m, n, k);
    for (auto& c : key) if (c == ' ' || c == '/') c = '_';
    // Remembered per host (core/tuned_choice.h says why): every process uses the first tuning's algorithm.
    auto use = [&](const ordered_json& j) -> status {
      cublasLtMatmulAlgo_t a{};
      if (!algo_from_hex(j.value("algo", ""), a)) return make_error("no algorithm in it");
      g->set_algo(a, j.value("index", 0), j.value("candidates", 0));
      try {
        g->run(in, out, s);  // a stale entry (other cuBLAS build) must still run
        PTXB_CUDA_CALL(cudaStreamSynchronize(s));
      } catch (const std::exception& e) {
        cudaGetLastError();
        return make_error(e.what());
      }
      return ok();
    };
    auto tune = [&]() -> result<ordered_json> {
      g->autotune(in.at(0).data, in.at(1).data, out.at(0).data, s);
      return ordered_json{{"algo", algo_hex(g->algo())}, {"index", g->algo_index()}, {"candidates", g->candidates()}};
    };
    auto chosen = remember_tuned_choice(cache_dir, key, use, tune);
    if (!chosen) return chosen.err().with_context("cuBLASLt GEMM baseline");
    g->set_from_cache(chosen->from_cache);
    return std::unique_ptr<baseline>(std::move(g));
  } catch (const std::exception& e) {
    return make_error(std::string("cuBLASLt GEMM baseline: ") + e.what());
  }
}

}  // namespace ptxbench::gpu
