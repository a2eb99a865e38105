#pragma once
// The arithmetic one tensor-core instruction does, read from its SASS mnemonic.
//
// A Hopper wgmma compiles to one GMMA instruction (HGMMA, QGMMA, IGMMA, BGMMA) whose mnemonic
// carries the tile shape, e.g. HGMMA.64x128x16.F32.BF16: D[64x128] += A[64x16] · B[16x128], i.e.
// 64·128·16 multiply-adds = 2·64·128·16 = 262,144 FLOPs, done once per warpgroup (4 warps, 128
// threads) that executes it.
//
// Counting unit (Nsight Compute's source page, fixture tests/fixtures/ncu/probe_source_page.csv):
// `inst_executed` is per warp and `thread_inst_executed_true` per thread whose guard predicate was
// true. wgmma_probe launches one block of 128 threads and executes its single
// HGMMA.64x8x16.F32.BF16 once; the page shows inst_executed 4 (four warps) and
// thread_inst_executed_true 128. So warpgroup executions = predicate-on thread instructions / 128,
// and a GMMA instruction under a false predicate (or in dead code) adds nothing.
//
// tcgen05 (Blackwell) MMAs take their shape from an instruction descriptor in a register
// (UTCHMMA ... idesc[...]), not from the mnemonic, so their FLOPs cannot be read from SASS text.

#include <optional>
#include <string_view>

namespace ptxbench::sass {

/// Warp-level executions and predicate-on thread executions that make one warpgroup-wide execution.
inline constexpr int k_warps_per_warpgroup = 4;
inline constexpr int k_threads_per_warpgroup = 128;

struct mma_shape {
  int m = 0, n = 0, k = 0;
  [[nodiscard]] double flops() const { return 2.0 * m * n * k; }
};

/// The MxNxK shape of a GMMA mnemonic ("HGMMA.64x128x16.F32.BF16" → 64, 128, 16). nullopt when the
/// base opcode is not a GMMA opcode or no dot-separated part reads MxNxK.
std::optional<mma_shape> gmma_shape(std::string_view mnemonic);

}  // namespace ptxbench::sass
