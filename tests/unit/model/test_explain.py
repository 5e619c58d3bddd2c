"""Failure explanations (``model/explain.py``): what pytest shows under a failed assertion on a
profile's values, and what goes to the 'kernelprof assertion' section."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pytest_kernelprof import load_trace
from pytest_kernelprof.model.explain import explain

Trace = Callable[[str], Path]


def test_explanations_give_pytest_lines(trace: Trace) -> None:
    kernels = load_trace(trace("geglu_eager")).kernels
    failed = explain("==", kernels.count("triton_poi_fused_*gelu*mul*"), 1)
    assert failed is not None
    assert failed.head == ["0 == 1", "kernels.count('triton_poi_fused_*gelu*mul*') matched 0 of 5 kernels"]
    assert failed.body == kernels.table().splitlines()
    # pytest's default limits (8 lines, 640 characters): head shown, body to a section.
    shown, section = failed.shown(8, 640)
    assert shown[:2] == failed.head
    assert "'kernelprof assertion' section" in shown[2]
    assert section == [*failed.head[1:], *failed.body]
    assert failed.shown(0, 0) == ([*failed.head, *failed.body], [])  # -vv: no limit
    names = explain("==", kernels, ["nvjet_x", *kernels.names[1:]])
    assert names is not None
    assert names.body[:2] == ["- nvjet_x", "+ " + kernels.names[0]]
    gemm = explain("==", kernels.count(kind="gemm"), 2)
    assert gemm is not None
    assert gemm.head[1] == "kernels.count(kind='gemm') matched 3 of 5 kernels: #0, #2, #4"
    assert [line[:2] for line in gemm.body[1:]] == ["*0", " 1", "*2", " 3", "*4"]
    assert explain("==", 3, 1) is None
