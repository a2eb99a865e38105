// Kernel self-test: runs every PTXBench example candidate (examples/**.cu, built as shared objects by
// bench/eval/kernel_selftest.sh) through the kernel ABI on a Hopper GPU, at the headline shapes, and checks
// its outcome against what the example is meant to demonstrate.
//
// Each example runs in its own forked child (the parent never touches CUDA), so a crash, a hang or a
// sticky CUDA error only ends that child; the parent kills a child that exceeds its timeout. The child
// generates inputs on the GPU (fixed seeds), fills outputs with NaN behind a guard region, calls the
// entry point once, synchronises, checks guards, inputs and the result (allclose atol = rtol = 1e-2
// against a plain fp32 reference, itself spot-checked against double-precision CPU math), then times
// the call (median of 10 after 3 warm-ups). Usage:
//   kernel_selftest --lib-dir DIR [--only NAME[,NAME...]] [--json FILE] [--list]
#include <ptxbench/abi.h>

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifdef SELFTEST_WITH_CUBLAS
#include <cublas_v2.h>
#endif

#include "reference_kernels.cuh"

namespace selftest {
namespace {

// ---------------------------------------------------------------------------------------------
// The examples and what each must show

enum class task_kind { gemm, attn_fwd, attn_bwd };
enum class expectation { pass, incorrect, memory_error, timeout, crash };

struct example {
  const char* name;  // also the library name: "gemm/plain_tiled" -> gemm_plain_tiled.so
  task_kind task;
  bool causal;
  expectation expected;
  int timeout_s;
  bool builtin_cublas = false;  // not a library: cuBLAS itself, as a baseline and a check of the reference
};

const std::vector<example>& examples() {
  static const std::vector<example> list = {
#ifdef SELFTEST_WITH_CUBLAS
      {"gemm/cublas_baseline", task_kind::gemm, false, expectation::pass, 60, true},
#endif
      {"gemm/plain_tiled", task_kind::gemm, false, expectation::pass, 60},
      {"gemm/wgmma", task_kind::gemm, false, expectation::pass, 60},
      {"gemm/wgmma_tma_pipelined", task_kind::gemm, false, expectation::pass, 60},
      {"gemm/wgmma_dead_branch", task_kind::gemm, false, expectation::pass, 60},
      {"gemm/wrong_result", task_kind::gemm, false, expectation::incorrect, 60},
      {"gemm/out_of_bounds", task_kind::gemm, false, expectation::memory_error, 60},
      {"gemm/host_segfault", task_kind::gemm, false, expectation::crash, 60},
      {"attention/plain_fwd", task_kind::attn_fwd, false, expectation::pass, 60},
      {"attention/plain_fwd_causal", task_kind::attn_fwd, true, expectation::pass, 60},
      {"attention/wgmma_fwd", task_kind::attn_fwd, false, expectation::pass, 60},
      {"attention/wgmma_fwd_causal", task_kind::attn_fwd, true, expectation::pass, 60},
      {"attention/plain_bwd", task_kind::attn_bwd, false, expectation::pass, 90},
      {"attention/plain_bwd_causal", task_kind::attn_bwd, true, expectation::pass, 90},
      {"gemm/hang", task_kind::gemm, false, expectation::timeout, 15},  // last: it leaves a killed context behind
  };
  return list;
}

const char* expectation_name(expectation e) {
  switch (e) {
    case expectation::pass: return "PASS";
    case expectation::incorrect: return "INCORRECT";
    case expectation::memory_error: return "MEMORY_ERROR";
    case expectation::timeout: return "TIMEOUT";
    case expectation::crash: return "CRASH(SIGSEGV)";
  }
  return "?";
}

// Headline shapes.
constexpr int64_t kGemmM = 8192, kGemmN = 7168, kGemmK = 5120;
constexpr int64_t kAttnB = 4, kAttnH = 48, kAttnS = 4096, kAttnD = 128;
constexpr int kCheckedHeads = 4;     // (b, h) pairs compared in full against the reference
constexpr float kAtol = 1e-2f, kRtol = 1e-2f;
constexpr int kWarmup = 3, kTimed = 10;
constexpr size_t kGuardBytes = 64 * 1024;
constexpr uint8_t kGuardPattern = 0xA5;

// ---------------------------------------------------------------------------------------------
// Child -> parent result (a plain struct written through a pipe)

enum status_code : int {
  st_pass = 0,
  st_mismatch,
  st_entry_error,
  st_cuda_error,
  st_guard_violation,
  st_input_modified,
  st_setup_error,
  st_ref_error,
  st_no_library,
};

const char* status_name(int s) {
  static const char* names[] = {"PASS",           "MISMATCH",    "ENTRY_ERROR", "CUDA_ERROR", "GUARD_VIOLATION",
                                "INPUT_MODIFIED", "SETUP_ERROR", "REF_ERROR",   "NO_LIBRARY"};
  return s >= 0 && s <= st_no_library ? names[s] : "?";
}

struct output_result {
  char name[8];
  double max_abs, max_rel, worst_out, worst_ref;
  long long mismatches, nonfinite, checked, nonfinite_all, worst_index;
};

constexpr int kMagic = 0x5e1f7e57;
struct child_result {
  int magic;
  int status;
  char message[640];
  char device[320];
  int n_outputs;
  output_result out[3];
  int timed;
  int candidate_called;  // a CUDA failure after this point is the candidate's, before it the harness's
  double median_ms, min_ms, ref_check_max_err;
};

void set_message(child_result& r, const std::string& m) {
  std::snprintf(r.message, sizeof r.message, "%s", m.c_str());
}

// ---------------------------------------------------------------------------------------------
// Device helpers (child only)

struct cuda_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void ck(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess)
    throw cuda_failure(std::string(what) + " (kernel_selftest.cu:" + std::to_string(line) + "): " + cudaGetErrorName(e) +
                       ": " + cudaGetErrorString(e));
}
#define CK(call) ck((call), #call, __LINE__)

struct device_buffer {
  void* p = nullptr;
  size_t bytes = 0;
  device_buffer() = default;
  explicit device_buffer(size_t n) : bytes(n) { CK(cudaMalloc(&p, n)); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() {
    if (p) cudaFree(p);
  }
  template <typename T>
  T* as() const { return static_cast<T*>(p); }
};

unsigned grid_for(int64_t n) { return unsigned(std::min<int64_t>((n + 255) / 256, 4096)); }

// A harness-style tensor: device data, followed (for outputs) by a guard region.
struct tensor {
  std::string name;
  int32_t dtype;
  std::vector<int64_t> shape;
  bool is_output;
  std::unique_ptr<device_buffer> buf;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }
  size_t elem_bytes() const { return dtype == PTXBENCH_FLOAT32 ? 4 : 2; }
  size_t data_bytes() const { return size_t(numel()) * elem_bytes(); }
  void* data() const { return buf->p; }
};

std::unique_ptr<tensor> make_tensor(const std::string& name, int32_t dtype, std::vector<int64_t> shape, bool is_output) {
  auto t = std::make_unique<tensor>();
  t->name = name;
  t->dtype = dtype;
  t->shape = std::move(shape);
  t->is_output = is_output;
  t->buf = std::make_unique<device_buffer>(t->data_bytes() + (is_output ? kGuardBytes : 0));
  return t;
}

// All bytes 0xFF is NaN in fp32 and bf16 (the harness poisons outputs the same way).
void fill_nan_and_guard(const tensor& t, cudaStream_t s) {
  CK(cudaMemsetAsync(t.data(), 0xFF, t.data_bytes(), s));
  CK(cudaMemsetAsync(static_cast<uint8_t*>(t.data()) + t.data_bytes(), kGuardPattern, kGuardBytes, s));
}

ptxbench_tensor abi_view(const tensor& t) {
  ptxbench_tensor v{};
  v.data = t.data();
  v.dtype = t.dtype;
  v.ndim = int32_t(t.shape.size());
  int64_t stride = 1;
  for (int i = v.ndim - 1; i >= 0; --i) {
    v.sizes[i] = t.shape[i];
    v.strides[i] = stride;
    stride *= t.shape[i];
  }
  v.device = 0;
  v.is_output = t.is_output ? 1 : 0;
  return v;
}

void random_bf16(const tensor& t, uint64_t seed, cudaStream_t s) {
  fill_normal_bf16<<<grid_for(t.numel()), 256, 0, s>>>(static_cast<bf16*>(t.data()), t.numel(), seed);
  CK(cudaGetLastError());
}

unsigned long long checksum(const tensor& t, cudaStream_t s) {
  device_buffer sum(sizeof(unsigned long long));
  CK(cudaMemsetAsync(sum.p, 0, sizeof(unsigned long long), s));
  const int64_t words = int64_t(t.data_bytes() / 8);
  checksum_words<<<grid_for(words), 256, 0, s>>>(static_cast<const uint64_t*>(t.data()), words, sum.as<unsigned long long>());
  CK(cudaGetLastError());
  unsigned long long h = 0;
  CK(cudaMemcpyAsync(&h, sum.p, sizeof h, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  return h;
}

std::vector<float> to_host_f32(const void* dev, int64_t offset, int64_t n, bool is_bf16) {
  std::vector<float> out(static_cast<size_t>(n));
  if (is_bf16) {
    std::vector<bf16> tmp(static_cast<size_t>(n));
    CK(cudaMemcpy(tmp.data(), static_cast<const bf16*>(dev) + offset, size_t(n) * 2, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < n; ++i) out[size_t(i)] = __bfloat162float(tmp[size_t(i)]);
  } else {
    CK(cudaMemcpy(out.data(), static_cast<const float*>(dev) + offset, size_t(n) * 4, cudaMemcpyDeviceToHost));
  }
  return out;
}

// A reference for one output: fp32 values on the device covering `heads` (or the whole tensor).
struct reference {
  const tensor* out = nullptr;
  std::unique_ptr<device_buffer> values;  // fp32, [n_slices][slice_elems]
  std::vector<int> slices;                // which slice of the output each reference slice is; empty = all
  int64_t slice_elems = 0;
  bool round_to_bf16 = true;
};

output_result compare(const reference& ref, cudaStream_t s) {
  output_result r{};
  std::snprintf(r.name, sizeof r.name, "%s", ref.out->name.c_str());
  const bool bf = ref.out->dtype == PTXBENCH_BFLOAT16;
  device_buffer st(sizeof(compare_stats));
  CK(cudaMemsetAsync(st.p, 0, sizeof(compare_stats), s));
  const int n_slices = ref.slices.empty() ? 1 : int(ref.slices.size());
  const int64_t elems = ref.slices.empty() ? ref.out->numel() : ref.slice_elems;
  for (int k = 0; k < n_slices; ++k) {
    const int64_t out_off = ref.slices.empty() ? 0 : int64_t(ref.slices[size_t(k)]) * elems;
    const void* o = static_cast<const uint8_t*>(ref.out->data()) + out_off * ref.out->elem_bytes();
    compare_kernel<<<grid_for(elems), 256, 0, s>>>(o, bf ? 1 : 0, ref.values->as<float>() + int64_t(k) * elems, elems, kAtol,
                                                   kRtol, ref.round_to_bf16 ? 1 : 0, unsigned(int64_t(k) * elems),
                                                   st.as<compare_stats>());
    CK(cudaGetLastError());
  }
  device_buffer nf(sizeof(unsigned long long));
  CK(cudaMemsetAsync(nf.p, 0, sizeof(unsigned long long), s));
  count_nonfinite<<<grid_for(ref.out->numel()), 256, 0, s>>>(ref.out->data(), bf ? 1 : 0, ref.out->numel(),
                                                             nf.as<unsigned long long>());
  CK(cudaGetLastError());
  compare_stats h{};
  unsigned long long nonfinite_all = 0;
  CK(cudaMemcpyAsync(&h, st.p, sizeof h, cudaMemcpyDeviceToHost, s));
  CK(cudaMemcpyAsync(&nonfinite_all, nf.p, sizeof nonfinite_all, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  r.mismatches = (long long)h.mismatches;
  r.nonfinite = (long long)h.nonfinite;
  r.checked = (long long)h.checked;
  r.nonfinite_all = (long long)nonfinite_all;
  uint32_t err_bits = uint32_t(h.worst >> 32), rel_bits = h.max_rel_bits;
  float err, rel;
  std::memcpy(&err, &err_bits, 4);
  std::memcpy(&rel, &rel_bits, 4);
  r.max_abs = err;
  r.max_rel = rel;
  const int64_t wi = int64_t(h.worst & 0xFFFFFFFFull);  // index into the reference slices
  r.worst_index = -1;
  if (h.checked > 0 && wi < int64_t(n_slices) * elems) {
    const int64_t k = wi / elems, j = wi % elems;
    const int64_t out_index = (ref.slices.empty() ? 0 : int64_t(ref.slices[size_t(k)]) * elems) + j;
    r.worst_index = out_index;
    r.worst_out = to_host_f32(ref.out->data(), out_index, 1, bf)[0];
    float rv = to_host_f32(ref.values->p, wi, 1, false)[0];
    if (ref.round_to_bf16) rv = __bfloat162float(__float2bfloat16(rv));
    r.worst_ref = rv;
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Task set-ups: inputs, outputs, references (and a CPU spot check of each reference)

struct task_setup {
  std::vector<std::unique_ptr<tensor>> inputs, outputs;
  std::vector<reference> refs;
  double ref_check_max_err = 0;  // largest |GPU reference - CPU double| seen in the spot check
};

void ref_check(task_setup& t, double got, double want, double tol, const char* what) {
  const double err = std::fabs(got - want);
  t.ref_check_max_err = std::max(t.ref_check_max_err, err);
  if (!(err <= tol + 1e-3 * std::fabs(want)))
    throw std::logic_error(std::string("reference self-check failed for ") + what + ": GPU fp32 " + std::to_string(got) +
                           " vs CPU double " + std::to_string(want));
}

void setup_gemm(task_setup& t, cudaStream_t s) {
  const int64_t M = kGemmM, N = kGemmN, K = kGemmK;
  t.inputs.push_back(make_tensor("A", PTXBENCH_BFLOAT16, {M, K}, false));
  t.inputs.push_back(make_tensor("B", PTXBENCH_BFLOAT16, {N, K}, false));
  t.outputs.push_back(make_tensor("C", PTXBENCH_BFLOAT16, {M, N}, true));
  random_bf16(*t.inputs[0], 1001, s);
  random_bf16(*t.inputs[1], 1002, s);

  device_buffer af(size_t(M * K) * 4), bfv(size_t(N * K) * 4);
  bf16_to_f32<<<grid_for(M * K), 256, 0, s>>>(static_cast<const bf16*>(t.inputs[0]->data()), af.as<float>(), M * K);
  bf16_to_f32<<<grid_for(N * K), 256, 0, s>>>(static_cast<const bf16*>(t.inputs[1]->data()), bfv.as<float>(), N * K);
  CK(cudaGetLastError());
  reference r;
  r.out = t.outputs[0].get();
  r.values = std::make_unique<device_buffer>(size_t(M * N) * 4);
  launch_ref_gemm({af.as<float>(), K, 1, 0}, {bfv.as<float>(), 1, K, 0}, r.values->as<float>(), N, 0, int(M), int(N),
                  int(K), 1.f, 1, s);
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(s));

  const int64_t probes[][2] = {{0, 0}, {M - 1, N - 1}, {1, 7167}, {4095, 3584}, {8191, 0}, {127, 128}, {5000, 6001}, {77, 5555}};
  for (const auto& pr : probes) {
    const std::vector<float> a = to_host_f32(t.inputs[0]->data(), pr[0] * K, K, true);
    const std::vector<float> b = to_host_f32(t.inputs[1]->data(), pr[1] * K, K, true);
    double want = 0;
    for (int64_t k = 0; k < K; ++k) want += double(a[size_t(k)]) * double(b[size_t(k)]);
    ref_check(t, to_host_f32(r.values->p, pr[0] * N + pr[1], 1, false)[0], want, 2e-3, "GEMM C");
  }
  t.refs.push_back(std::move(r));
}

std::vector<int> checked_heads() {
  // Both ends of the (b, h) range plus two from the middle; fixed so runs are comparable.
  const std::vector<int> heads = {0, int(kAttnB * kAttnH) - 1, 67, 130};
  static_assert(kCheckedHeads == 4, "update the list above");
  return heads;
}

// Reference forward for heads[0..n): fills o_ref [n][S][D] and lse_ref [n][S] (fp32).
void ref_attention_fwd(const tensor& Q, const tensor& K, const tensor& V, const std::vector<int>& heads, bool causal,
                       float* o_ref, float* lse_ref, cudaStream_t s) {
  const int64_t S = kAttnS, D = kAttnD, n = int64_t(heads.size());
  const float scale = float(1.0 / std::sqrt(double(D)));
  device_buffer dheads(heads.size() * sizeof(int));
  CK(cudaMemcpyAsync(dheads.p, heads.data(), heads.size() * sizeof(int), cudaMemcpyHostToDevice, s));
  device_buffer q(size_t(n * S * D) * 4), k(size_t(n * S * D) * 4), v(size_t(n * S * D) * 4), p(size_t(n * S * S) * 4);
  gather_heads_f32<<<grid_for(n * S * D), 256, 0, s>>>(static_cast<const bf16*>(Q.data()), dheads.as<int>(), int(n), S * D, q.as<float>());
  gather_heads_f32<<<grid_for(n * S * D), 256, 0, s>>>(static_cast<const bf16*>(K.data()), dheads.as<int>(), int(n), S * D, k.as<float>());
  gather_heads_f32<<<grid_for(n * S * D), 256, 0, s>>>(static_cast<const bf16*>(V.data()), dheads.as<int>(), int(n), S * D, v.as<float>());
  CK(cudaGetLastError());
  // scores = Q K^T * scale
  launch_ref_gemm({q.as<float>(), D, 1, S * D}, {k.as<float>(), 1, D, S * D}, p.as<float>(), S, S * S, int(S), int(S), int(D),
                  scale, int(n), s);
  ref_softmax_rows<<<unsigned(n * S), 256, 0, s>>>(p.as<float>(), lse_ref, int(S), causal ? 1 : 0);
  // O = P V
  launch_ref_gemm({p.as<float>(), S, 1, S * S}, {v.as<float>(), D, 1, S * D}, o_ref, D, S * D, int(S), int(D), int(S), 1.f,
                  int(n), s);
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(s));
}

// CPU double-precision forward of one query row of one head.
void cpu_attention_row(const std::vector<float>& q_row, const std::vector<float>& k, const std::vector<float>& v, int i,
                       bool causal, std::vector<double>& o, double& lse) {
  const int64_t S = kAttnS, D = kAttnD;
  const int valid = causal ? i + 1 : int(S);
  const double scale = 1.0 / std::sqrt(double(D));
  std::vector<double> sc(static_cast<size_t>(valid));
  double mx = -INFINITY;
  for (int j = 0; j < valid; ++j) {
    double d = 0;
    for (int64_t c = 0; c < D; ++c) d += double(q_row[size_t(c)]) * k[size_t(j * D + c)];
    sc[size_t(j)] = d * scale;
    mx = std::max(mx, sc[size_t(j)]);
  }
  double sum = 0;
  for (int j = 0; j < valid; ++j) sum += std::exp(sc[size_t(j)] - mx);
  lse = mx + std::log(sum);
  o.assign(size_t(D), 0.0);
  for (int j = 0; j < valid; ++j) {
    const double pj = std::exp(sc[size_t(j)] - lse);
    for (int64_t c = 0; c < D; ++c) o[size_t(c)] += pj * v[size_t(j * D + c)];
  }
}

void setup_attn_fwd(task_setup& t, bool causal, cudaStream_t s) {
  const int64_t B = kAttnB, H = kAttnH, S = kAttnS, D = kAttnD;
  for (const char* n : {"Q", "K", "V"}) t.inputs.push_back(make_tensor(n, PTXBENCH_BFLOAT16, {B, H, S, D}, false));
  t.outputs.push_back(make_tensor("O", PTXBENCH_BFLOAT16, {B, H, S, D}, true));
  t.outputs.push_back(make_tensor("LSE", PTXBENCH_FLOAT32, {B, H, S}, true));
  for (int i = 0; i < 3; ++i) random_bf16(*t.inputs[size_t(i)], 2001 + uint64_t(i), s);

  const std::vector<int> heads = checked_heads();
  reference ro, rl;
  ro.out = t.outputs[0].get();
  rl.out = t.outputs[1].get();
  ro.slices = rl.slices = heads;
  ro.slice_elems = S * D;
  rl.slice_elems = S;
  rl.round_to_bf16 = false;
  ro.values = std::make_unique<device_buffer>(heads.size() * size_t(S * D) * 4);
  rl.values = std::make_unique<device_buffer>(heads.size() * size_t(S) * 4);
  ref_attention_fwd(*t.inputs[0], *t.inputs[1], *t.inputs[2], heads, causal, ro.values->as<float>(), rl.values->as<float>(), s);

  // CPU spot check of the first checked head.
  const int64_t h0 = heads[0];
  const std::vector<float> k = to_host_f32(t.inputs[1]->data(), h0 * S * D, S * D, true);
  const std::vector<float> v = to_host_f32(t.inputs[2]->data(), h0 * S * D, S * D, true);
  for (int i : {0, 1, int(S / 2) + 3, int(S) - 1}) {
    const std::vector<float> q = to_host_f32(t.inputs[0]->data(), (h0 * S + i) * D, D, true);
    std::vector<double> o;
    double lse = 0;
    cpu_attention_row(q, k, v, i, causal, o, lse);
    const std::vector<float> go = to_host_f32(ro.values->p, int64_t(i) * D, D, false);
    ref_check(t, to_host_f32(rl.values->p, i, 1, false)[0], lse, 1e-3, "attention LSE");
    for (int64_t c = 0; c < D; c += 17) ref_check(t, go[size_t(c)], o[size_t(c)], 1e-4, "attention O");
  }
  t.refs.push_back(std::move(ro));
  t.refs.push_back(std::move(rl));
}

void setup_attn_bwd(task_setup& t, bool causal, cudaStream_t s) {
  const int64_t B = kAttnB, H = kAttnH, S = kAttnS, D = kAttnD, BH = B * H;
  const float scale = float(1.0 / std::sqrt(double(D)));
  for (const char* n : {"Q", "K", "V", "O", "dO"}) t.inputs.push_back(make_tensor(n, PTXBENCH_BFLOAT16, {B, H, S, D}, false));
  t.inputs.push_back(make_tensor("L", PTXBENCH_FLOAT32, {B, H, S}, false));
  for (const char* n : {"dQ", "dK", "dV"}) t.outputs.push_back(make_tensor(n, PTXBENCH_BFLOAT16, {B, H, S, D}, true));
  const tensor &Q = *t.inputs[0], &K = *t.inputs[1], &V = *t.inputs[2], &O = *t.inputs[3], &dO = *t.inputs[4], &L = *t.inputs[5];
  random_bf16(Q, 3001, s);
  random_bf16(K, 3002, s);
  random_bf16(V, 3003, s);
  random_bf16(dO, 3004, s);

  // O and L come from the (reference) forward on the same Q, K, V, for every head, like the harness's.
  {
    const int chunk = 8;
    device_buffer o_chunk(size_t(chunk * S * D) * 4);
    for (int64_t h = 0; h < BH; h += chunk) {
      std::vector<int> hs;
      for (int64_t j = h; j < std::min<int64_t>(h + chunk, BH); ++j) hs.push_back(int(j));
      ref_attention_fwd(Q, K, V, hs, causal, o_chunk.as<float>(), static_cast<float*>(L.data()) + h * S, s);
      f32_to_bf16_at<<<grid_for(int64_t(hs.size()) * S * D), 256, 0, s>>>(o_chunk.as<float>(), static_cast<bf16*>(O.data()),
                                                                           h * S * D, int64_t(hs.size()) * S * D);
      CK(cudaGetLastError());
    }
    CK(cudaStreamSynchronize(s));
  }

  const std::vector<int> heads = checked_heads();
  const int64_t n = int64_t(heads.size());
  device_buffer dheads(heads.size() * sizeof(int));
  CK(cudaMemcpyAsync(dheads.p, heads.data(), heads.size() * sizeof(int), cudaMemcpyHostToDevice, s));
  auto gather = [&](const tensor& src, int64_t per_head) {
    auto b = std::make_unique<device_buffer>(size_t(n * per_head) * 4);
    if (src.dtype == PTXBENCH_FLOAT32) {
      for (int64_t k = 0; k < n; ++k)
        CK(cudaMemcpyAsync(b->as<float>() + k * per_head, static_cast<const float*>(src.data()) + heads[size_t(k)] * per_head,
                           size_t(per_head) * 4, cudaMemcpyDeviceToDevice, s));
    } else {
      gather_heads_f32<<<grid_for(n * per_head), 256, 0, s>>>(static_cast<const bf16*>(src.data()), dheads.as<int>(), int(n),
                                                              per_head, b->as<float>());
      CK(cudaGetLastError());
    }
    return b;
  };
  auto q = gather(Q, S * D), k = gather(K, S * D), v = gather(V, S * D), o = gather(O, S * D), dout = gather(dO, S * D);
  auto l = gather(L, S);
  device_buffer p(size_t(n * S * S) * 4), dp(size_t(n * S * S) * 4), delta(size_t(n * S) * 4);
  const float* Pp = p.as<float>();
  launch_ref_gemm({q->as<float>(), D, 1, S * D}, {k->as<float>(), 1, D, S * D}, p.as<float>(), S, S * S, int(S), int(S), int(D),
                  scale, int(n), s);
  ref_p_from_lse<<<grid_for(n * S * S), 256, 0, s>>>(p.as<float>(), l->as<float>(), int(S), n * S, causal ? 1 : 0);
  reference rq, rk, rv;
  rq.out = t.outputs[0].get();
  rk.out = t.outputs[1].get();
  rv.out = t.outputs[2].get();
  for (reference* r : {&rq, &rk, &rv}) {
    r->slices = heads;
    r->slice_elems = S * D;
    r->values = std::make_unique<device_buffer>(size_t(n * S * D) * 4);
  }
  // dV = P^T dO
  launch_ref_gemm({Pp, 1, S, S * S}, {dout->as<float>(), D, 1, S * D}, rv.values->as<float>(), D, S * D, int(S), int(D),
                  int(S), 1.f, int(n), s);
  // dP = dO V^T
  launch_ref_gemm({dout->as<float>(), D, 1, S * D}, {v->as<float>(), 1, D, S * D}, dp.as<float>(), S, S * S, int(S), int(S),
                  int(D), 1.f, int(n), s);
  ref_row_dot<<<unsigned((n * S + 255) / 256), 256, 0, s>>>(dout->as<float>(), o->as<float>(), delta.as<float>(), n * S, int(D));
  ref_ds<<<grid_for(n * S * S), 256, 0, s>>>(Pp, dp.as<float>(), delta.as<float>(), int(S), n * S);  // dp := dS
  // dQ = dS K * scale ; dK = dS^T Q * scale
  launch_ref_gemm({dp.as<float>(), S, 1, S * S}, {k->as<float>(), D, 1, S * D}, rq.values->as<float>(), D, S * D, int(S),
                  int(D), int(S), scale, int(n), s);
  launch_ref_gemm({dp.as<float>(), 1, S, S * S}, {q->as<float>(), D, 1, S * D}, rk.values->as<float>(), D, S * D, int(S),
                  int(D), int(S), scale, int(n), s);
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(s));

  // CPU spot check on the first checked head: dV and dK of key rows, dQ of query rows.
  const int64_t h0 = heads[0];
  const auto hq = to_host_f32(Q.data(), h0 * S * D, S * D, true), hk = to_host_f32(K.data(), h0 * S * D, S * D, true);
  const auto hv = to_host_f32(V.data(), h0 * S * D, S * D, true), ho = to_host_f32(O.data(), h0 * S * D, S * D, true);
  const auto hdo = to_host_f32(dO.data(), h0 * S * D, S * D, true), hl = to_host_f32(L.data(), h0 * S, S, false);
  auto dot = [&](const std::vector<float>& a, int64_t i, const std::vector<float>& b, int64_t j) {
    double r = 0;
    for (int64_t c = 0; c < D; ++c) r += double(a[size_t(i * D + c)]) * b[size_t(j * D + c)];
    return r;
  };
  std::vector<double> delta_h(static_cast<size_t>(S));
  for (int64_t i = 0; i < S; ++i) delta_h[size_t(i)] = dot(hdo, i, ho, i);
  auto prob = [&](int64_t i, int64_t j) { return (causal && j > i) ? 0.0 : std::exp(dot(hq, i, hk, j) * scale - hl[size_t(i)]); };
  for (int64_t j : {int64_t(5), S - 1}) {  // key rows: dV_j, dK_j
    std::vector<double> dv(static_cast<size_t>(D), 0.0), dk(static_cast<size_t>(D), 0.0);
    for (int64_t i = 0; i < S; ++i) {
      const double pij = prob(i, j);
      if (pij == 0.0) continue;
      const double ds = pij * (dot(hdo, i, hv, j) - delta_h[size_t(i)]);
      for (int64_t c = 0; c < D; ++c) {
        dv[size_t(c)] += pij * hdo[size_t(i * D + c)];
        dk[size_t(c)] += ds * hq[size_t(i * D + c)] * scale;
      }
    }
    const auto gv = to_host_f32(rv.values->p, j * D, D, false), gk = to_host_f32(rk.values->p, j * D, D, false);
    for (int64_t c = 0; c < D; c += 9) {
      ref_check(t, gv[size_t(c)], dv[size_t(c)], 1e-4, "attention dV");
      ref_check(t, gk[size_t(c)], dk[size_t(c)], 1e-4, "attention dK");
    }
  }
  for (int64_t i : {int64_t(3), S - 2}) {  // query rows: dQ_i
    std::vector<double> dq(static_cast<size_t>(D), 0.0);
    for (int64_t j = 0; j < S; ++j) {
      const double pij = prob(i, j);
      if (pij == 0.0) continue;
      const double ds = pij * (dot(hdo, i, hv, j) - delta_h[size_t(i)]);
      for (int64_t c = 0; c < D; ++c) dq[size_t(c)] += ds * hk[size_t(j * D + c)] * scale;
    }
    const auto gq = to_host_f32(rq.values->p, i * D, D, false);
    for (int64_t c = 0; c < D; c += 9) ref_check(t, gq[size_t(c)], dq[size_t(c)], 1e-4, "attention dQ");
  }
  t.refs.push_back(std::move(rq));
  t.refs.push_back(std::move(rk));
  t.refs.push_back(std::move(rv));
}

// ---------------------------------------------------------------------------------------------
// Child: one example, start to finish

// The call under test, as this file uses it: nullptr on success, else a message. A candidate's ABI v2
// entry (ptxbench_entry_fn: an error kind plus a message) is wrapped into this in run_example.
using entry_fn = std::function<const char*(const ptxbench_tensor*, int32_t, cudaStream_t)>;

void mark(int fd, char c) {
  if (write(fd, &c, 1) != 1) { /* the parent reads what it gets */ }
}

void run_example(const example& ex, const std::string& lib_dir, int fd, child_result& res) {
#ifdef SELFTEST_FAKE_CHILDREN  // tests the parent's bookkeeping on a machine without a GPU
  mark(fd, 'c');
  if (std::strstr(ex.name, "hang") != nullptr)
    for (;;) pause();
  if (std::strstr(ex.name, "segfault") != nullptr) raise(SIGSEGV);
  if (std::strstr(ex.name, "wrong") != nullptr) res.status = st_mismatch;
  if (std::strstr(ex.name, "bounds") != nullptr) res.status = st_guard_violation;
  (void)lib_dir;
  return;
#endif
  int dev_count = 0;
  CK(cudaGetDeviceCount(&dev_count));
  CK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::snprintf(res.device, sizeof res.device, "%s (sm_%d%d, %d SMs)", prop.name, prop.major, prop.minor,
                prop.multiProcessorCount);
  if (prop.major < 9) throw std::runtime_error(std::string("needs a Hopper (sm_90) GPU, found ") + res.device);
  mark(fd, 'i');

  entry_fn entry;
#ifdef SELFTEST_WITH_CUBLAS
  cublasHandle_t handle = nullptr;
#endif
  if (ex.builtin_cublas) {
#ifdef SELFTEST_WITH_CUBLAS
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate failed");
    entry = [&handle](const ptxbench_tensor* a, int32_t, cudaStream_t st) -> const char* {
      // Row-major C[M,N] = A[M,K] B[N,K]^T is column-major C^T = B A^T: op(B) = T, op(A) = N.
      const int M = int(a[0].sizes[0]), K = int(a[0].sizes[1]), N = int(a[1].sizes[0]);
      const float alpha = 1.f, beta = 0.f;
      cublasSetStream(handle, st);
      const cublasStatus_t r = cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, a[1].data, CUDA_R_16BF, K,
                                            a[0].data, CUDA_R_16BF, K, &beta, a[2].data, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F,
                                            CUBLAS_GEMM_DEFAULT);
      return r == CUBLAS_STATUS_SUCCESS ? nullptr : "cublasGemmEx failed";
    };
#endif
  } else {
    std::string path = lib_dir + "/" + ex.name + ".so";
    std::replace(path.begin() + long(lib_dir.size()) + 1, path.end(), '/', '_');
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      res.status = st_no_library;
      set_message(res, std::string("dlopen failed: ") + dlerror());
      return;
    }
    auto version = reinterpret_cast<int32_t (*)()>(dlsym(lib, "ptxbench_abi_version_run"));
    auto fn = reinterpret_cast<ptxbench_entry_fn>(dlsym(lib, "ptxbench_entry_run"));
    if (version == nullptr || fn == nullptr) {
      res.status = st_no_library;
      set_message(res, "ptxbench_entry_run / ptxbench_abi_version_run not exported");
      return;
    }
    if (version() != PTXBENCH_ABI_VERSION) {
      res.status = st_no_library;
      set_message(res, "ABI version " + std::to_string(version()) + ", expected " + std::to_string(PTXBENCH_ABI_VERSION));
      return;
    }
    entry = [fn](const ptxbench_tensor* a, int32_t n, cudaStream_t st) -> const char* {
      const char* message = nullptr;
      const int32_t kind = fn(a, n, st, &message);
      if (kind == PTXBENCH_OK) return nullptr;
      static thread_local std::string text;
      text = "error kind " + std::to_string(kind) + ": " + (message != nullptr ? message : "(no message)");
      return text.c_str();
    };
  }
  mark(fd, 'l');

  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  task_setup t;
  try {
    switch (ex.task) {
      case task_kind::gemm: setup_gemm(t, stream); break;
      case task_kind::attn_fwd: setup_attn_fwd(t, ex.causal, stream); break;
      case task_kind::attn_bwd: setup_attn_bwd(t, ex.causal, stream); break;
    }
  } catch (const std::logic_error& e) {
    res.status = st_ref_error;
    set_message(res, e.what());
    return;
  }
  res.ref_check_max_err = t.ref_check_max_err;
  std::vector<ptxbench_tensor> args;
  std::vector<unsigned long long> input_sums;
  for (const auto& in : t.inputs) {
    args.push_back(abi_view(*in));
    input_sums.push_back(checksum(*in, stream));
  }
  for (const auto& out : t.outputs) {
    args.push_back(abi_view(*out));
    fill_nan_and_guard(*out, stream);
  }
  CK(cudaStreamSynchronize(stream));
  mark(fd, 'r');

  // The call under test.
  mark(fd, 'c');
  res.candidate_called = 1;
  const char* err = entry(args.data(), int32_t(args.size()), stream);
  if (err != nullptr) {
    res.status = st_entry_error;
    set_message(res, err);
    return;
  }
  mark(fd, 'k');
  cudaError_t e = cudaStreamSynchronize(stream);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();  // work the candidate put on other streams
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) {
    res.status = st_cuda_error;
    set_message(res, std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e));
    return;
  }
  mark(fd, 's');

  std::string problems;
  for (const auto& out : t.outputs) {
    device_buffer cnt(sizeof(unsigned long long));
    CK(cudaMemsetAsync(cnt.p, 0, sizeof(unsigned long long), stream));
    count_changed_bytes<<<grid_for(int64_t(kGuardBytes)), 256, 0, stream>>>(
        static_cast<const uint8_t*>(out->data()) + out->data_bytes(), int64_t(kGuardBytes), kGuardPattern,
        cnt.as<unsigned long long>());
    CK(cudaGetLastError());
    unsigned long long changed = 0;
    CK(cudaMemcpyAsync(&changed, cnt.p, sizeof changed, cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    if (changed > 0) {
      res.status = st_guard_violation;
      problems += std::to_string(changed) + " byte(s) written past the end of " + out->name + "; ";
    }
  }
  for (size_t i = 0; i < t.inputs.size(); ++i)
    if (checksum(*t.inputs[i], stream) != input_sums[i]) {
      if (res.status == st_pass) res.status = st_input_modified;
      problems += "input " + t.inputs[i]->name + " was modified; ";
    }
  res.n_outputs = int(t.refs.size());
  bool mismatch = false;
  for (size_t i = 0; i < t.refs.size(); ++i) {
    res.out[i] = compare(t.refs[i], stream);
    if (res.out[i].mismatches > 0 || res.out[i].nonfinite_all > 0) mismatch = true;
    if (res.out[i].nonfinite_all > res.out[i].nonfinite)
      problems += std::to_string(res.out[i].nonfinite_all - res.out[i].nonfinite) + " non-finite value(s) in " +
                  t.refs[i].out->name + " outside the checked heads; ";
  }
  if (mismatch && res.status == st_pass) res.status = st_mismatch;
  set_message(res, problems);
  mark(fd, 't');

  // Timing: 3 warm-ups, then the median of 10 calls (events around each call).
  cudaEvent_t start, stop;
  CK(cudaEventCreate(&start));
  CK(cudaEventCreate(&stop));
  std::vector<float> ms;
  for (int it = 0; it < kWarmup + kTimed; ++it) {
    CK(cudaEventRecord(start, stream));
    if (const char* m = entry(args.data(), int32_t(args.size()), stream)) {
      set_message(res, problems + "timed call failed: " + m);
      return;
    }
    CK(cudaEventRecord(stop, stream));
    CK(cudaEventSynchronize(stop));
    float x = 0;
    CK(cudaEventElapsedTime(&x, start, stop));
    if (it >= kWarmup) ms.push_back(x);
  }
  std::sort(ms.begin(), ms.end());
  res.timed = int(ms.size());
  res.median_ms = (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2.0;
  res.min_ms = ms.front();
}

[[noreturn]] void child_main(const example& ex, const std::string& lib_dir, int fd) {
  auto* res = new child_result{};
  res->magic = kMagic;
  res->status = st_pass;
  try {
    run_example(ex, lib_dir, fd, *res);
  } catch (const cuda_failure& e) {
    res->status = res->candidate_called ? st_cuda_error : st_setup_error;
    set_message(*res, e.what());
  } catch (const std::exception& e) {
    res->status = st_setup_error;
    set_message(*res, e.what());
  }
  const char* p = reinterpret_cast<const char*>(res);
  size_t left = sizeof(child_result);
  while (left > 0) {
    const ssize_t w = write(fd, p, left);
    if (w <= 0) break;
    p += w;
    left -= size_t(w);
  }
  close(fd);
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(0);  // skip CUDA teardown and static destructors: the process is done
}

// ---------------------------------------------------------------------------------------------
// Parent: fork, wait with a timeout, classify

struct outcome {
  const example* ex = nullptr;
  std::string outcome;  // PASS, MISMATCH, TIMEOUT, CRASH(SIGSEGV), ...
  bool as_expected = false;
  bool have_result = false;
  child_result result{};
  char last_mark = '\0';  // the last progress mark the child wrote
  std::string last_stage;
  double wall_s = 0;
};

std::string stage_name(char c) {
  switch (c) {
    case 'i': return "device initialised";
    case 'l': return "library loaded";
    case 'r': return "inputs and reference ready";
    case 'c': return "inside the candidate call";
    case 'k': return "candidate call returned, synchronising";
    case 's': return "synchronised, checking";
    case 't': return "timing";
    default: return "starting";
  }
}

bool matches(expectation want, const outcome& o) {
  switch (want) {
    case expectation::pass: return o.outcome == "PASS";
    case expectation::incorrect: return o.outcome == "MISMATCH";
    case expectation::memory_error:
      return o.outcome == "GUARD_VIOLATION" || (o.outcome == "CUDA_ERROR" && o.have_result &&
                                                std::strstr(o.result.message, "cudaErrorIllegalAddress") != nullptr);
    case expectation::timeout:  // hung in the candidate's call or its kernels, not in the harness's set-up
      return o.outcome == "TIMEOUT" && (o.last_mark == 'c' || o.last_mark == 'k');
    case expectation::crash: return o.outcome == "CRASH(SIGSEGV)";
  }
  return false;
}

outcome run_in_child(const example& ex, const std::string& lib_dir) {
  outcome o;
  o.ex = &ex;
  int fds[2];
  if (pipe(fds) != 0) {
    o.outcome = "PIPE_FAILED";
    return o;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    o.outcome = "FORK_FAILED";
    close(fds[0]);
    close(fds[1]);
    return o;
  }
  if (pid == 0) {
    close(fds[0]);
    child_main(ex, lib_dir, fds[1]);
  }
  close(fds[1]);
  int wstatus = 0;
  bool timed_out = false;
  for (;;) {
    const pid_t r = waitpid(pid, &wstatus, WNOHANG);
    if (r == pid) break;
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(ex.timeout_s)) {
      kill(pid, SIGKILL);
      waitpid(pid, &wstatus, 0);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  o.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string data;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    data.append(buf, size_t(n));
  }
  close(fds[0]);
  if (data.size() >= sizeof(child_result)) {
    std::memcpy(&o.result, data.data() + data.size() - sizeof(child_result), sizeof(child_result));
    o.have_result = o.result.magic == kMagic;
    if (o.have_result) data.resize(data.size() - sizeof(child_result));
  }
  o.last_mark = data.empty() ? '\0' : data.back();
  o.last_stage = stage_name(o.last_mark);
  if (timed_out) {
    o.outcome = "TIMEOUT";
  } else if (WIFSIGNALED(wstatus)) {
    o.outcome = std::string("CRASH(") + (WTERMSIG(wstatus) == SIGSEGV ? "SIGSEGV" : strsignal(WTERMSIG(wstatus))) + ")";
  } else if (!o.have_result) {
    o.outcome = "CHILD_EXIT(" + std::to_string(WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1) + ")";
  } else {
    o.outcome = status_name(o.result.status);
  }
  o.as_expected = matches(ex.expected, o);
  return o;
}

// ---------------------------------------------------------------------------------------------
// Reporting

std::string json_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      r += '\\';
      r += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      r += b;
    } else {
      r += c;
    }
  }
  return r;
}

std::string num(double v) {
  if (!std::isfinite(v)) return "null";
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

double flops_of(const example& ex) {
  const double attn = 4.0 * kAttnB * kAttnH * double(kAttnS) * kAttnS * kAttnD * (ex.causal ? 0.5 : 1.0);
  switch (ex.task) {
    case task_kind::gemm: return 2.0 * kGemmM * kGemmN * double(kGemmK);
    case task_kind::attn_fwd: return attn;
    case task_kind::attn_bwd: return 2.5 * attn;
  }
  return 0;
}

void print_table(const std::vector<outcome>& all) {
  std::printf("\n%-30s %-15s %-16s %3s %10s %10s %10s %10s %8s\n", "example", "expected", "outcome", "ok", "max_abs",
              "max_rel", "mismatch", "median_ms", "TFLOP/s");
  std::printf("%s\n", std::string(120, '-').c_str());
  for (const auto& o : all) {
    double max_abs = 0, max_rel = 0;
    long long mism = 0;
    bool have_stats = o.have_result && o.result.n_outputs > 0;
    for (int i = 0; have_stats && i < o.result.n_outputs; ++i) {
      max_abs = std::max(max_abs, o.result.out[i].max_abs);
      max_rel = std::max(max_rel, o.result.out[i].max_rel);
      mism += o.result.out[i].mismatches + (o.result.out[i].nonfinite_all - o.result.out[i].nonfinite);
    }
    const bool timed = o.have_result && o.result.timed > 0;
    char a[16] = "-", r[16] = "-", m[24] = "-", t[16] = "-", f[16] = "-";
    if (have_stats) {
      std::snprintf(a, sizeof a, "%.3g", max_abs);
      std::snprintf(r, sizeof r, "%.3g", max_rel);
      std::snprintf(m, sizeof m, "%lld", mism);
    }
    if (timed) {
      std::snprintf(t, sizeof t, "%.3f", o.result.median_ms);
      std::snprintf(f, sizeof f, "%.1f", flops_of(*o.ex) / (o.result.median_ms * 1e-3) / 1e12);
    }
    std::printf("%-30s %-15s %-16s %3s %10s %10s %10s %10s %8s\n", o.ex->name, expectation_name(o.ex->expected),
                o.outcome.c_str(), o.as_expected ? "yes" : "NO", a, r, m, t, f);
  }
  std::printf("\nDetails:\n");
  for (const auto& o : all) {
    std::printf("  %s: %s in %.1f s", o.ex->name, o.outcome.c_str(), o.wall_s);
    if (o.outcome == "TIMEOUT" || o.outcome.rfind("CRASH", 0) == 0 || o.outcome.rfind("CHILD", 0) == 0)
      std::printf(" (last stage: %s)", o.last_stage.c_str());
    std::printf("\n");
    if (!o.have_result) continue;
    if (o.result.message[0] != '\0') std::printf("      %s\n", o.result.message);
    for (int i = 0; i < o.result.n_outputs; ++i) {
      const output_result& x = o.result.out[i];
      std::printf("      %-4s checked %lld, mismatches %lld, non-finite %lld (whole tensor %lld), max_abs %.4g, max_rel %.4g",
                  x.name, x.checked, x.mismatches, x.nonfinite, x.nonfinite_all, x.max_abs, x.max_rel);
      if (x.worst_index >= 0) std::printf(", worst at %lld: %.6g vs %.6g", x.worst_index, x.worst_out, x.worst_ref);
      std::printf("\n");
    }
    if (o.result.ref_check_max_err > 0)
      std::printf("      reference vs CPU double: max |diff| %.3g\n", o.result.ref_check_max_err);
  }
}

bool write_json(const std::string& path, const std::vector<outcome>& all) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  std::string device;
  for (const auto& o : all)
    if (o.have_result && o.result.device[0]) {
      device = o.result.device;
      break;
    }
  std::fprintf(f, "{\n  \"format\": \"ptxbench.kernel_selftest/1\",\n  \"device\": \"%s\",\n  \"atol\": %s,\n  \"rtol\": %s,\n  \"results\": [\n",
               json_escape(device).c_str(), num(kAtol).c_str(), num(kRtol).c_str());
  for (size_t k = 0; k < all.size(); ++k) {
    const outcome& o = all[k];
    std::fprintf(f, "    {\"name\": \"%s\", \"expected\": \"%s\", \"outcome\": \"%s\", \"as_expected\": %s, \"wall_s\": %s",
                 o.ex->name, expectation_name(o.ex->expected), o.outcome.c_str(), o.as_expected ? "true" : "false",
                 num(o.wall_s).c_str());
    std::fprintf(f, ", \"last_stage\": \"%s\"", json_escape(o.last_stage).c_str());
    if (o.have_result) {
      std::fprintf(f, ", \"message\": \"%s\", \"reference_check_max_abs_diff\": %s", json_escape(o.result.message).c_str(),
                   num(o.result.ref_check_max_err).c_str());
      if (o.result.timed > 0)
        std::fprintf(f, ", \"median_ms\": %s, \"min_ms\": %s, \"tflops\": %s", num(o.result.median_ms).c_str(),
                     num(o.result.min_ms).c_str(), num(flops_of(*o.ex) / (o.result.median_ms * 1e-3) / 1e12).c_str());
      std::fprintf(f, ", \"outputs\": [");
      for (int i = 0; i < o.result.n_outputs; ++i) {
        const output_result& x = o.result.out[i];
        std::fprintf(f,
                     "%s{\"name\": \"%s\", \"checked\": %lld, \"mismatches\": %lld, \"nonfinite\": %lld, "
                     "\"nonfinite_whole_tensor\": %lld, \"max_abs_err\": %s, \"max_rel_err\": %s, \"worst_index\": %lld, "
                     "\"worst_value\": %s, \"worst_expected\": %s}",
                     i ? ", " : "", json_escape(x.name).c_str(), x.checked, x.mismatches, x.nonfinite, x.nonfinite_all,
                     num(x.max_abs).c_str(), num(x.max_rel).c_str(), x.worst_index, num(x.worst_out).c_str(),
                     num(x.worst_ref).c_str());
      }
      std::fprintf(f, "]");
    }
    std::fprintf(f, "}%s\n", k + 1 < all.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  return std::fclose(f) == 0;
}

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s --lib-dir DIR [--only NAME[,NAME...]] [--json FILE] [--list]\n", argv0);
  return 2;
}

}  // namespace
}  // namespace selftest

int main(int argc, char** argv) {
  using namespace selftest;
  std::string lib_dir, json, only;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--lib-dir" && i + 1 < argc) lib_dir = argv[++i];
    else if (a == "--json" && i + 1 < argc) json = argv[++i];
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--list") list = true;
    else return usage(argv[0]);
  }
  if (list) {
    for (const auto& ex : examples()) std::printf("%-30s expected %s\n", ex.name, expectation_name(ex.expected));
    return 0;
  }
  if (lib_dir.empty()) return usage(argv[0]);

  std::vector<outcome> all;
  for (const auto& ex : examples()) {
    if (!only.empty() && ("," + only + ",").find("," + std::string(ex.name) + ",") == std::string::npos) continue;
    std::printf("running %-30s ... ", ex.name);
    std::fflush(stdout);
    all.push_back(run_in_child(ex, lib_dir));
    std::printf("%s (%.1f s)%s\n", all.back().outcome.c_str(), all.back().wall_s, all.back().as_expected ? "" : "  <-- unexpected");
  }
  if (all.empty()) {
    std::fprintf(stderr, "no example matches --only %s\n", only.c_str());
    return 2;
  }
  std::string device;
  for (const auto& o : all)
    if (o.have_result && o.result.device[0]) {
      device = o.result.device;
      break;
    }
  std::printf("\ndevice: %s\n", device.empty() ? "(unknown)" : device.c_str());
  print_table(all);
  const long ok = std::count_if(all.begin(), all.end(), [](const outcome& o) { return o.as_expected; });
  std::printf("\n%ld of %zu examples behaved as expected\n", ok, all.size());
  if (!json.empty()) {
    if (write_json(json, all)) std::printf("wrote %s\n", json.c_str());
    else std::fprintf(stderr, "could not write %s\n", json.c_str());
  }
  return ok == long(all.size()) ? 0 : 1;
}
