// ptxkit/common.cuh: shared-memory addresses, thread-role indices and small conversions that every
// other ptxkit header uses. Compiles for sm_90a and sm_100a.
#pragma once
#include <cstdint>
#include <cuda_bf16.h>

// Inline-asm operand numbers in blocks of 8 ("%0, ..., %7", "%8, ..., %15", ...), for instructions with
// long register lists (wgmma accumulators, tcgen05.ld/st).
#define PTXKIT_R0 "%0, %1, %2, %3, %4, %5, %6, %7"
#define PTXKIT_R1 "%8, %9, %10, %11, %12, %13, %14, %15"
#define PTXKIT_R2 "%16, %17, %18, %19, %20, %21, %22, %23"
#define PTXKIT_R3 "%24, %25, %26, %27, %28, %29, %30, %31"
#define PTXKIT_R4 "%32, %33, %34, %35, %36, %37, %38, %39"
#define PTXKIT_R5 "%40, %41, %42, %43, %44, %45, %46, %47"
#define PTXKIT_R6 "%48, %49, %50, %51, %52, %53, %54, %55"
#define PTXKIT_R7 "%56, %57, %58, %59, %60, %61, %62, %63"
#define PTXKIT_R8 "%64, %65, %66, %67, %68, %69, %70, %71"
#define PTXKIT_R9 "%72, %73, %74, %75, %76, %77, %78, %79"
#define PTXKIT_R10 "%80, %81, %82, %83, %84, %85, %86, %87"
#define PTXKIT_R11 "%88, %89, %90, %91, %92, %93, %94, %95"
#define PTXKIT_R12 "%96, %97, %98, %99, %100, %101, %102, %103"
#define PTXKIT_R13 "%104, %105, %106, %107, %108, %109, %110, %111"
#define PTXKIT_R14 "%112, %113, %114, %115, %116, %117, %118, %119"
#define PTXKIT_R15 "%120, %121, %122, %123, %124, %125, %126, %127"
// Brace lists of the first N operands, e.g. PTXKIT_LIST16 = "{%0, ..., %15}".
#define PTXKIT_LIST8 "{" PTXKIT_R0 "}"
#define PTXKIT_LIST16 "{" PTXKIT_R0 ", " PTXKIT_R1 "}"
#define PTXKIT_LIST32 "{" PTXKIT_R0 ", " PTXKIT_R1 ", " PTXKIT_R2 ", " PTXKIT_R3 "}"
#define PTXKIT_LIST48 "{" PTXKIT_R0 ", " PTXKIT_R1 ", " PTXKIT_R2 ", " PTXKIT_R3 ", " PTXKIT_R4 ", " PTXKIT_R5 "}"
#define PTXKIT_LIST64 "{" PTXKIT_R0 ", " PTXKIT_R1 ", " PTXKIT_R2 ", " PTXKIT_R3 ", " PTXKIT_R4 ", " PTXKIT_R5 ", " PTXKIT_R6 ", " PTXKIT_R7 "}"
#define PTXKIT_LIST96 "{" PTXKIT_R0 ", " PTXKIT_R1 ", " PTXKIT_R2 ", " PTXKIT_R3 ", " PTXKIT_R4 ", " PTXKIT_R5 ", " PTXKIT_R6 ", " PTXKIT_R7 ", " PTXKIT_R8 ", " PTXKIT_R9 ", " PTXKIT_R10 ", " PTXKIT_R11 "}"
#define PTXKIT_LIST128 "{" PTXKIT_R0 ", " PTXKIT_R1 ", " PTXKIT_R2 ", " PTXKIT_R3 ", " PTXKIT_R4 ", " PTXKIT_R5 ", " PTXKIT_R6 ", " PTXKIT_R7 ", " PTXKIT_R8 ", " PTXKIT_R9 ", " PTXKIT_R10 ", " PTXKIT_R11 ", " PTXKIT_R12 ", " PTXKIT_R13 ", " PTXKIT_R14 ", " PTXKIT_R15 "}"

namespace ptxkit {

/// Shared-memory swizzle mode, shared by TMA tensor maps and wgmma/tcgen05 descriptors. The value
/// is the span in bytes of one swizzled row: 16-byte chunk j of row r lands at chunk j XOR (r mod
/// span/16), with r counted in 128-byte address lines. A TMA box's inner extent must fit the span.
enum class swizzle : uint32_t { none = 0, b32 = 32, b64 = 64, b128 = 128 };

/// Any thread. The 32-bit shared-window address that PTX shared-memory operands expect.
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// Any thread. Applies the TMA/wgmma swizzle to a byte offset inside a 1024-byte-aligned tile:
/// 16-byte chunk bits [4, 4+b) are XORed with bits [7, 7+b), b = log2(Sw / 16).
template <swizzle Sw>
__device__ __forceinline__ uint32_t swizzle_offset(uint32_t byte_offset) {
  constexpr uint32_t mask = Sw == swizzle::none ? 0 : static_cast<uint32_t>(Sw) / 16 - 1;
  return byte_offset ^ (((byte_offset >> 7) & mask) << 4);
}

/// Any thread. Lane (0..31) within the warp.
__device__ __forceinline__ uint32_t lane_id() {
  uint32_t l;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
}

/// Any thread. Warp index within the CTA, made warp-uniform so the compiler can branch on it
/// without divergence.
__device__ __forceinline__ uint32_t warp_id() {
  return __shfl_sync(0xffffffffu, threadIdx.x / 32, 0);
}

/// Any thread. Warpgroup index (4 consecutive warps = 128 threads) within the CTA, warp-uniform.
__device__ __forceinline__ uint32_t warpgroup_id() {
  return __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
}

/// Any thread. The SM this CTA runs on (for debugging and persistent schedulers).
__device__ __forceinline__ uint32_t sm_id() {
  uint32_t s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

/// Any thread. Packs two floats into a bf16x2 register: `lo` in bits 0..15, `hi` in 16..31
/// (round to nearest). This is the operand order of wgmma A fragments and stmatrix.
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

/// Any thread. 2^x with the MUFU unit (approximate, flushes denormals). Softmax uses
/// exp(x) = exp2(x * log2(e)); fold log2(e) into the score scale once.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// Compile-time byte count of `n` elements of T (used for mbarrier transaction counts).
template <typename T>
__host__ __device__ constexpr uint32_t bytes_of(uint32_t n) { return n * static_cast<uint32_t>(sizeof(T)); }

}  // namespace ptxkit
