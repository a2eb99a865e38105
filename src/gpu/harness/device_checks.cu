#include "gpu/harness/device_checks.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cub/block/block_reduce.cuh>
#include <cuda/functional>

#include <cstring>
#include <stdexcept>
#include <string>

#include "gpu/common/cuda_check.h"
#include "gpu/harness/grid_shape.h"

namespace ptxbench::gpu {

// One check's result. A byte check: v[0] mismatches, v[1] the largest ~offset of a mismatch (so the
// zeroed slot needs no other start value). A checksum: v[0]. A comparison: v[0] worst ((badness
// bits << 32) | (0xFFFFFFFF − index): most out of tolerance, then lowest index), v[1] float bits of
// the largest |out − ref|, v[2] of the largest relative error, v[3] mismatches, v[4] NaN/Inf; and
// the worst element's pair, fetched on the device so that reading it costs no synchronisation.
struct device_checks::slot {
  unsigned long long v[5];
  float worst_value, worst_expected;
};

namespace {

enum kind : int { k_bytes = 1, k_checksum = 2, k_compare = 3 };

// Each block combines its threads first (CUB's block reduction) and then makes one atomic: one
// atomic per thread on a single address serialises ~10^6 operations per call, which cost
// milliseconds per timed pair (bench/results/h100/speed: compare 4.1 ms, input checksums ~3 ms for
// the GEMM's 117 MB output and 157 MB of inputs).
using block_reduce = cub::BlockReduce<unsigned long long, k_grid_stride_threads>;

template <typename Op>
__device__ unsigned long long block_combine(unsigned long long v, typename block_reduce::TempStorage& scratch, Op op) {
  unsigned long long r = block_reduce(scratch).Reduce(v, op);
  __syncthreads();  // the scratch is reused by the next reduction
  return r;
}

__global__ void byte_check_kernel(const unsigned char* p, std::size_t bytes, unsigned char expected,
                                  device_checks::slot* out) {
  __shared__ typename block_reduce::TempStorage scratch;
  unsigned long long count = 0, last_not = 0;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes;
       i += std::size_t(gridDim.x) * blockDim.x)
    if (p[i] != expected) {
      ++count;
      unsigned long long n = ~static_cast<unsigned long long>(i);
      if (n > last_not) last_not = n;
    }
  count = block_combine(count, scratch, cuda::std::plus<unsigned long long>{});
  last_not = block_combine(last_not, scratch, cuda::maximum<unsigned long long>{});
  if (threadIdx.x == 0 && count) {
    atomicAdd(&out->v[0], count);
    atomicMax(&out->v[1], last_not);
  }
}

__device__ unsigned long long mix64(unsigned long long x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

__global__ void checksum_kernel(const unsigned char* p, std::size_t bytes, device_checks::slot* out) {
  __shared__ typename block_reduce::TempStorage scratch;
  unsigned long long local = 0;
  std::size_t words = bytes / 8;
  const unsigned long long* w = reinterpret_cast<const unsigned long long*>(p);
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < words;
       i += std::size_t(gridDim.x) * blockDim.x)
    local += mix64(w[i] ^ (i * 0x9e3779b97f4a7c15ull));
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (std::size_t i = words * 8; i < bytes; ++i) local += mix64(p[i] + (i << 8));
  unsigned long long block_sum = block_reduce(scratch).Sum(local);
  if (threadIdx.x == 0) atomicAdd(&out->v[0], block_sum);
}

template <typename T>
__device__ float to_float(T v);
template <>
__device__ float to_float<float>(float v) { return v; }
template <>
__device__ float to_float<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <>
__device__ float to_float<__half>(__half v) { return __half2float(v); }

template <typename T>
__global__ void compare_kernel(const T* out, const T* ref, int64_t n, float atol, float rtol, int rule,
                               device_checks::slot* acc) {
  unsigned long long worst = 0, max_abs = 0, max_rel = 0, mism = 0, nonfin = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float o = to_float(out[i]), r = to_float(ref[i]);
    float diff = fabsf(o - r);
    bool finite = isfinite(o);
    float rel = diff / (fabsf(r) + 1e-8f);
    bool bad;
    if (!finite) {
      bad = true;
      diff = INFINITY;
      rel = INFINITY;
      ++nonfin;
    } else if (rule == 0) {
      bad = !(diff <= atol + rtol * fabsf(r));
    } else {
      bad = diff > atol && rel > rtol;
    }
    if (bad) ++mism;
    // How far out of tolerance (> 1 fails): the element a person should look at first.
    float badness = !finite ? INFINITY
                    : rule == 0 ? diff / (atol + rtol * fabsf(r))
                                : fminf(diff / fmaxf(atol, 1e-30f), rel / fmaxf(rtol, 1e-30f));
    unsigned long long key = (static_cast<unsigned long long>(__float_as_uint(badness)) << 32) |
                             (0xFFFFFFFFull - static_cast<unsigned long long>(i & 0xFFFFFFFF));
    if (key > worst) worst = key;
    unsigned long long ab = __float_as_uint(diff);
    if (ab > max_abs) max_abs = ab;
    unsigned long long rb = __float_as_uint(rel);
    if (rb > max_rel) max_rel = rb;
  }
  __shared__ typename block_reduce::TempStorage scratch;
  worst = block_combine(worst, scratch, cuda::maximum<unsigned long long>{});
  max_abs = block_combine(max_abs, scratch, cuda::maximum<unsigned long long>{});
  max_rel = block_combine(max_rel, scratch, cuda::maximum<unsigned long long>{});
  mism = block_combine(mism, scratch, cuda::std::plus<unsigned long long>{});
  nonfin = block_combine(nonfin, scratch, cuda::std::plus<unsigned long long>{});
  if (threadIdx.x == 0) {  // only thread 0 holds the block's results
    atomicMax(&acc->v[0], worst);
    atomicMax(&acc->v[1], max_abs);
    atomicMax(&acc->v[2], max_rel);
    if (mism) atomicAdd(&acc->v[3], mism);
    if (nonfin) atomicAdd(&acc->v[4], nonfin);
  }
}

// Runs after compare_kernel on the same stream: the worst element's value and expected value.
template <typename T>
__global__ void fetch_worst_kernel(const T* out, const T* ref, int64_t n, device_checks::slot* acc) {
  int64_t index = static_cast<int64_t>(0xFFFFFFFFull - (acc->v[0] & 0xFFFFFFFFull));
  if (index < 0 || index >= n) return;
  acc->worst_value = to_float(out[index]);
  acc->worst_expected = to_float(ref[index]);
}

template <typename T>
void launch_compare(const void* out, const void* ref, int64_t n, double atol, double rtol, compare_rule rule,
                    device_checks::slot* acc, cudaStream_t s) {
  compare_kernel<T><<<grid_stride_blocks(n), k_grid_stride_threads, 0, s>>>(static_cast<const T*>(out), static_cast<const T*>(ref), n,
                                                        static_cast<float>(atol), static_cast<float>(rtol),
                                                        rule == compare_rule::allclose ? 0 : 1, acc);
  if (n > 0) fetch_worst_kernel<T><<<1, 1, 0, s>>>(static_cast<const T*>(out), static_cast<const T*>(ref), n, acc);
}

double float_of_bits(unsigned long long bits) {
  auto b = static_cast<uint32_t>(bits);
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

}  // namespace

device_checks::device_checks(cudaStream_t stream, std::size_t capacity) : m_stream(stream), m_capacity(capacity) {
  PTXB_CUDA_CALL(cudaMalloc(reinterpret_cast<void**>(&m_device), capacity * sizeof(slot)));
  PTXB_CUDA_CALL(cudaMallocHost(reinterpret_cast<void**>(&m_host), capacity * sizeof(slot)));
  std::memset(m_host, 0, capacity * sizeof(slot));
}

device_checks::~device_checks() {
  PTXB_CUDA_CALL_NOEXCEPT(cudaFreeHost(m_host));
  PTXB_CUDA_CALL_NOEXCEPT(cudaFree(m_device));
}

void device_checks::clear() {
  m_kinds.clear();
  m_collected = false;
  PTXB_CUDA_CALL(cudaMemsetAsync(m_device, 0, m_capacity * sizeof(slot), m_stream));
}

std::size_t device_checks::take(int k) {
  if (m_kinds.size() >= m_capacity)
    throw std::logic_error("device_checks: more than " + std::to_string(m_capacity) + " checks in one batch");
  m_collected = false;
  m_kinds.push_back(k);
  return m_kinds.size() - 1;
}

std::size_t device_checks::check_bytes(const void* data, std::size_t bytes, unsigned char expected) {
  std::size_t i = take(k_bytes);
  if (bytes > 0)
    byte_check_kernel<<<grid_stride_blocks(static_cast<int64_t>(bytes)), k_grid_stride_threads, 0, m_stream>>>(
        static_cast<const unsigned char*>(data), bytes, expected, m_device + i);
  PTXB_CUDA_CALL(cudaGetLastError());
  return i;
}

std::size_t device_checks::checksum(const void* data, std::size_t bytes) {
  std::size_t i = take(k_checksum);
  checksum_kernel<<<grid_stride_blocks(static_cast<int64_t>(bytes / 8 + 1)), k_grid_stride_threads, 0, m_stream>>>(
      static_cast<const unsigned char*>(data), bytes, m_device + i);
  PTXB_CUDA_CALL(cudaGetLastError());
  return i;
}

std::size_t device_checks::compare(const void* out, const void* ref, dtype type, int64_t n, double atol, double rtol,
                                   compare_rule rule) {
  switch (type) {
    case dtype::float32: case dtype::bfloat16: case dtype::float16: break;
    default: throw std::runtime_error(std::string("comparing outputs of dtype ") + std::string(dtype_name(type)) +
                                      " is not supported yet");
  }
  std::size_t i = take(k_compare);
  switch (type) {
    case dtype::float32: launch_compare<float>(out, ref, n, atol, rtol, rule, m_device + i, m_stream); break;
    case dtype::bfloat16: launch_compare<__nv_bfloat16>(out, ref, n, atol, rtol, rule, m_device + i, m_stream); break;
    default: launch_compare<__half>(out, ref, n, atol, rtol, rule, m_device + i, m_stream); break;
  }
  PTXB_CUDA_CALL(cudaGetLastError());
  return i;
}

void device_checks::collect() {
  if (!m_kinds.empty())
    PTXB_CUDA_CALL(cudaMemcpyAsync(m_host, m_device, m_kinds.size() * sizeof(slot), cudaMemcpyDeviceToHost, m_stream));
  PTXB_CUDA_CALL(cudaStreamSynchronize(m_stream));
  m_collected = true;
}

const device_checks::slot& device_checks::collected(std::size_t index, int k) const {
  if (!m_collected || index >= m_kinds.size() || m_kinds[index] != k)
    throw std::logic_error("device_checks: a result read before collect() or of another kind of check");
  return m_host[index];
}

byte_check device_checks::byte_result(std::size_t index) const {
  const auto& s = collected(index, k_bytes);
  return {s.v[0], s.v[0] ? ~s.v[1] : 0};
}

uint64_t device_checks::checksum_result(std::size_t index) const { return collected(index, k_checksum).v[0]; }

compare_stats device_checks::compare_result(std::size_t index) const {
  const auto& s = collected(index, k_compare);
  compare_stats st;
  st.max_absolute_error = float_of_bits(s.v[1]);
  st.max_relative_error = float_of_bits(s.v[2]);
  st.mismatches = static_cast<int64_t>(s.v[3]);
  st.nonfinite = static_cast<int64_t>(s.v[4]);
  // A slot whose comparison saw no element keeps worst = 0 (index 0xFFFFFFFF): no worst element.
  if (s.v[0] != 0) {
    st.worst_index = static_cast<int64_t>(0xFFFFFFFFull - (s.v[0] & 0xFFFFFFFFull));
    st.worst_value = s.worst_value;
    st.worst_expected = s.worst_expected;
  }
  return st;
}

}  // namespace ptxbench::gpu
