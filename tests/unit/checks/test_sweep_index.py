"""A sweep's index (``sweep.json``) that no export wrote: one clear TraceError naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_kernelprof import TraceError
from pytest_kernelprof.checks.sweep import read_index


def test_an_index_nested_too_deeply_is_a_trace_error_naming_it(tmp_path: Path) -> None:
    index = tmp_path / "sweep.json"
    index.write_text('{"format": 1, "cases": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(TraceError, match=r"sweep\.json: not a sweep index \(nested too deeply to read\)"):
        read_index(tmp_path)


@pytest.mark.parametrize("name", ["x\x00y", "x\ny", "\x1b]0;pwned\x07", "..", "", "a/b", "a\\b"])
def test_a_trace_name_that_is_no_plain_file_name_is_refused(tmp_path: Path, name: str) -> None:
    index = tmp_path / "sweep.json"
    index.write_text(json.dumps({"format": 1, "cases": [{"params": {}, "trace": name, "compiled": None}]}))
    with pytest.raises(TraceError) as info:
        read_index(index)
    assert str(info.value).startswith(f"{index}: cases[0] is not a case")
    assert str(info.value).isprintable()


def test_a_plain_trace_name_is_read_beside_the_index(tmp_path: Path) -> None:
    index = tmp_path / "sweep.json"
    index.write_text(json.dumps({"format": 1, "cases": [{"params": {"n": 1}, "trace": "c é.json", "compiled": 2}]}))
    [case] = read_index(index)
    assert (case.params, case.trace, case.compiled) == ({"n": 1}, tmp_path / "c é.json", 2)
