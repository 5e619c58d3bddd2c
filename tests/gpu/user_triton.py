"""A user's own ``@triton.jit`` kernel for the GPU tests (Triton reads its source from a file).

Imported only by GPU tests, after ``pytest.importorskip("triton")``.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def user_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def user_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    user_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out


@triton.jit
def user_row_sum_kernel(x_ptr, out_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    tl.store(out_ptr + row, tl.sum(tl.load(x_ptr + row * N + tl.arange(0, N)).to(tl.float32), axis=0))


def user_row_sum(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
    user_row_sum_kernel[(x.shape[0],)](x, out, N=x.shape[1])
    return out


@triton.jit
def user_cumsum_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offsets = tl.program_id(0) * N + tl.arange(0, N)
    tl.store(out_ptr + offsets, tl.cumsum(tl.load(x_ptr + offsets), axis=0))


def user_cumsum(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    user_cumsum_kernel[(x.shape[0],)](x, out, N=x.shape[1])
    return out


@triton.autotune(
    configs=[triton.Config({"BLOCK": 32}, num_warps=4), triton.Config({"BLOCK": 64}, num_warps=4)],
    key=["M"],
)
@triton.jit
def user_matmul_kernel(a_ptr, b_ptr, c_ptr, M, BLOCK: tl.constexpr, K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ks = tl.arange(0, K)
    a = tl.load(a_ptr + rows[:, None] * K + ks[None, :])
    b = tl.load(b_ptr + ks[:, None] * M + cols[None, :])
    tl.store(c_ptr + rows[:, None] * M + cols[None, :], tl.dot(a, b).to(tl.bfloat16))


def user_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` for square bf16 ``a`` (M x K) and ``b`` (K x M), M a multiple of 64."""
    m, k = a.shape
    c = torch.empty(m, m, device=a.device, dtype=torch.bfloat16)
    user_matmul_kernel[lambda meta: (m // meta["BLOCK"], m // meta["BLOCK"])](a, b, c, m, K=k)
    return c
