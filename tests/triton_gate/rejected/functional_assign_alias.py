"""`F = torch.nn.functional`: rejected where torch.nn is reached."""
import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


def run(A, B, C):
    M, K = A.shape
    N = B.shape[0]
    F = torch.nn.functional  # gate-expect: torch-compute
    C.copy_(F.linear(A, B))
    copy_kernel[(triton.cdiv(M * N, 1024),)](C, C, M * N, BLOCK=1024)
