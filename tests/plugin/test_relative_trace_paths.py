"""A relative trace path is read from the current directory; where pytest was started elsewhere,
the error says where it looked, and names the file where the path exists next to the calling
test file or in a folder above it (never reading that one instead)."""

from __future__ import annotations

import shutil

import pytest

from tests.helpers import DATA

TESTS = """
from pytest_kernelprof import load_trace


def test_beside():
    load_trace("data/x.json.gz")


def test_above():
    load_trace("traces/y.json.gz")


def test_nowhere():
    load_trace("nowhere/z.json.gz")
"""


def test_a_missing_relative_trace_says_where_it_was_looked_for(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Trial report: run from another directory, load_trace("data/x.json.gz") said only
    # "data/x.json.gz: no such trace file", next to the test file that had it.
    root = cpu_pytester.path
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "tests" / "data").mkdir(parents=True)
    (root / "traces").mkdir()
    shutil.copy(DATA / "h200_linear_eager.json.gz", root / "tests" / "data" / "x.json.gz")
    shutil.copy(DATA / "h200_linear_eager.json.gz", root / "traces" / "y.json.gz")
    (root / "tests" / "test_rel.py").write_text(TESTS)
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = cpu_pytester.runpytest(str(root / "tests"), "-p", "no:randomly")
    result.assert_outcomes(failed=3)  # found elsewhere is named, not read
    looked = f"(relative paths are read from the current directory, {elsewhere})"
    result.stdout.fnmatch_lines(
        [
            f"E   *TraceError: data/x.json.gz: no such trace file {looked}; {root}/tests/data/x.json.gz exists, "
            "next to the calling file test_rel.py: to read that one from any directory, "
            "pass Path(__file__).parent / 'data/x.json.gz'",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            f"E   *TraceError: traces/y.json.gz: no such trace file {looked}; {root}/traces/y.json.gz exists, "
            f"under {root}, a folder above the calling file test_rel.py: to read that one, pass its whole path, "
            f"or run pytest from {root}",
        ]
    )
    result.stdout.fnmatch_lines([f"E   *TraceError: nowhere/z.json.gz: no such trace file {looked}"])
    # Run from the folder the paths are relative to, the same tests read their traces.
    monkeypatch.chdir(root / "tests")
    cpu_pytester.runpytest("-p", "no:randomly", "-k", "beside").assert_outcomes(passed=1, deselected=2)
