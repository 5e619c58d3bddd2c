"""The kernel_baseline fixture through pytester: compare, update, the names option, unused entries.

Which signatures count as equal is test_baseline.py's, the fixture under xdist
tests/plugin/test_xdist.py's; here one project holds a test per situation, its baselines seeded
beforehand, and each run checks all of them at once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.baseline import record
from tests.helpers import DATA

MODULE = """
from pathlib import Path

import torch

from pytest_kernelprof import load_trace

DATA = Path({data!r})


def trace(name):
    return load_trace(DATA / f"h200_{{name}}.json.gz")


def test_new(kernel_baseline):
    kernel_baseline.check(trace("geglu_compiled"))


def test_same(kernel_baseline):
    kernel_baseline.check(trace("geglu_compiled"))


def test_same_eq(kernel_baseline):
    assert trace("geglu_compiled") == kernel_baseline


def test_unfused(kernel_baseline):
    kernel_baseline.check(trace("geglu_eager"))


def test_unfused_eq(kernel_baseline):
    assert trace("geglu_eager") == kernel_baseline


def test_other_tiles(kernel_baseline):
    kernel_baseline.check(trace("geglu_compiled"))


def test_corrupt(kernel_baseline):
    kernel_baseline.check(trace("geglu_compiled"))


def test_cpu(kernelprof, kernel_baseline):
    kernel_baseline.check(kernelprof(torch.relu, torch.randn(4)))
"""

CORRUPT = '{"format": 1, "archs": {"sm90": {"default": {"kernels": [{"kind": 3}]}}}}'


def _folder(pytester: pytest.Pytester) -> Path:
    return pytester.path / "__kernelprof__" / "test_b"


def _entry(pytester: pytest.Pytester, test: str) -> Any:
    return json.loads((_folder(pytester) / f"{test}.json").read_text())["archs"]["sm90"]["default"]


def _kinds(pytester: pytest.Pytester, test: str) -> list[str]:
    return [k["kind"] for k in _entry(pytester, test)["kernels"]]


def _seed_other_tiles(pytester: pytest.Pytester) -> None:
    """test_other_tiles' baseline: the compiled MLP, its first cuBLAS kernel with other tiles."""
    path = _folder(pytester) / "test_other_tiles.json"
    record(path, "sm90", "default", load_trace(DATA / "h200_geglu_compiled.json.gz"))
    data = json.loads(path.read_text())
    assert data["archs"]["sm90"]["default"]["kernels"][0]["family"] == "nvjet"
    data["archs"]["sm90"]["default"]["kernels"][0]["name"] = "nvjet_sm90_tst_other_tile_TNT"
    path.write_text(json.dumps(data))


@pytest.fixture
def project(cpu_pytester: pytest.Pytester) -> pytest.Pytester:
    """The module above, every test but test_new and test_cpu with a baseline of the compiled MLP."""
    cpu_pytester.makepyfile(test_b=MODULE.format(data=str(DATA)))
    folder = _folder(cpu_pytester)
    compiled = load_trace(DATA / "h200_geglu_compiled.json.gz")
    for test in ("test_same", "test_same_eq", "test_unfused", "test_unfused_eq"):
        record(folder / f"{test}.json", "sm90", "default", compiled)
    # Unused here: another check's entry on this GPU's architecture, and a removed test's file;
    # another GPU's entry is not.
    record(folder / "test_same.json", "sm90", "old_check", compiled)
    record(folder / "test_same.json", "sm80", "default", compiled)
    (folder / "test_removed.json").write_text("{}")
    _seed_other_tiles(cpu_pytester)
    (folder / "test_corrupt.json").write_text(CORRUPT)
    return cpu_pytester


UNUSED = [
    "*kernelprof: 2 unused baseline entries*",
    "*test_same.json: sm90/old_check",
    "*test_removed.json (no test of that name ran)",
]


def test_a_run_compares_reports_and_writes_nothing(project: pytest.Pytester) -> None:
    before = {p.name: p.read_bytes() for p in _folder(project).iterdir()}
    result = project.runpytest("--kernelprof-baseline-names", "exact")
    result.assert_outcomes(passed=2, failed=6)  # test_same and test_same_eq pass
    failed = ("test_new", "test_unfused", "test_unfused_eq", "test_other_tiles", "test_corrupt", "test_cpu")
    result.stdout.fnmatch_lines([f"FAILED test_b.py::{test} - *" for test in failed])
    result.stdout.fnmatch_lines(
        [
            "*no kernel baseline sm90/default in *test_new.json*",
            "*record it with: pytest --kernelprof-update 'test_b.py::test_new'",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*kernel signature differs from the baseline sm90/default*test_unfused.json (names compared: exact)*",
            "*kernels per call: 4 -> 5*",
            "*count change: pointwise: 1 -> 2*",
            "*--- baseline*",
            "*+++ this run*",
            "*+ pointwise/aten [[]gelu[]]*",
            "*- pointwise/inductor [[]_unsafe_view,gelu,mul[]]  triton_poi_fused__unsafe_view_gelu_mul_0*",
            "*if the change is intended: pytest --kernelprof-update 'test_b.py::test_unfused'",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*KernelProfile == kernel_baseline failed:*",
            "*differs from the baseline sm90/default in *test_unfused_eq.json (names compared: exact)",
            "*kernels per call: 4 -> 5*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*differs from the baseline sm90/default in *test_other_tiles.json (names compared: exact)*",
            "*~ gemm/nvjet tn*",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*BaselineError: *test_corrupt.json: entry sm90/default: kernels[[]0].name is missing*"]
    )
    result.stdout.fnmatch_lines(["FAILED test_b.py::test_cpu - *NoDeviceActivityError*"])
    result.stdout.fnmatch_lines(UNUSED)
    assert "sm80/default" not in result.stdout.str()
    assert {p.name: p.read_bytes() for p in _folder(project).iterdir()} == before


def test_update_writes_what_a_run_matches_and_leaves_what_it_cannot_read(
    project: pytest.Pytester, tmp_path: Path
) -> None:
    corrupt = (_folder(project) / "test_corrupt.json").read_bytes()
    result = project.runpytest("--kernelprof-update")
    result.assert_outcomes(passed=6, failed=2)
    result.stdout.fnmatch_lines(
        [
            "FAILED test_b.py::test_corrupt - *BaselineError*",
            "FAILED test_b.py::test_cpu - *NoDeviceActivityError*",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*BaselineError: *test_corrupt.json: entry sm90/default: kernels[[]0].name is missing*"]
    )
    result.stdout.fnmatch_lines(UNUSED)
    assert _entry(project, "test_new")["device"] == "NVIDIA H200"
    assert _kinds(project, "test_new") == ["gemm", "gemm", "pointwise", "gemm"]
    assert _kinds(project, "test_unfused").count("pointwise") == 2
    # What the update wrote is what record() writes, whose files the run above matches.
    for test, recorded in [("test_new", "geglu_compiled"), ("test_unfused", "geglu_eager")]:
        expected = tmp_path / f"{recorded}.json"
        record(expected, "sm90", "default", load_trace(DATA / f"h200_{recorded}.json.gz"))
        assert (_folder(project) / f"{test}.json").read_bytes() == expected.read_bytes()
    assert (_folder(project) / "test_corrupt.json").read_bytes() == corrupt
    assert sorted(p.name for p in _folder(project).iterdir()) == [
        "test_corrupt.json",
        "test_new.json",
        "test_other_tiles.json",
        "test_removed.json",
        "test_same.json",
        "test_same_eq.json",
        "test_unfused.json",
        "test_unfused_eq.json",
    ]  # nothing for test_cpu, no temporary file left


METRICS_MODULE = """
from pathlib import Path
from pytest_kernelprof.build import build_profile
from pytest_kernelprof.chrome import events_from_trace_file
from pytest_kernelprof.health import CompileFacts, MemoryReading

def test_peak(kernel_baseline):
    source, events = events_from_trace_file({trace!r})
    peak = int(Path("peak.txt").read_text())
    readings = [MemoryReading(0, peak, 0)] * 3
    kernel_baseline.check(build_profile(events, source, memory=readings, compile_facts=CompileFacts("test", frames=1)))
"""


def test_metric_baselines_fail_on_growth_take_tolerances_and_report_improvements(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_b=METRICS_MODULE.format(trace=str(DATA / "h200_geglu_compiled.json.gz")))
    peak = pytester.path / "peak.txt"
    peak.write_text("1000000")
    pytester.runpytest("--kernelprof-update").assert_outcomes(passed=1)

    peak.write_text("1200000")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*(lower is better):", "*peak_bytes: 1,000,000 -> 1,200,000 (+20.0%; tolerance 5%)"])
    pytester.runpytest("--kernelprof-memory-tolerance=25%").assert_outcomes(passed=1)

    peak.write_text("800000")
    pytester.makeini("[pytest]\nkernelprof_memory_tolerance = 1%\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*kernelprof: 1 baseline metric improved*",
            "improved: test_peak peak_bytes 1,000,000 -> 800,000; "
            "lock it in with --kernelprof-update 'test_b.py::test_peak'",
        ]
    )
