"""--kernelprof-trace-dir and --kernelprof-save, through pytester.

--kernelprof-save all (and loading the traces back) is checked in tests/plugin/test_xdist.py's
run, --kernelprof-save none in tests/plugin/test_fixture.py's, bad values in tests/plugin/test_options.py.
"""

from __future__ import annotations

import pytest

from pytest_kernelprof.paths import trace_file_name

FAILS, FAILS_2 = trace_file_name("test_suite.py::test_fails", 0), trace_file_name("test_suite.py::test_fails", 1)
EXPORTED = trace_file_name("test_suite.py::test_exports_then_fails", 0)

SUITE = """
import torch

def test_passes(kernelprof):
    kernelprof(torch.relu, torch.randn(4))

def test_fails(kernelprof):
    kernelprof(torch.relu, torch.randn(4))
    kernelprof(torch.sigmoid, torch.randn(4))
    assert False, "on purpose"

def test_no_profile():
    assert False

def test_exports_then_fails(kernelprof):
    kernelprof.profile(lambda: torch.ones(3).sum().item(), stacks=True)
    kernelprof.captures[-1].export_trace("mine.json")
    assert False
"""


def _written(pytester: pytest.Pytester) -> list[str]:
    folder = pytester.path / "traces"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_failed_tests_get_their_traces_by_default(cpu_pytester: pytest.Pytester) -> None:
    cpu_pytester.makepyfile(test_suite=SUITE)
    result = cpu_pytester.runpytest("--kernelprof-trace-dir", "traces")
    result.assert_outcomes(passed=1, failed=3)
    assert "INTERNALERROR" not in result.stdout.str()
    # Each failing test's trace, and its timeline page beside it (timeline.py); a test that
    # exported its trace itself still gets it saved.
    traces = (FAILS_2, FAILS, EXPORTED)
    assert _written(cpu_pytester) == sorted([*traces, *(name.replace(".json.gz", ".html") for name in traces)])
    assert (cpu_pytester.path / "mine.json").exists()
    result.stdout.fnmatch_lines(["*- kernelprof traces -*", f"*traces/{FAILS}  (kernelprof show *"])


def test_long_and_odd_test_ids_make_safe_unique_names() -> None:
    a = trace_file_name("tests/test_x.py::test_y[" + "a" * 300 + "]", 0)
    b = trace_file_name("tests/test_x.py::test_y[" + "a" * 299 + "b]", 0)
    assert a != b
    assert len(a) < 140
    assert trace_file_name("t.py::test[x/y: z]", 1).startswith("t.py__test_x_y_z-")
