"""The user Triton kernel of ``test_bench_triton_ir.py`` (Triton reads a kernel's source from its file)."""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def bench_add_one_kernel(x_ptr, n, BLOCK: tl.constexpr):  # noqa: N803 (Triton's constexpr spelling)
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)
