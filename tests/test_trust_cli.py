"""``kernelprof show`` and ``diff`` where the input is odd: a trace that lost every kernel record
is refused, not shown; ``-`` reads standard input."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_kernelprof.cli import main

Trace = Callable[[str], Path]


def _without_kernels(tmp_path: Path, trace: Trace) -> Path:
    data = json.loads(gzip.decompress(trace("geglu_eager").read_bytes()))
    data["traceEvents"] = [e for e in data["traceEvents"] if e.get("cat") != "kernel"]  # all dropped
    path = tmp_path / "lost.json"
    path.write_text(json.dumps(data))
    return path


def test_show_refuses_a_trace_that_lost_every_kernel_record(
    tmp_path: Path, trace: Trace, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _without_kernels(tmp_path, trace)
    assert main(["show", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no profile: there is nothing true to show
    lost = "the profiler lost GPU records: 15 of 15 kernel launches"
    assert captured.err.startswith(f"kernelprof: error: {path}: {lost}")
    assert "refused" in captured.err
    assert "warning" not in captured.err
    assert len(captured.err.splitlines()) == 1


def test_diff_refuses_it_too(tmp_path: Path, trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    path = _without_kernels(tmp_path, trace)
    assert main(["diff", str(trace("geglu_eager")), str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"kernelprof: error: {path}: the profiler lost GPU records")
