"""Record a step of a user's own Triton kernels of four kinds on a GPU (run on an H100/H200):

    python -m tools.record_user_triton OUTDIR      (from the repository root; needs Triton)

The kernels are ``tests/gpu/user_triton.py``'s: a row sum (reduction), a cumulative sum (scan), an
autotuned matmul (GEMM) and an add (pointwise). The trace, with what the capture read from each
kernel's IR in its ``"kernelprof"`` key, goes to ``OUTDIR/user_triton.json.gz`` for the offline
test (``tests/unit/api/test_recorded_triton.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import pytest_kernelprof as kp
from tests.gpu import user_triton


def main() -> int:
    outdir = Path(sys.argv[1])
    outdir.mkdir(parents=True, exist_ok=True)
    x = torch.randn(256, 1024, device="cuda", dtype=torch.bfloat16)
    xf = torch.randn(256, 1024, device="cuda")
    a = torch.randn(256, 64, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(64, 256, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(4096, device="cuda")

    def step() -> None:
        user_triton.user_row_sum(x)
        user_triton.user_cumsum(xf)
        user_triton.user_matmul(a, b)
        user_triton.user_add(y, y)

    for _ in range(2):
        step()
    with kp.Profiler().record() as rec:
        for call in range(3):
            if call:
                rec.step()
            step()
    path = outdir / "user_triton.json.gz"
    rec.capture.export_trace(path)
    print(rec.capture.learned)
    for kernel in kp.load_trace(path).kernels:
        print(f"{kernel.kind:<10} {kernel.family:<8} {kernel.dtype!s:<6} {kernel.evidence!r}  {kernel.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
