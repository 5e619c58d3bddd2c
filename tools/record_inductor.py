"""Record compiled pointwise kernels of three dtypes on a GPU (run on an H100/H200):

    python -m tools.record_inductor OUTDIR      (from the repository root)

A bf16 and an fp32 ``gelu(x @ w) * (x @ v)`` and a bf16 sigmoid cast to fp32, each compiled in a
fresh graph; each trace, with the dtypes the capture read from Inductor's autotuners in its
``"kernelprof"`` key, goes to ``OUTDIR/inductor_<case>.json.gz`` for the offline test
(``tests/unit/api/test_recorded_inductor.py``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

import pytest_kernelprof as kp


def geglu(x: torch.Tensor, w: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return F.gelu(x @ w) * (x @ v)


def sigmoid_to_fp32(x: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(x).float() * 2.0


def _cases() -> dict[str, tuple[Callable[..., Any], tuple[torch.Tensor, ...]]]:
    def randn(*shape: int, dtype: torch.dtype) -> torch.Tensor:
        return torch.randn(*shape, device="cuda", dtype=dtype)

    return {
        "geglu_bf16": (geglu, tuple(randn(*s, dtype=torch.bfloat16) for s in ((64, 128), (128, 256), (128, 256)))),
        "geglu_fp32": (geglu, tuple(randn(*s, dtype=torch.float32) for s in ((64, 128), (128, 256), (128, 256)))),
        "bf16_to_fp32": (sigmoid_to_fp32, (randn(64, 256, dtype=torch.bfloat16),)),
    }


def main() -> int:
    outdir = Path(sys.argv[1])
    outdir.mkdir(parents=True, exist_ok=True)
    for case, (fn, args) in _cases().items():
        torch._dynamo.reset()
        profiler = kp.Profiler()
        profiler(torch.compile(fn), *args)
        path = outdir / f"inductor_{case}.json.gz"
        profiler.captures[-1].export_trace(path)
        print(case, profiler.captures[-1].learned)
        for kernel in kp.load_trace(path).kernels:
            print(f"  {kernel.kind:<10} {kernel.family:<8} {kernel.dtype!s:<6} {kernel.evidence!r}  {kernel.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
