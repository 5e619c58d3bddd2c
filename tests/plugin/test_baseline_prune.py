"""--kernelprof-prune on runs that left tests out: a test deselected, or dropped by a conftest's
pytest_collection_modifyitems without pytest_deselected, may still exist, so its baseline is
kept; what is provably unused is deleted, in one process and under xdist."""

from __future__ import annotations

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.baseline import record
from tests.helpers import DATA

PROJECT = """
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace

PROF = load_trace(Path({data!r}) / "h200_linear_eager.json.gz")


def test_fast(kernel_baseline):
    kernel_baseline.check(PROF)


@pytest.mark.slow
def test_slow(kernel_baseline):
    kernel_baseline.check(PROF)
"""

# A conftest that drops the slow tests as many do, without telling pytest they were deselected.
DROPS_SLOW = """
def pytest_collection_modifyitems(items):
    items[:] = [item for item in items if "slow" not in item.keywords]
"""

KEPT = [
    "*- kernelprof: 1 test's baselines kept (collected, not run) -*",
    "deselected (-k, -m, --deselect) or left out by a conftest or plugin: --kernelprof-prune deletes nothing of theirs",
]


@pytest.fixture
def project(cpu_pytester: pytest.Pytester) -> pytest.Pytester:
    """Both tests recorded, with an entry no check uses in the fast one's file, and a removed test's file."""
    cpu_pytester.makeini("[pytest]\nmarkers =\n    slow: a slow test\n")
    cpu_pytester.makepyfile(test_p=PROJECT.format(data=str(DATA)))
    cpu_pytester.runpytest("--kernelprof-update").assert_outcomes(passed=2)
    folder = cpu_pytester.path / "__kernelprof__" / "test_p"
    record(folder / "test_fast.json", "sm90", "gone", load_trace(DATA / "h200_linear_eager.json.gz"))
    (folder / "test_removed.json").write_text("{}")
    return cpu_pytester


def _files(pytester: pytest.Pytester) -> list[str]:
    return sorted(p.name for p in (pytester.path / "__kernelprof__" / "test_p").iterdir())


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_prune_keeps_the_baseline_of_a_test_a_conftest_left_out(project: pytest.Pytester, workers: list[str]) -> None:
    if workers:
        pytest.importorskip("xdist")
    project.makeconftest(project.path.joinpath("conftest.py").read_text() + DROPS_SLOW)

    result = project.runpytest(*workers, "--kernelprof-prune")

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*- kernelprof: deleted 2 baseline entries -*",
            "*test_fast.json: sm90/gone",
            "*test_removed.json (no test of that name ran)",
            *KEPT,
        ]
    )
    assert _files(project) == ["test_fast.json", "test_slow.json"]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_a_marker_expression_in_addopts_does_not_block_prune(project: pytest.Pytester, workers: list[str]) -> None:
    if workers:
        pytest.importorskip("xdist")
    project.makeini('[pytest]\nmarkers =\n    slow: a slow test\naddopts = -m "not slow"\n')

    result = project.runpytest(*workers, "--kernelprof-prune")

    result.assert_outcomes(passed=1, deselected=0 if workers else 1)
    result.stdout.fnmatch_lines(["*- kernelprof: deleted 2 baseline entries -*", *KEPT])
    result.stdout.no_fnmatch_line("*not deleted*")
    assert _files(project) == ["test_fast.json", "test_slow.json"]


def test_without_prune_a_test_left_out_is_not_listed_as_unused(project: pytest.Pytester) -> None:
    project.makeconftest(project.path.joinpath("conftest.py").read_text() + DROPS_SLOW)
    result = project.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*- kernelprof: 2 unused baseline entries -*"])
    result.stdout.no_fnmatch_line("*test_slow*")
    result.stdout.no_fnmatch_line("*kept the baselines*")  # nothing was asked to be deleted


def test_node_ids_still_block_prune(project: pytest.Pytester) -> None:
    # A run of some node ids collects only those: the files of the others look like no test's.
    result = project.runpytest("test_p.py::test_fast", "--kernelprof-prune")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["*kernelprof: 1 unused baseline entry*", "not deleted: the run was narrowed to node ids or --lf*"]
    )
    assert _files(project) == ["test_fast.json", "test_removed.json", "test_slow.json"]
