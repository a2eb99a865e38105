import torch
import triton
import triton.language as tl


@triton.jit
def axpy_kernel(alpha_ptr, x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    alpha = tl.load(alpha_ptr).to(tl.float32)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (alpha * x + y).to(tl.bfloat16), mask=mask)


def run(alpha: torch.Tensor, x: torch.Tensor, y: torch.Tensor, out: torch.Tensor) -> None:
    # inputs alpha [1] float32, x [N] bfloat16, y [N] bfloat16; output out [N] bfloat16
    n = x.numel()
    if y.numel() != n or out.numel() != n:
        raise ValueError(f"x, y and out must have the same size, got {n}, {y.numel()}, {out.numel()}")
    BLOCK = 1024
    axpy_kernel[(triton.cdiv(n, BLOCK),)](alpha, x, y, out, n, BLOCK=BLOCK, num_warps=4)
