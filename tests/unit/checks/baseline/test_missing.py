"""A baseline with no entry for the profile fails with ``BaselineMissingError``, a
``BaselineMismatchError`` (so ``except``/``pytest.raises`` of that still catch it): a trial read
``BaselineMismatchError: no kernel baseline sm90/default in ...`` as a mismatch, as a JUnit
``message`` or a CI filter on error types would. One that differs stays a plain mismatch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_kernelprof import BaselineMismatchError, BaselineMissingError, ProfileSweep, load_sweep, load_trace
from pytest_kernelprof.checks.baseline import KernelBaseline, record
from tests.helpers import DATA

GEGLU = DATA / "h200_geglu_compiled.json.gz"
SWEEP = DATA / "h100_sweep_geglu"
BROKEN = DATA / "h100_sweep_geglu_odd_break"


def _check(path: Path) -> KernelBaseline:
    return KernelBaseline(path, "t.py::test_m", update=False, names="stable", notes=[])


def test_an_entry_missing_is_its_own_error_and_still_a_mismatch(tmp_path: Path) -> None:
    assert issubclass(BaselineMissingError, BaselineMismatchError)
    assert issubclass(BaselineMissingError, AssertionError)
    prof = load_trace(GEGLU)
    path = tmp_path / "test_m.json"
    # No file, then a file with another architecture's entry only, then another name's only.
    with pytest.raises(BaselineMissingError, match=r"^no kernel baseline sm90/default in .*\nrecord it with: "):
        _check(path).check(prof)
    record(path, "sm80", "default", prof)
    with pytest.raises(BaselineMissingError, match=r"^no kernel baseline sm90/default in "):
        _check(path).check(prof)
    record(path, "sm90", "other", prof)
    with pytest.raises(BaselineMismatchError, match=r"^no kernel baseline sm90/default in ") as caught:
        _check(path).check(prof)
    assert type(caught.value) is BaselineMissingError
    assert caught.value.kernels is not None  # its table is the profile's: a report shows it once


def test_a_missing_entrys_table_says_whose_times_it_shows(tmp_path: Path) -> None:
    """The trial: its table had a `median us` column without the note every other failure's carries."""
    prof = load_trace(GEGLU)
    with pytest.raises(BaselineMissingError) as caught:
        _check(tmp_path / "test_m.json").check(prof)
    lines = str(caught.value).splitlines()
    assert lines[2] == f"the kernels it would record (times: {prof.kernels.times}):"
    assert prof.kernels.times == "each kernel's median over the 3 calls"
    assert lines[3].startswith("#  kind ")
    assert "median us" in lines[3]


def test_an_entry_that_differs_is_a_mismatch_not_a_missing_entry(tmp_path: Path) -> None:
    prof = load_trace(GEGLU)
    path = tmp_path / "test_m.json"
    record(path, "sm90", "default", prof)
    data = json.loads(path.read_text())
    data["archs"]["sm90"]["default"]["metrics"]["launches"] = 1
    path.write_text(json.dumps(data))
    with pytest.raises(BaselineMismatchError) as caught:
        _check(path).check(prof)
    assert type(caught.value) is BaselineMismatchError
    # `prof == kernel_baseline` is pytest's AssertionError either way: its explanation says which.
    missing = _check(tmp_path / "none.json")
    assert prof != missing
    explained = missing.explanation()
    assert explained is not None
    assert explained.head[1].startswith("no kernel baseline sm90/default in ")


def test_a_sweep_whose_buckets_only_lack_entries_is_missing_and_one_that_differs_a_mismatch(tmp_path: Path) -> None:
    path = tmp_path / "test_sweep.json"
    KernelBaseline(path, "t.py::test_sweep", update=True, names="stable", notes=[]).check_sweep(
        load_sweep(SWEEP)[:4], by="hidden"
    )
    with pytest.raises(BaselineMissingError, match=r"bucket 'hidden=4096': no entry sm90/sweep\[hidden=4096\]"):
        _check(path).check_sweep(load_sweep(SWEEP), by="hidden")
    # A bucket that differs beside one without an entry: something changed, a mismatch.
    changed = ProfileSweep([*(c for c in load_sweep(BROKEN) if c["hidden"] == 1024), *load_sweep(SWEEP)[4:]])
    with pytest.raises(BaselineMismatchError) as caught:
        _check(path).check_sweep(changed, by="hidden")
    assert "bucket 'hidden=1024' differs from" in str(caught.value)
    assert "bucket 'hidden=4096': no entry" in str(caught.value)
    assert type(caught.value) is BaselineMismatchError
