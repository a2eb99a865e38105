"""Attention forward with the log-sum-exp (task mha_with_lse_d128; with CAUSAL = True the same
kernel serves mha_with_lse_d128_causal, see attention_fwd_causal.py).

O = softmax(Q Kᵀ / sqrt(D)) V and LSE = logsumexp of each row of Q Kᵀ / sqrt(D) (natural log), for
Q, K, V, O [B, H, S, D] bfloat16 and LSE [B, H, S] float32. One program per (128 queries, batch x
head); it streams K and V in 64-key blocks with the online softmax (running max and sum in the
base-2 domain, so exp2 instead of exp). Both matrix products are `tl.dot` on bf16 tiles with fp32
accumulation, which Triton lowers to wgmma (HGMMA) on Hopper. Expected on a Hopper GPU (h100, h200): PASSED, GMMA
executed.
"""
import math

import torch
import triton
import triton.language as tl

CAUSAL = False
LN2 = 0.6931471805599453


@triton.jit
def attn_fwd_kernel(Q, K, V, O, LSE, S, qk_scale,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, IS_CAUSAL: tl.constexpr):
    # Causal rows near the end have the most keys: start them first.
    if IS_CAUSAL:
        start_m = tl.num_programs(0) - 1 - tl.program_id(0)
    else:
        start_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    base = bh * S * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < S
    q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=row_ok[:, None], other=0.0)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)   # running max (base-2 logits)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)                  # running sum of exp2(logit - max)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    if IS_CAUSAL:
        hi = tl.minimum((start_m + 1) * BLOCK_M, S)
    else:
        hi = S
    for start_n in range(0, hi, BLOCK_N):
        keys = start_n + offs_n
        key_ok = keys < S
        kt = tl.load(K + base + keys[None, :] * HEAD_DIM + offs_d[:, None], mask=key_ok[None, :], other=0.0)
        s = tl.dot(q, kt) * qk_scale                             # [BLOCK_M, BLOCK_N], base-2 logits
        keep = key_ok[None, :]
        if IS_CAUSAL:
            keep = keep & (offs_m[:, None] >= keys[None, :])
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + base + keys[:, None] * HEAD_DIM + offs_d[None, :], mask=key_ok[:, None], other=0.0)
        acc = tl.dot(p.to(tl.bfloat16), v, acc * alpha[:, None])
        m_i = m_new

    out = acc / l_i[:, None]
    tl.store(O + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], out.to(tl.bfloat16), mask=row_ok[:, None])
    # log2(sum exp2(s2)) = lse * log2(e), so the natural-log LSE is that times ln 2.
    tl.store(LSE + bh * S + offs_m, (m_i + tl.log2(l_i)) * 0.6931471805599453, mask=row_ok)


def run(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, O: torch.Tensor, LSE: torch.Tensor) -> None:
    B, H, S, D = Q.shape
    BLOCK_M, BLOCK_N = 128, 64
    qk_scale = 1.0 / math.sqrt(D) / LN2  # 1/sqrt(D) * log2(e)
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    attn_fwd_kernel[grid](Q, K, V, O, LSE, S, qk_scale,
                          HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, IS_CAUSAL=CAUSAL,
                          num_warps=8, num_stages=3)
