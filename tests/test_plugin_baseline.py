"""The kernel_baseline fixture through pytester: create, match, mismatch, update, xdist, corruption."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"

MODULE = """
from pathlib import Path
from pytest_kernelprof import load_trace

DATA = Path({data!r})

def current():
    return load_trace(DATA / ("h200_" + Path("which.txt").read_text().strip() + ".json.gz"))

def test_mlp(kernel_baseline):
    kernel_baseline.check(current())

def test_mlp_eq(kernel_baseline):
    assert current() == kernel_baseline
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_b=MODULE.format(data=str(DATA)))
    (pytester.path / "which.txt").write_text("geglu_compiled")
    return pytester


def _baseline(pytester: pytest.Pytester, test: str = "test_mlp") -> Path:
    return pytester.path / "__kernelprof__" / "test_b" / f"{test}.json"


def test_missing_baseline_fails_with_instructions_and_writes_nothing(project: pytest.Pytester) -> None:
    result = project.runpytest()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        ["*no kernel baseline sm90/default in *test_mlp.json*", "*record it with: pytest --kernelprof-update*"]
    )
    assert not (project.path / "__kernelprof__").exists()


def test_update_creates_then_the_run_matches(project: pytest.Pytester) -> None:
    project.runpytest("--kernelprof-update").assert_outcomes(passed=2)
    data = json.loads(_baseline(project).read_text())
    entry = data["archs"]["sm90"]["default"]
    assert entry["device"] == "NVIDIA H200"
    assert [k["kind"] for k in entry["kernels"]] == ["gemm", "gemm", "pointwise", "gemm"]
    project.runpytest().assert_outcomes(passed=2)


def test_lost_fusion_fails_with_a_diff_and_the_update_command(project: pytest.Pytester) -> None:
    project.runpytest("--kernelprof-update").assert_outcomes(passed=2)
    (project.path / "which.txt").write_text("geglu_eager")
    result = project.runpytest()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*kernel signature differs from the baseline sm90/default*(names compared: stable)*",
            "*kernels per call: 4 -> 5*",
            "*count change: pointwise: 1 -> 2*",
            "*--- baseline*",
            "*+++ this run*",
            "*+ pointwise/aten [[]gelu[]]*",
            "*- pointwise/inductor [[]_unsafe_view,gelu,mul[]]  triton_poi_fused__unsafe_view_gelu_mul_0*",
            "*if the change is intended: pytest --kernelprof-update 'test_b.py::test_mlp'*",
        ]
    )
    result.stdout.fnmatch_lines(["*KernelProfile == kernel_baseline failed:*"])


def test_update_rewrites_to_the_new_signature(project: pytest.Pytester) -> None:
    project.runpytest("--kernelprof-update").assert_outcomes(passed=2)
    (project.path / "which.txt").write_text("geglu_eager")
    project.runpytest("--kernelprof-update").assert_outcomes(passed=2)
    project.runpytest().assert_outcomes(passed=2)
    kinds = [k["kind"] for k in json.loads(_baseline(project).read_text())["archs"]["sm90"]["default"]["kernels"]]
    assert kinds.count("pointwise") == 2


def test_exact_names_option(project: pytest.Pytester) -> None:
    project.runpytest("--kernelprof-update").assert_outcomes(passed=2)
    path = _baseline(project)
    data = json.loads(path.read_text())
    data["archs"]["sm90"]["default"]["kernels"][0]["name"] = "nvjet_sm90_tst_other_tile_TNT"
    path.write_text(json.dumps(data))
    result = project.runpytest("-k", "test_mlp and not eq")
    result.assert_outcomes(passed=1)
    result = project.runpytest("-k", "test_mlp and not eq", "--kernelprof-baseline-names", "exact")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*(names compared: exact)*", "*~ gemm/nvjet tn*"])


def test_under_xdist(project: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    project.runpytest("-n", "2", "--kernelprof-update").assert_outcomes(passed=2)
    assert _baseline(project).exists()
    assert _baseline(project, "test_mlp_eq").exists()
    project.runpytest("-n", "2").assert_outcomes(passed=2)


def test_a_corrupt_baseline_fails_clearly_and_is_left_alone(project: pytest.Pytester) -> None:
    path = _baseline(project)
    path.parent.mkdir(parents=True)
    path.write_text('{"format": 1, "archs": {"sm90": {"default": {"kernels": [{"kind": 3}]}}}}')
    before = path.read_bytes()
    for args in ((), ("--kernelprof-update",)):
        result = project.runpytest("-k", "test_mlp and not eq", *args)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["*BaselineError: *test_mlp.json: entry sm90/default is malformed*"])
        assert path.read_bytes() == before


def test_unused_entries_are_reported(project: pytest.Pytester) -> None:
    project.runpytest("--kernelprof-update").assert_outcomes(passed=2)
    path = _baseline(project)
    data = json.loads(path.read_text())
    data["archs"]["sm90"]["old_check"] = data["archs"]["sm90"]["default"]
    data["archs"]["sm80"] = {"default": data["archs"]["sm90"]["default"]}  # another GPU's: not unused here
    path.write_text(json.dumps(data))
    (path.parent / "test_removed.json").write_text("{}")
    result = project.runpytest()
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*kernelprof: 2 unused baseline entries*",
            "*test_mlp.json: sm90/old_check",
            "*test_removed.json (no test of that name ran)",
        ]
    )
    assert "sm80/default" not in result.stdout.str()


def test_a_cpu_profile_cannot_be_a_baseline(cpu_pytester: pytest.Pytester) -> None:
    cpu_pytester.makepyfile(
        test_cpu="""
        import torch

        def test_cpu(kernelprof, kernel_baseline):
            kernel_baseline.check(kernelprof(torch.relu, torch.randn(4)))
        """
    )
    result = cpu_pytester.runpytest("--kernelprof-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*NoDeviceActivityError*"])
    assert not (cpu_pytester.path / "__kernelprof__").exists()
