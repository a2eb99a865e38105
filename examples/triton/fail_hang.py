"""Failure example (task gemm_n7168_k5120): a kernel that never finishes. run() computes the GEMM,
then launches a kernel that spins while its argument `spin` is not 0. The first call (the Triton
runner's warm-up, where Triton compiles) passes 0 and returns; every later call passes 16, so the
plan captured from the next two calls spins, and the first replayed call (the sanitizer's, or with
--no-sanitize the first correctness trial) never answers: the harness kills the runner at the call's
deadline, and the next candidate evaluates normally. (0 and 16 get the same Triton specialisation,
so nothing compiles after the warm-up.)
Expected: TIMEOUT "no answer within" (at correctness with --no-sanitize, as bench/triton/triton_gpu.sh
runs it).
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



@triton.jit
def spin_kernel(c_ptr, spin):
    # A volatile load in the loop keeps it from being folded away; `keep` never changes while spin != 0.
    keep = spin
    while keep != 0:
        keep = (tl.load(c_ptr, volatile=True) * 0).to(tl.int32) + spin


_calls = [0]


def run(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor) -> None:
    M, K = A.shape
    N = B.shape[0]
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 256),)
    gemm_kernel[grid](A, B, C, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1), C.stride(0), C.stride(1),
                      BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3)
    _calls[0] += 1
    spin_kernel[(1,)](C, 0 if _calls[0] == 1 else 16)
