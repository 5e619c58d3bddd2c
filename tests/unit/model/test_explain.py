"""Failure explanations (``model/explain.py``): what pytest shows under a failed assertion on a
profile's values, and what goes to the 'kernelprof assertion' section."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pytest_kernelprof import load_trace
from pytest_kernelprof.model.explain import explain
from pytest_kernelprof.tables import display_name
from tests.helpers import DATA

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


def test_names_tables_and_ops_explain_the_other_comparisons(trace: Trace) -> None:
    prof = load_trace(trace("geglu_eager"))
    kernels = prof.kernels
    table = kernels.table().splitlines()
    # The expected names on the left read as on the right: a diff, expected first.
    flipped = explain("==", ["nvjet_x"], kernels)
    assert flipped is not None
    assert flipped.head[1] == "the kernel names differ: 1 expected, 5 ran (- expected, + this run)"
    assert flipped.body[:2] == ["- nvjet_x", "+ " + display_name(kernels.names[0])]
    # Not names: no diff, the table.
    not_names = explain("==", kernels, [1, 2])
    assert not_names is not None
    assert not_names.head == ["KernelList(5 kernels) == [1, 2]", "the kernels:"]
    assert not_names.body == table
    # A name looked up exactly: what matches patterns, and the kernel it is marked.
    missing = explain("in", "nvjet_x", kernels)
    assert missing is not None
    assert missing.head[1] == "no kernel has that exact name (prof.kernels.count('glob*') matches patterns)"
    assert not any(line.startswith("*") for line in missing.body)
    present = explain("not in", kernels.names[1], kernels)
    assert present is not None
    assert len(present.head) == 1
    assert [line[:2] for line in present.body[1:3]] == [" 0", "*1"]
    ops = explain("in", "aten::foo", prof.ops)
    assert ops is not None
    assert ops.head == ["'aten::foo' in OpTable(11 ops)", "the ops of the call:"]
    assert ops.body == prof.ops.table().splitlines()
    # Any other comparison with a profile or its kernels: the kernels.
    other = explain("!=", prof, 3)
    assert other is not None
    assert other.head[1:] == ["the kernels:"]
    assert other.body == table


def test_a_profile_without_gpu_activity_says_so_and_shows_no_table() -> None:
    kernels = load_trace(DATA / "cpu_torch2.13.0_calls.json.gz").kernels
    assert not kernels.measured
    compared = explain("==", kernels, 3)
    assert compared is not None
    assert compared.head[1] == f"no GPU activity was recorded: {kernels!r}"
    assert compared.body == []
    for found in (explain("in", "k", kernels), explain("==", kernels, ["k"])):
        assert found is not None
        assert found.body == []
    assert explain("in", "k", kernels).head[1] == "no GPU activity was recorded"  # type: ignore[union-attr]
