"""The commands a failed test's report prints with a trace's path (``kernelprof show --medians
PATH``, the saved traces' ``kernelprof show PATH``) read that file when pasted into the shell
pytest was started in, wherever that is under the rootdir."""

from __future__ import annotations

import re
import shlex
import shutil

import pytest

from tests.helpers import DATA

TESTS = """
from pathlib import Path


def test_rootdirs_data(kernelprof):
    prof = kernelprof.load_trace(Path(__file__).parent.parent / "data" / "x.json.gz")
    assert len(prof.kernels) == 0


def test_beside(kernelprof):
    prof = kernelprof.load_trace("data/y.json.gz")
    assert len(prof.kernels) == 0
"""


def test_pasted_trace_paths_read_from_the_folder_pytest_ran_in(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Trial: run from tests/ (the rootdir its parent), a failure said `kernelprof show --medians
    # data/h200_linear_eager.json.gz`, the path relative to the rootdir: pasted into that shell it
    # read tests/data and found nothing, while the baseline's command in the same run worked.
    root = cpu_pytester.path
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "data").mkdir()
    (root / "tests" / "data").mkdir(parents=True)
    shutil.copy(DATA / "h200_linear_eager.json.gz", root / "data" / "x.json.gz")
    shutil.copy(DATA / "h200_linear_eager.json.gz", root / "tests" / "data" / "y.json.gz")
    (root / "tests" / "test_mine.py").write_text(TESTS)
    here = root / "tests"
    monkeypatch.chdir(here)
    result = cpu_pytester.runpytest("-p", "no:randomly", "--kernelprof-trace-dir", "traces")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    medians = re.findall(r"^kernelprof show --medians (.+?) prints this table", out, re.MULTILINE)
    saved = re.findall(r"  \(kernelprof show (.+)\)$", out, re.MULTILINE)
    assert len(medians) == 2, out
    assert len(saved) == 2, out
    for command in [*medians, *saved]:
        (path,) = shlex.split(command)
        assert (here / path).is_file(), command
    assert sorted(medians) == ["../data/x.json.gz", "data/y.json.gz"]


BASELINE_AFTER_CHDIR = """
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace

DATA = Path({data!r})


@pytest.fixture(autouse=True)
def elsewhere(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # a suite's fixture that changes the working folder before the test's


def test_moves(kernel_baseline):
    assert load_trace(DATA / "h200_linear_eager.json.gz") == kernel_baseline
"""


def test_a_baseline_command_names_the_test_from_where_pytest_started(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The update command was relative to the working folder when the fixture was set up; a test
    # that had changed it got a command its shell could not run. It reads from where pytest started.
    root = cpu_pytester.path
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_mine.py").write_text(BASELINE_AFTER_CHDIR.format(data=str(DATA)))
    monkeypatch.chdir(root / "tests")
    result = cpu_pytester.runpytest_subprocess("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*pytest --kernelprof-update 'test_mine.py::test_moves'*"])
