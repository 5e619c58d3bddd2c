"""The JUnit properties' figures (``reports/junit.py``) read without a contradiction (issue 32 item 8)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pytest_kernelprof import load_trace
from pytest_kernelprof.reports.junit import figures

Trace = Callable[[str], Path]


def test_the_gpu_work_of_a_call_is_told_beside_its_busy_time_within_the_host_span(trace: Trace) -> None:
    # The eager GeGLU MLP: back-to-back kernels that run on after the host returns.
    found = figures(load_trace(trace("geglu_eager")))
    names = list(found)
    assert names.index("gpu_work_us") == names.index("gpu_busy_us") + 1  # added beside it, none renamed
    assert (found["kernel_us"], found["gpu_busy_us"], found["gpu_work_us"]) == (232.7, 139.4, 234.1)
