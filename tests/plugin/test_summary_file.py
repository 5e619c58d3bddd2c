"""Where ``--kernelprof-summary`` cannot be written: said on a line of its own in the terminal
summary, and a named pipe that no one reads is refused rather than waited on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import DATA

SUITE = f"""
def test_fails(kernelprof):
    prof = kernelprof.load_trace({str(DATA / "h200_linear_eager.json.gz")!r})
    assert len(prof.kernels) == 4, "on purpose"
"""


def test_a_summary_that_cannot_be_written_is_said_on_its_own_line_below_the_failures(
    pytester: pytest.Pytester,
) -> None:
    # It was glued onto the progress line: "F   [100%]kernelprof: the job summary was not written".
    pytester.makepyfile(test_suite=SUITE)
    folder = pytester.mkdir("folder")
    result = pytester.runpytest("--kernelprof-summary", str(folder))
    result.assert_outcomes(failed=1)
    lines = result.stdout.lines
    said = [i for i, line in enumerate(lines) if "the job summary was not written" in line]
    assert len(said) == 1
    assert lines[said[0]].startswith(f"kernelprof: the job summary was not written to {folder}: ")
    assert said[0] > next(i for i, line in enumerate(lines) if "on purpose" in line)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_summary_named_pipe_that_no_one_reads_is_refused_without_waiting(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    fifo = pytester.path / "summary"
    os.mkfifo(fifo)
    result = pytester.runpytest_subprocess("--kernelprof-summary", str(fifo), timeout=60)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [f"kernelprof: the job summary was not written to {fifo}: *a named pipe that no one reads*"]
    )


def _run_beside_a_step_summary(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, suite: str
) -> tuple[pytest.RunResult, Path]:
    """``suite`` run with ``--kernelprof-summary out/summary.md`` under a GitHub step summary that
    already holds an earlier step's line."""
    pytester.makepyfile(test_suite=suite)
    step = pytester.path / "step_summary.md"
    step.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    return pytester.runpytest("--kernelprof-summary", "out/summary.md"), step


def test_a_summary_path_under_github_actions_is_written_beside_the_step_summary(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The flag adds a file: it does not take the run page's summary away (it did, issue 32).
    result, step = _run_beside_a_step_summary(pytester, monkeypatch, SUITE)
    result.assert_outcomes(failed=1)
    mine = (pytester.path / "out" / "summary.md").read_text()
    assert mine.startswith("## pytest-kernelprof\n")
    assert "test_suite.py::test_fails" in mine
    assert step.read_text() == "earlier step\n" + mine
    # The step's own file named as PATH is written once; none writes neither.
    result = pytester.runpytest("--kernelprof-summary", str(step))
    assert step.read_text() == "earlier step\n" + mine * 2
    result = pytester.runpytest("--kernelprof-summary", "none")
    result.assert_outcomes(failed=1)
    assert step.read_text() == "earlier step\n" + mine * 2
    assert (pytester.path / "out" / "summary.md").read_text() == mine


PASSING = f"""
import pytest

TRACE = {str(DATA / "h200_linear_eager.json.gz")!r}

@pytest.fixture
def loaded(kernelprof):
    return kernelprof.load_trace(TRACE)

def test_one(kernelprof):
    assert len(kernelprof.load_trace(TRACE).kernels) == 1

def test_two(kernelprof, loaded):
    assert len(loaded.kernels) == len(kernelprof.load_trace(TRACE).kernels) == 1

def test_plain():
    pass
"""


def test_a_named_summary_file_is_written_on_a_run_with_nothing_to_report(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A trial: a CI step that uploads the named file found none after a passing run.
    result, step = _run_beside_a_step_summary(pytester, monkeypatch, PASSING)
    result.assert_outcomes(passed=3)
    # A fixture's profile counts for the test that used it: three profiles, in two tests.
    assert (pytester.path / "out" / "summary.md").read_text() == (
        "## pytest-kernelprof\n\nNo profile failures: 2 tests took 3 profiles, none failed on one.\n"
    )
    # The job's page keeps no section that says nothing.
    assert step.read_text() == "earlier step\n"


def test_a_named_summary_file_holds_the_last_run_only(pytester: pytest.Pytester) -> None:
    # Replaced, as --junitxml's file is: appended, it kept an earlier run's failures under this
    # run's "no profile failures".
    pytester.makepyfile(test_suite=SUITE)
    summary = pytester.path / "summary.md"
    pytester.runpytest("--kernelprof-summary", str(summary)).assert_outcomes(failed=1)
    assert "test_suite.py::test_fails" in summary.read_text()
    pytester.makepyfile(test_suite="def test_plain():\n    pass\n")
    pytester.runpytest("--kernelprof-summary", str(summary)).assert_outcomes(passed=1)
    assert summary.read_text() == "## pytest-kernelprof\n\nNo profile failures: no test took a profile.\n"
    # Written beside and renamed onto it: no temporary file is left.
    assert sorted(path.name for path in pytester.path.iterdir() if "summary" in path.name) == ["summary.md"]


def test_the_summary_option_says_when_it_writes_the_file(pytester: pytest.Pytester) -> None:
    text = " ".join(pytester.runpytest("--help").stdout.str().split())
    assert "--kernelprof-summary=PATH Write a Markdown summary" in text
    assert "to PATH at the end of every run (a line saying so where no profile failed)" in text
