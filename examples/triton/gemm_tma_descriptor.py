"""C[M, N] = A[M, K] · B[N, K]ᵀ in bfloat16 with fp32 accumulation (task gemm_n7168_k5120), with
TMA: the host builds tensor descriptors (triton.tools.tensor_descriptor.TensorDescriptor, a
CUtensorMap per operand) and the kernel loads tiles with `desc.load(...)`, which Triton lowers on
Hopper to TMA bulk tensor copies (UTMALDG in the SASS) feeding wgmma (HGMMA). The output is written
through a descriptor as well (TMA store). A persistent grid of one program per SM walks the tiles
in grouped order.
Not evaluable by the launch-plan replay: a host descriptor is a CUtensorMap the launch passes by
value, built in the capture process around that process's addresses, so the plan cannot bind it to
the harness's tensors (docs/gpu-evaluation.md, "Triton candidates").
Expected: COMPILE_ERROR (outcome rejected) at link_gate, "host tensor descriptors are not supported".
"""
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def gemm_tma_kernel(a_desc, b_desc, c_desc, M, N, K,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                    NUM_SMS: tl.constexpr):
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles = tiles_m * tiles_n
    k_steps = tl.cdiv(K, BLOCK_K)
    per_group = GROUP_M * tiles_n
    for tile in tl.range(tl.program_id(0), tiles, NUM_SMS):
        first_m = (tile // per_group) * GROUP_M
        rows = min(tiles_m - first_m, GROUP_M)
        pid_m = first_m + (tile % per_group) % rows
        pid_n = (tile % per_group) // rows
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(k_steps):
            a = a_desc.load([off_m, k * BLOCK_K])   # [BLOCK_M, BLOCK_K] by TMA
            b = b_desc.load([off_n, k * BLOCK_K])   # [BLOCK_N, BLOCK_K] by TMA
            acc = tl.dot(a, b.T, acc)
        c_desc.store([off_m, off_n], acc.to(tl.bfloat16))


def run(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor) -> None:
    M, K = A.shape
    N = B.shape[0]
    # 128x128x64 tiles in 4 stages: 128 KiB of shared memory for the pipeline, 32 KiB for the
    # output tile the TMA store reads.
    BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 128, 64, 8
    # Descriptors describe the whole tensor and the tile each load or store moves.
    a_desc = TensorDescriptor.from_tensor(A, [BLOCK_M, BLOCK_K])
    b_desc = TensorDescriptor.from_tensor(B, [BLOCK_N, BLOCK_K])
    c_desc = TensorDescriptor.from_tensor(C, [BLOCK_M, BLOCK_N])
    sms = torch.cuda.get_device_properties(A.device).multi_processor_count
    tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)
    grid = (min(sms, tiles),)
    gemm_tma_kernel[grid](a_desc, b_desc, c_desc, M, N, K,
                          BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M, NUM_SMS=sms,
                          num_warps=8, num_stages=4)
