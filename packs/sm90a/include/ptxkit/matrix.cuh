// ptxkit/matrix.cuh: warp-collective 8x8 b16 matrix moves between registers and shared memory
// (ldmatrix / stmatrix) and an accumulator -> smem epilogue that
// produces exactly the layout a swizzled TMA store expects.
//
// Fragment layout of one 8x8 b16 matrix in a warp: lane l holds row l/4, columns 2*(l%4) and
// 2*(l%4)+1, packed in one 32-bit register (lower column in the low half). For .xN, lanes
// 8i..8i+7 supply the row addresses (16-byte aligned, one per row) of matrix i.
#pragma once
#include <cstdint>
#include "common.cuh"

namespace ptxkit {

/// Whole warp. Loads four 8x8 b16 matrices; lane l passes the address of row l%8 of matrix l/8.
/// Trans = true delivers the transposed matrices (column-major source).
template <bool Trans = false>
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* row_addr) {
  if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_u32(row_addr)) : "memory");
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_u32(row_addr)) : "memory");
}

/// Whole warp. Two matrices; lanes 0..15 supply addresses (others are ignored but must be valid).
template <bool Trans = false>
__device__ __forceinline__ void ldmatrix_x2(uint32_t (&r)[2], const void* row_addr) {
  if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(smem_u32(row_addr)) : "memory");
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(smem_u32(row_addr)) : "memory");
}

/// Whole warp. Stores four 8x8 b16 matrices (inverse of ldmatrix_x4, same address rule).
/// Generic-proxy writes: fence_proxy_async_smem() before a TMA store or wgmma reads them.
template <bool Trans = false>
__device__ __forceinline__ void stmatrix_x4(void* row_addr, const uint32_t (&r)[4]) {
  if constexpr (Trans)
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
                 :: "r"(smem_u32(row_addr)), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
  else
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                 :: "r"(smem_u32(row_addr)), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
}

/// Whole warp. Two matrices (lanes 0..15 supply addresses).
template <bool Trans = false>
__device__ __forceinline__ void stmatrix_x2(void* row_addr, const uint32_t (&r)[2]) {
  if constexpr (Trans)
    asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};"
                 :: "r"(smem_u32(row_addr)), "r"(r[0]), "r"(r[1]) : "memory");
  else
    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};"
                 :: "r"(smem_u32(row_addr)), "r"(r[0]), "r"(r[1]) : "memory");
}

/// Warpgroup. Writes an m64nN fp32 accumulator tile as bf16 into smem in the layout of a TMA
/// store with swizzle Sw: N/(Sw/2) column blocks, each [64 rows][Sw/2 cols] (64*Sw bytes, block
/// b at tile + b*64*Sw); Sw = none writes one plain row-major [64][N] block. Then:
/// fence_proxy_async_smem(); warpgroup barrier; one thread tma_store_2d per block.
template <int N, swizzle Sw>
__device__ __forceinline__ void stmatrix_acc_bf16(const float (&d)[N / 2], void* tile) {
  constexpr uint32_t row_bytes = Sw == swizzle::none ? N * 2 : static_cast<uint32_t>(Sw);
  constexpr uint32_t block_cols = row_bytes / 2;
  static_assert(N % 16 == 0 && block_cols % 8 == 0 && N % block_cols == 0, "tile must split into column blocks");
  const uint32_t lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
  const uint32_t row = warp * 16 + (lane / 8 % 2) * 8 + lane % 8;  // row this lane addresses
#pragma unroll
  for (int j = 0; j < N / 16; ++j) {  // 16 columns (two 8x8 column halves, two row halves) per step
    const uint32_t col = j * 16 + (lane / 16) * 8;
    const uint32_t off = (col / block_cols) * 64 * row_bytes + row * row_bytes + (col % block_cols) * 2;
    const uint32_t r[4] = {pack_bf16x2(d[8 * j], d[8 * j + 1]), pack_bf16x2(d[8 * j + 2], d[8 * j + 3]),
                           pack_bf16x2(d[8 * j + 4], d[8 * j + 5]), pack_bf16x2(d[8 * j + 6], d[8 * j + 7])};
    stmatrix_x4(static_cast<char*>(tile) + swizzle_offset<Sw>(off), r);
  }
}

}  // namespace ptxkit
