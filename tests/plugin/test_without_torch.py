"""A trace-only install (docs/versions.md): where torch cannot be imported, the plugin loads, the
fixture's ``load_trace`` works, and each test that needs torch fails alone, in one line.

The inner session blocks torch as an interpreter without it has none: ``sys.modules["torch"] =
None`` makes every later ``import torch`` raise ``ImportError`` (the warm interpreters of
tests/warm.py have torch imported already, which the block hides too)."""

from __future__ import annotations

import pytest

from tests.helpers import DATA

NO_TORCH = """
import sys

sys.modules["torch"] = None
"""
MISSING = "pytest-kernelprof needs PyTorch for this, and torch cannot be imported (*): pip install torch *"

TRACE_ONLY_SUITE = f"""
import pytest
from pytest_kernelprof import load_trace

TRACE = {str(DATA / "h100_liger_geglu.json.gz")!r}


def test_load_trace():
    assert load_trace(TRACE).kernels.count(kind="gemm") == 9


def test_fixture_load_trace(kernelprof):
    assert kernelprof.load_trace(TRACE).kernels.count(kind="gemm") == 9


def test_profiles(kernelprof):
    kernelprof(lambda: None)


@pytest.mark.gpu
def test_marked():
    pass
"""


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one-process", "xdist"])
def test_without_torch_traces_load_and_what_needs_torch_fails_alone(
    pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    pytester.makeconftest(NO_TORCH)
    pytester.makepyfile(test_trace_only=TRACE_ONLY_SUITE)
    result = pytester.runpytest_subprocess(*workers)
    result.assert_outcomes(passed=2, failed=1, errors=1)
    result.stdout.no_fnmatch_line("*INTERNALERROR*")
    # Under xdist the workers' line comes at the end, naming them (books.py).
    result.stdout.fnmatch_lines(
        [
            "kernelprof: torch cannot be imported: saved traces load (load_trace); "
            'tests that profile or are marked gpu fail (-m "not gpu" leaves the gpu ones out)*'
        ]
    )
    # The failure is the test's own line and the error's: none of the plugin's frames below it.
    result.stdout.fnmatch_lines(
        [
            "*_ test_profiles _*",
            "*def test_profiles(kernelprof):",
            ">       kernelprof(lambda: None)",
            f"E       pytest_kernelprof.errors.MissingTorchError: {MISSING}",
            "",
            "test_trace_only.py:16: MissingTorchError",
        ]
    )
    result.stdout.no_fnmatch_line("*def import_torch*")
    # The gpu marker needs torch to count GPUs: an error in its setup, in one line.
    result.stdout.fnmatch_lines(["*_ ERROR at setup of test_marked _*", f"@pytest.mark.gpu: {MISSING}"])
    result.stdout.no_fnmatch_line("*During handling of the above exception*")


def test_without_torch_not_gpu_leaves_the_gpu_tests_out(pytester: pytest.Pytester) -> None:
    # Trial: a trace-only install errored the suite's @pytest.mark.gpu tests; the docs' recipe,
    # -m "not gpu", deselects them, and what profiles unmarked still fails alone.
    pytester.makeconftest(NO_TORCH)
    pytester.makepyfile(test_trace_only=TRACE_ONLY_SUITE)
    result = pytester.runpytest_subprocess("-m", "not gpu")
    result.assert_outcomes(passed=2, failed=1, deselected=1)
    result.stdout.no_fnmatch_line("*ERROR at setup of test_marked*")
    result.stdout.no_fnmatch_line("*INTERNALERROR*")
    for page in (DATA.parent.parent / "README.md", DATA.parent.parent / "docs" / "versions.md"):
        assert 'pytest -m "not gpu"' in page.read_text(encoding="utf-8"), page
