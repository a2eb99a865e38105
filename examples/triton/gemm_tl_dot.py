"""C[M, N] = A[M, K] · B[N, K]ᵀ in bfloat16 with fp32 accumulation (task gemm_n7168_k5120).

A grouped-order tile GEMM with `tl.dot`. On Hopper (sm_90a) Triton lowers `tl.dot` on 128x256x64
bf16 tiles with 8 warps to warpgroup MMA (wgmma: HGMMA in the SASS), with the operand tiles staged
through shared memory by a 3-stage cp.async pipeline (num_stages=3); no TMA (the loads are pointer
arithmetic). Expected on a Hopper GPU (h100, h200): PASSED, GMMA executed.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                stride_am, stride_ak, stride_bn, stride_bk, stride_cm, stride_cn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # Grouped launch order: GROUP_M consecutive row tiles reuse the same B tiles while they sit in L2.
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows
    pid_n = (pid % per_group) // rows

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_n[None, :] * stride_bn + offs_k[:, None] * stride_bk  # a [BLOCK_K, BLOCK_N] tile of Bᵀ
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_n[None, :] < N) & (offs_k[:, None] < k_left), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.bfloat16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def run(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor) -> None:
    """Inputs A [M, K] and B [N, K], then the output C [M, N]; launches on the current stream."""
    M, K = A.shape
    N = B.shape[0]
    BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M = 128, 256, 64, 8
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    gemm_kernel[grid](A, B, C, M, N, K,
                      A.stride(0), A.stride(1), B.stride(0), B.stride(1), C.stride(0), C.stride(1),
                      BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                      num_warps=8, num_stages=3)
