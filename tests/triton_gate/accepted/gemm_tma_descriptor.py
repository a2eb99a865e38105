"""C = A · Bᵀ with device-side tensor descriptors (`tl.make_tensor_descriptor`): TMA loads and
stores on Hopper. Device-side descriptors need a global scratch allocator, given with
`triton.set_allocator`; the allocator is plain allocation (`torch.empty`), which the gate allows.
"""
from __future__ import annotations

from typing import Optional

import torch
import triton
import triton.language as tl


def _descriptor_workspace(size: int, alignment: int, stream: Optional[int]) -> torch.Tensor:
    return torch.empty(size, device="cuda", dtype=torch.int8)


@triton.jit
def gemm_tma_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([off_m, k * BLOCK_K])
        b = b_desc.load([off_n, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([off_m, off_n], acc.to(tl.bfloat16))


def run(A, B, C):
    M, K = A.shape
    N = B.shape[0]
    triton.set_allocator(_descriptor_workspace)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    gemm_tma_kernel[grid](A, B, C, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                          num_warps=8, num_stages=4)
