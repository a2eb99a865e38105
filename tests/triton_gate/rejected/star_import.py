"""`from torch import *` hides which names are used."""
from torch import *  # gate-expect: star-import
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


def run(A, B, C):
    n = C.numel()
    copy_kernel[(triton.cdiv(n, 1024),)](C, C, n, BLOCK=1024)
