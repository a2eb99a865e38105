"""The candidate is one file: relative imports are rejected."""
import triton
import triton.language as tl

from . import helpers  # gate-expect: import-not-allowed


@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


def run(A, B, C):
    n = C.numel()
    copy_kernel[(triton.cdiv(n, 1024),)](C, C, n, BLOCK=1024)
