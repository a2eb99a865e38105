// GPU tests of ptxkit/wgmma.cuh (with TMA-loaded operands) on an sm_90a device: every m64nNk16
// shape family with A from shared memory and from registers, K-major operands in all four
// swizzle modes, an MN-major (transposed) B and A, the accumulator -> A-fragment path of attention, a
// warp-specialised pipeline with setmaxnreg, and the stmatrix + TMA-store epilogue.
// Inputs are small integers, so every product and sum is exact and results compare with ==.
#include <ptxkit/fence.cuh>
#include <ptxkit/matrix.cuh>
#include <ptxkit/mbarrier.cuh>
#include <ptxkit/tensor_map.cuh>
#include <ptxkit/tma.cuh>
#include <ptxkit/warp.cuh>
#include <ptxkit/wgmma.cuh>

#include "gpu_test_support.cuh"

namespace ptxbench::gpu_test {
namespace {

using ptxkit::swizzle;

class PackWgmma : public hopper_test {};

constexpr int kK = 64;  // every test multiplies over K = 64: four k16 steps

/// Host: C[64][N] = A[64][K] * B, B given K-major ([N][K]) or MN-major ([K][N]).
std::vector<float> host_gemm(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, int n, bool b_mn_major) {
  std::vector<float> c(64 * n, 0.f);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < n; ++j) {
      float s = 0;
      for (int k = 0; k < kK; ++k) s += bf16_value(a[i * kK + k]) * bf16_value(b_mn_major ? b[k * n + j] : b[j * kK + k]);
      c[i * n + j] = s;
    }
  return c;
}

/// Box width in elements for a K-major operand under a swizzle mode (none: 8 = one core matrix).
__host__ __device__ constexpr int box_cols_for(swizzle sw) { return sw == swizzle::none ? 8 : static_cast<int>(sw) / 2; }

/// Any thread: the descriptor of k16 step kk of a K-major [rows][64] operand stored as 64/box_cols
/// TMA boxes of [rows][box_cols], box b at base + b * rows * box_cols * 2.
template <swizzle Sw>
__device__ uint64_t k_major_desc(const uint8_t* base, int rows, int kk) {
  constexpr int bc = box_cols_for(Sw);
  if constexpr (Sw == swizzle::none) {
    // Boxes of 8 columns are core-matrix columns: K-direction neighbours are one box apart
    // (LBO = rows*16), M/N-direction 8-row groups are 128 bytes apart (SBO).
    return ptxkit::make_wgmma_desc(base + 2 * kk * rows * 16, swizzle::none, rows * 16, 128);
  } else {
    const int k = kk * 16, box = k / bc;
    return ptxkit::desc_advance(ptxkit::make_desc_k_major<Sw>(base + box * rows * bc * 2), (k % bc) * 2);
  }
}

/// One thread: TMA-loads a K-major [rows][64] operand as 64/box_cols boxes.
__device__ void load_k_major(uint8_t* dst, const CUtensorMap* map, uint64_t* bar, int rows, int box_cols) {
  for (int b = 0; b < kK / box_cols; ++b) ptxkit::tma_load_2d(dst + b * rows * box_cols * 2, map, bar, b * box_cols, 0);
}

enum class a_source { smem, regs };

template <int N, swizzle Sw, a_source ASrc, bool BMnMajor>
__global__ void wgmma_kernel(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
                             const uint16_t* a_global, float* out) {
  extern __shared__ uint8_t raw[];
  __shared__ uint64_t bar;
  uint8_t* sa = align1024(raw);
  uint8_t* sb = sa + 64 * kK * 2;
  if (threadIdx.x == 0) {
    ptxkit::mbar_init(&bar, 1);
    ptxkit::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxkit::mbar_arrive_expect_tx(&bar, (64 + N) * kK * 2);
    load_k_major(sa, &ta, &bar, 64, box_cols_for(Sw));
    if constexpr (BMnMajor) {  // [64 k][N]: N/64 column blocks of [64 k][64 n], 8 KB apart
      for (int b = 0; b < N / 64; ++b) ptxkit::tma_load_2d(sb + b * 8192, &tb, &bar, b * 64, 0);
    } else {
      load_k_major(sb, &tb, &bar, N, box_cols_for(Sw));
    }
  }
  wait_or_trap(&bar, 0);
  float d[N / 2];
  for (int i = 0; i < N / 2; ++i) d[i] = 12345.f;  // must be ignored: the first step does not accumulate
  uint32_t a[kK / 16][4] = {};
  if constexpr (ASrc == a_source::regs) {  // register fragments, read straight from global memory
    const int t = threadIdx.x, row = (t / 32) * 16 + (t % 32) / 4;
    auto pair = [&](int r, int c) { return *reinterpret_cast<const uint32_t*>(a_global + r * kK + c); };
    for (int kk = 0; kk < kK / 16; ++kk) {
      const int col = kk * 16 + 2 * (t % 4);
      a[kk][0] = pair(row, col);
      a[kk][1] = pair(row + 8, col);
      a[kk][2] = pair(row, col + 8);
      a[kk][3] = pair(row + 8, col + 8);
    }
  }
  ptxkit::wgmma_fence();  // after the accumulators and every A fragment are written
#pragma unroll
  for (int kk = 0; kk < kK / 16; ++kk) {
    uint64_t db;
    if constexpr (BMnMajor) db = ptxkit::desc_advance(ptxkit::make_desc_mn_major<swizzle::b128>(sb, 8192), kk * 16 * 128);
    else db = k_major_desc<Sw>(sb, N, kk);
    if constexpr (ASrc == a_source::smem)
      ptxkit::wgmma_ss<N, 0, BMnMajor ? 1 : 0>(d, k_major_desc<Sw>(sa, 64, kk), db, kk > 0);
    else
      ptxkit::wgmma_rs<N, BMnMajor ? 1 : 0>(d, a[kk], db, kk > 0);
  }
  ptxkit::wgmma_commit();
  ptxkit::wgmma_wait<0>();
  ptxkit::fence_regs(d);
  for (int i = 0; i < N / 2; ++i) out[ptxkit::acc_row(i) * N + ptxkit::acc_col(i)] = d[i];
}

template <int N, swizzle Sw, a_source ASrc, bool BMnMajor>
void run_wgmma_case() {
  const auto a = small_int_matrix(64 * kK, 2, 1), b = small_int_matrix(N * kK, 2, 2);
  device_buffer<uint16_t> da(a.size()), db(b.size());
  device_buffer<float> out(64 * N);
  PTXBENCH_CUDA_OK(da.upload(a));
  PTXBENCH_CUDA_OK(db.upload(b));
  const int bc = box_cols_for(Sw);
  const CUtensorMap ta = ptxkit::make_tma_2d_bf16(da.ptr, 64, kK, kK, 64, bc, Sw);
  const CUtensorMap tb = BMnMajor ? ptxkit::make_tma_2d_bf16(db.ptr, kK, N, N, kK, 64, swizzle::b128)
                                  : ptxkit::make_tma_2d_bf16(db.ptr, N, kK, kK, N, bc, Sw);
  const int smem = (64 + N) * kK * 2 + 1024;
  auto kernel = wgmma_kernel<N, Sw, ASrc, BMnMajor>;
  PTXBENCH_CUDA_OK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kernel<<<1, 128, smem>>>(ta, tb, da.ptr, out.ptr);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> got;
  PTXBENCH_CUDA_OK(out.download(got));
  const auto want = host_gemm(a, b, N, BMnMajor);
  int bad = 0;
  for (int i = 0; i < 64 * N; ++i)
    if (got[i] != want[i] && bad++ < 5)
      ADD_FAILURE() << "C[" << i / N << "][" << i % N << "] = " << got[i] << ", want " << want[i];
  EXPECT_EQ(bad, 0) << "N=" << N << " swizzle " << static_cast<int>(Sw);
}

TEST_F(PackWgmma, SmemOperandsN64Swizzle128) { run_wgmma_case<64, swizzle::b128, a_source::smem, false>(); }
TEST_F(PackWgmma, SmemOperandsN96Swizzle128) { run_wgmma_case<96, swizzle::b128, a_source::smem, false>(); }
TEST_F(PackWgmma, SmemOperandsN128Swizzle128) { run_wgmma_case<128, swizzle::b128, a_source::smem, false>(); }
TEST_F(PackWgmma, SmemOperandsN256Swizzle128) { run_wgmma_case<256, swizzle::b128, a_source::smem, false>(); }
TEST_F(PackWgmma, SmemOperandsN64Swizzle64) { run_wgmma_case<64, swizzle::b64, a_source::smem, false>(); }
TEST_F(PackWgmma, SmemOperandsN64Swizzle32) { run_wgmma_case<64, swizzle::b32, a_source::smem, false>(); }
TEST_F(PackWgmma, SmemOperandsN64Unswizzled) { run_wgmma_case<64, swizzle::none, a_source::smem, false>(); }
TEST_F(PackWgmma, RegisterAN64) { run_wgmma_case<64, swizzle::b128, a_source::regs, false>(); }
TEST_F(PackWgmma, RegisterAN128) { run_wgmma_case<128, swizzle::b128, a_source::regs, false>(); }
TEST_F(PackWgmma, RegisterAN256) { run_wgmma_case<256, swizzle::b128, a_source::regs, false>(); }
TEST_F(PackWgmma, TransposedBN128) { run_wgmma_case<128, swizzle::b128, a_source::smem, true>(); }
TEST_F(PackWgmma, TransposedBRegisterAN64) { run_wgmma_case<64, swizzle::b128, a_source::regs, true>(); }

// An MN-major (transposed) A from smem, TransA = 1, with an MN-major B (N = 64): the configuration of
// dQ = dS K in examples/reference/mha_bwd.cu, where A = dS is stored as dS^T [key][query]. A is
// stored [64 k][64 m] (one 128-byte-swizzled box, 8 K-rows per 1024 bytes), read with the same
// make_desc_mn_major descriptor as a transposed B, advanced 16 K-rows (2048 bytes) per k16 step.
__global__ void transposed_a_kernel(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
                                    float* out) {
  extern __shared__ uint8_t raw[];
  __shared__ uint64_t bar;
  uint8_t* sa = align1024(raw);
  uint8_t* sb = sa + 8192;
  if (threadIdx.x == 0) {
    ptxkit::mbar_init(&bar, 1);
    ptxkit::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxkit::mbar_arrive_expect_tx(&bar, 2 * 8192);
    ptxkit::tma_load_2d(sa, &ta, &bar, 0, 0);
    ptxkit::tma_load_2d(sb, &tb, &bar, 0, 0);
  }
  wait_or_trap(&bar, 0);
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 12345.f;
  ptxkit::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kK / 16; ++kk)
    ptxkit::wgmma_m64n64k16_ss<1, 1>(d, ptxkit::desc_advance(ptxkit::make_desc_mn_major<swizzle::b128>(sa, 8192), kk * 2048),
                                     ptxkit::desc_advance(ptxkit::make_desc_mn_major<swizzle::b128>(sb, 8192), kk * 2048),
                                     kk > 0);
  ptxkit::wgmma_commit();
  ptxkit::wgmma_wait<0>();
  ptxkit::fence_regs(d);
  for (int i = 0; i < 32; ++i) out[ptxkit::acc_row(i) * 64 + ptxkit::acc_col(i)] = d[i];
}

TEST_F(PackWgmma, TransposedATransposedBN64) {
  const auto at = small_int_matrix(kK * 64, 2, 3), b = small_int_matrix(kK * 64, 2, 4);  // [k][m], [k][n]
  device_buffer<uint16_t> da(at.size()), db(b.size());
  device_buffer<float> out(64 * 64);
  PTXBENCH_CUDA_OK(da.upload(at));
  PTXBENCH_CUDA_OK(db.upload(b));
  const CUtensorMap ta = ptxkit::make_tma_2d_bf16(da.ptr, kK, 64, 64, kK, 64, swizzle::b128);
  const CUtensorMap tb = ptxkit::make_tma_2d_bf16(db.ptr, kK, 64, 64, kK, 64, swizzle::b128);
  const int smem = 2 * 8192 + 1024;
  PTXBENCH_CUDA_OK(cudaFuncSetAttribute(transposed_a_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  transposed_a_kernel<<<1, 128, smem>>>(ta, tb, out.ptr);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> got;
  PTXBENCH_CUDA_OK(out.download(got));
  int bad = 0;
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < 64; ++n) {
      float want = 0;
      for (int k = 0; k < kK; ++k) want += bf16_value(at[k * 64 + m]) * bf16_value(b[k * 64 + n]);
      if (got[m * 64 + n] != want && bad++ < 5)
        ADD_FAILURE() << "C[" << m << "][" << n << "] = " << got[m * 64 + n] << ", want " << want;
    }
  EXPECT_EQ(bad, 0);
}

// Attention's two GEMMs: S = Q K^T (A and B from smem), then P = bf16(S) converted in registers
// with acc_to_a_frag and O = P V with V [kv][d] as an MN-major B (TransB = 1).
__global__ void attention_path_kernel(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
                                      const __grid_constant__ CUtensorMap tv, float* out) {
  extern __shared__ uint8_t raw[];
  __shared__ uint64_t bar;
  uint8_t* sq = align1024(raw);
  uint8_t *sk = sq + 8192, *sv = sq + 16384;
  if (threadIdx.x == 0) {
    ptxkit::mbar_init(&bar, 1);
    ptxkit::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxkit::mbar_arrive_expect_tx(&bar, 3 * 8192);
    ptxkit::tma_load_2d(sq, &tq, &bar, 0, 0);
    ptxkit::tma_load_2d(sk, &tk, &bar, 0, 0);
    ptxkit::tma_load_2d(sv, &tv, &bar, 0, 0);
  }
  wait_or_trap(&bar, 0);
  float s[32] = {}, o[32] = {};
  const uint64_t dq = ptxkit::make_desc_k_major<swizzle::b128>(sq), dk = ptxkit::make_desc_k_major<swizzle::b128>(sk);
  ptxkit::wgmma_fence();
  for (int kk = 0; kk < 4; ++kk)
    ptxkit::wgmma_m64n64k16_ss(s, ptxkit::desc_advance(dq, kk * 32), ptxkit::desc_advance(dk, kk * 32), 1);
  ptxkit::wgmma_commit();
  ptxkit::wgmma_wait<0>();
  ptxkit::fence_regs(s);
  uint32_t p[4][4];
  for (int kk = 0; kk < 4; ++kk) ptxkit::acc_to_a_frag(s, kk, p[kk]);
  const uint64_t dv = ptxkit::make_desc_mn_major<swizzle::b128>(sv, 8192);
  ptxkit::wgmma_fence();
  for (int kk = 0; kk < 4; ++kk) ptxkit::wgmma_m64n64k16_rs<1>(o, p[kk], ptxkit::desc_advance(dv, kk * 2048), 1);
  ptxkit::wgmma_commit();
  ptxkit::wgmma_wait<0>();
  ptxkit::fence_regs(o);
  for (int i = 0; i < 32; ++i) out[ptxkit::acc_row(i) * 64 + ptxkit::acc_col(i)] = o[i];
}

TEST_F(PackWgmma, AccumulatorToRegisterFragmentComputesSoftmaxTimesV) {
  const auto q = small_int_matrix(64 * 64, 1, 3), k = small_int_matrix(64 * 64, 1, 4), v = small_int_matrix(64 * 64, 1, 5);
  device_buffer<uint16_t> dq(q.size()), dk(k.size()), dv(v.size());
  device_buffer<float> out(64 * 64);
  PTXBENCH_CUDA_OK(dq.upload(q));
  PTXBENCH_CUDA_OK(dk.upload(k));
  PTXBENCH_CUDA_OK(dv.upload(v));
  const CUtensorMap tq = ptxkit::make_tma_2d_bf16(dq.ptr, 64, 64, 64, 64, 64, swizzle::b128);
  const CUtensorMap tk = ptxkit::make_tma_2d_bf16(dk.ptr, 64, 64, 64, 64, 64, swizzle::b128);
  const CUtensorMap tv = ptxkit::make_tma_2d_bf16(dv.ptr, 64, 64, 64, 64, 64, swizzle::b128);
  attention_path_kernel<<<1, 128, 3 * 8192 + 1024>>>(tq, tk, tv, out.ptr);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> got;
  PTXBENCH_CUDA_OK(out.download(got));
  const auto s = host_gemm(q, k, 64, false);  // S = Q K^T (K given as [kv][d], i.e. K-major)
  std::vector<uint16_t> p(64 * 64);
  for (int i = 0; i < 64 * 64; ++i) p[i] = bf16_bits(s[i]);
  const auto want = host_gemm(p, v, 64, true);  // O = P V (V given as [kv][d], MN-major)
  for (int i = 0; i < 64 * 64; ++i) ASSERT_EQ(got[i], want[i]) << "O[" << i / 64 << "][" << i % 64 << "]";
}

// Warp specialisation: warpgroup 0 gives registers back (setmaxnreg.dec) and streams K tiles with
// TMA through a 3-stage ring; warpgroups 1 and 2 take registers (setmaxnreg.inc) and run wgmma.
constexpr int kWsStages = 3, kWsK = 512;

__global__ void __launch_bounds__(384, 1) ws_kernel(const __grid_constant__ CUtensorMap ta,
                                                     const __grid_constant__ CUtensorMap tb, float* out) {
  extern __shared__ uint8_t raw[];
  __shared__ uint64_t full[kWsStages], empty[kWsStages];
  uint8_t* smem = align1024(raw);
  constexpr uint32_t kTile = 128 * 64 * 2, kStage = 2 * kTile;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kWsStages; ++s) {
      ptxkit::mbar_init(&full[s], 1);
      ptxkit::mbar_init(&empty[s], 8);  // 2 consumer warpgroups x 4 warps
    }
    ptxkit::fence_mbarrier_init();
  }
  __syncthreads();
  const uint32_t wg = ptxkit::warpgroup_id();
  ptxkit::ring_pos<kWsStages> pos;
  if (wg == 0) {
    ptxkit::setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      for (int kt = 0; kt < kWsK / 64; ++kt) {
        ptxkit::mbar_wait(&empty[pos.index], pos.phase ^ 1);
        ptxkit::mbar_arrive_expect_tx(&full[pos.index], kStage);
        ptxkit::tma_load_2d(smem + pos.index * kStage, &ta, &full[pos.index], kt * 64, 0);
        ptxkit::tma_load_2d(smem + pos.index * kStage + kTile, &tb, &full[pos.index], kt * 64, 0);
        pos.advance();
      }
    }
    return;
  }
  ptxkit::setmaxnreg_inc<232>();
  float d[64] = {};
  for (int kt = 0; kt < kWsK / 64; ++kt) {
    ptxkit::mbar_wait(&full[pos.index], pos.phase);
    const uint8_t* a = smem + pos.index * kStage + (wg - 1) * 64 * 128;
    const uint64_t da = ptxkit::make_desc_k_major<swizzle::b128>(a);
    const uint64_t db = ptxkit::make_desc_k_major<swizzle::b128>(smem + pos.index * kStage + kTile);
    ptxkit::wgmma_fence();
    for (int kk = 0; kk < 4; ++kk)
      ptxkit::wgmma_m64n128k16_ss(d, ptxkit::desc_advance(da, kk * 32), ptxkit::desc_advance(db, kk * 32), 1);
    ptxkit::wgmma_commit();
    ptxkit::wgmma_wait<0>();
    if (threadIdx.x % 32 == 0) ptxkit::mbar_arrive(&empty[pos.index]);
    pos.advance();
  }
  ptxkit::fence_regs(d);
  for (int i = 0; i < 64; ++i) out[((wg - 1) * 64 + ptxkit::acc_row(i)) * 128 + ptxkit::acc_col(i)] = d[i];
}

TEST_F(PackWgmma, WarpSpecialisedRingWithSetmaxnreg) {
  const auto a = small_int_matrix(128 * kWsK, 1, 6), b = small_int_matrix(128 * kWsK, 1, 7);
  device_buffer<uint16_t> da(a.size()), db(b.size());
  device_buffer<float> out(128 * 128);
  PTXBENCH_CUDA_OK(da.upload(a));
  PTXBENCH_CUDA_OK(db.upload(b));
  const CUtensorMap ta = ptxkit::make_tma_2d_bf16(da.ptr, 128, kWsK, kWsK, 128, 64, swizzle::b128);
  const CUtensorMap tb = ptxkit::make_tma_2d_bf16(db.ptr, 128, kWsK, kWsK, 128, 64, swizzle::b128);
  const int smem = kWsStages * 2 * 128 * 64 * 2 + 1024;
  PTXBENCH_CUDA_OK(cudaFuncSetAttribute(ws_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  ws_kernel<<<1, 384, smem>>>(ta, tb, out.ptr);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> got;
  PTXBENCH_CUDA_OK(out.download(got));
  for (int i = 0; i < 128; ++i)
    for (int j = 0; j < 128; ++j) {
      float want = 0;
      for (int k = 0; k < kWsK; ++k) want += bf16_value(a[i * kWsK + k]) * bf16_value(b[j * kWsK + k]);
      ASSERT_EQ(got[i * 128 + j], want) << "C[" << i << "][" << j << "]";
    }
}

// Epilogue: accumulators -> bf16 smem via stmatrix in the TMA-store layout -> TMA store.
template <swizzle Sw>
__global__ void epilogue_kernel(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
                                const __grid_constant__ CUtensorMap tc) {
  extern __shared__ uint8_t raw[];
  __shared__ uint64_t bar;
  uint8_t* sa = align1024(raw);
  uint8_t *sb = sa + 8192, *stage = sa + 8192 + 16384;
  if (threadIdx.x == 0) {
    ptxkit::mbar_init(&bar, 1);
    ptxkit::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxkit::mbar_arrive_expect_tx(&bar, 8192 + 16384);
    ptxkit::tma_load_2d(sa, &ta, &bar, 0, 0);
    ptxkit::tma_load_2d(sb, &tb, &bar, 0, 0);
  }
  wait_or_trap(&bar, 0);
  float d[64] = {};
  const uint64_t da = ptxkit::make_desc_k_major<swizzle::b128>(sa), db = ptxkit::make_desc_k_major<swizzle::b128>(sb);
  ptxkit::wgmma_fence();
  for (int kk = 0; kk < 4; ++kk)
    ptxkit::wgmma_ss<128>(d, ptxkit::desc_advance(da, kk * 32), ptxkit::desc_advance(db, kk * 32), 1);
  ptxkit::wgmma_commit();
  ptxkit::wgmma_wait<0>();
  ptxkit::fence_regs(d);
  ptxkit::stmatrix_acc_bf16<128, Sw>(d, stage);
  ptxkit::fence_proxy_async_smem();
  ptxkit::named_barrier_sync<128>(1);
  if (threadIdx.x == 0) {
    constexpr int row_bytes = Sw == swizzle::none ? 256 : static_cast<int>(Sw), block_cols = row_bytes / 2;
    for (int b = 0; b < 128 / block_cols; ++b) ptxkit::tma_store_2d(&tc, stage + b * 64 * row_bytes, b * block_cols, 0);
    ptxkit::bulk_commit_group();
    ptxkit::bulk_wait_group<0>();
  }
}

template <swizzle Sw>
void run_epilogue_case() {
  const auto a = small_int_matrix(64 * 64, 2, 8), b = small_int_matrix(128 * 64, 2, 9);
  device_buffer<uint16_t> da(a.size()), db(b.size()), dc(64 * 128);
  PTXBENCH_CUDA_OK(da.upload(a));
  PTXBENCH_CUDA_OK(db.upload(b));
  PTXBENCH_CUDA_OK(cudaMemset(dc.ptr, 0xff, 64 * 128 * 2));
  const int block_cols = Sw == swizzle::none ? 128 : static_cast<int>(Sw) / 2;
  const CUtensorMap ta = ptxkit::make_tma_2d_bf16(da.ptr, 64, 64, 64, 64, 64, swizzle::b128);
  const CUtensorMap tb = ptxkit::make_tma_2d_bf16(db.ptr, 128, 64, 64, 128, 64, swizzle::b128);
  const CUtensorMap tc = ptxkit::make_tma_2d_bf16(dc.ptr, 64, 128, 128, 64, block_cols, Sw);
  const int smem = 8192 + 16384 + 16384 + 1024;
  PTXBENCH_CUDA_OK(cudaFuncSetAttribute(epilogue_kernel<Sw>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  epilogue_kernel<Sw><<<1, 128, smem>>>(ta, tb, tc);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint16_t> got;
  PTXBENCH_CUDA_OK(dc.download(got));
  const auto want = host_gemm(a, b, 128, false);
  for (int i = 0; i < 64 * 128; ++i)
    ASSERT_EQ(got[i], bf16_bits(want[i])) << "C[" << i / 128 << "][" << i % 128 << "] swizzle " << static_cast<int>(Sw);
}

TEST_F(PackWgmma, StmatrixTmaStoreEpilogueUnswizzled) { run_epilogue_case<swizzle::none>(); }
TEST_F(PackWgmma, StmatrixTmaStoreEpilogueSwizzle64) { run_epilogue_case<swizzle::b64>(); }
TEST_F(PackWgmma, StmatrixTmaStoreEpilogueSwizzle128) { run_epilogue_case<swizzle::b128>(); }

}  // namespace
}  // namespace ptxbench::gpu_test
