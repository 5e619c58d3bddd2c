"""What reading user Triton kernels' IR costs (issue 30), on a GPU with Triton (skips elsewhere):

    python -m pytest -q benchmarks/test_bench_triton_ir.py -p benchmark --benchmark-json=ir.json

``kernelprof(fn)`` over ``N`` launches of a user ``@triton.jit`` kernel, in turns with the same
capture where the IR is not read (``ir_facts`` answering nothing): the ratio is what the IR
adds in a suite, where a kernel name is read once per process. ``first read`` clears that
cache before each profile: the one-time cost of the scan and the reading, told in absolute time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from pytest_kernelprof import Profiler
from pytest_kernelprof.capture import run, triton_kernels

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="Triton kernels run on a GPU")


@pytest.mark.parametrize("launches", [600, 8000])
def test_triton_ir_cost(benchmark: Any, interleave: Any, launches: int, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("triton")
    from triton_ir_kernels import bench_add_one_kernel

    x = torch.zeros(1024, device="cuda")

    def fn() -> None:
        for _ in range(launches):
            bench_add_one_kernel[(1,)](x, 1024, BLOCK=1024)

    profiler = Profiler()
    read = run.ir_facts

    def profiled(ir: Callable[..., Any], clear: bool = False) -> Any:
        if clear:
            triton_kernels._IR_READ.clear()
        monkeypatch.setattr(run, "ir_facts", ir)
        profile = profiler(fn)
        profiler.captures.clear()
        return profile

    kinds: dict[str, Callable[[], Any]] = {
        "kernelprof(fn)": lambda: profiled(read),
        "kernelprof(fn), IR not read": lambda: profiled(lambda names: {}),
        "kernelprof(fn), first read": lambda: profiled(read, clear=True),
    }
    interleave(kinds, rounds={600: 8}.get(launches, 3), block=2)
    profile = profiled(read)
    assert profile.kernels.count("bench_add_one_kernel") == launches
    assert {k.evidence.kind for k in profile.kernels.matching("bench_add_one_kernel")} == {"ir"}
