"""``kernelprof show`` and ``diff`` where the input is odd: a trace that lost every kernel record
is refused, not shown; ``-`` reads standard input."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
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


# -- item 17: standard input ----------------------------------------------------------------


def _run_cli(*args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_kernelprof", *args], input=stdin, capture_output=True, check=False
    )


@pytest.mark.parametrize("packed", [True, False], ids=["gzip", "json"])
def test_show_dash_reads_standard_input(trace: Trace, packed: bool) -> None:
    data = trace("geglu_eager").read_bytes()
    result = _run_cli("show", "-", stdin=data if packed else gzip.decompress(data))
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode()
    assert out.startswith("<stdin>: NVIDIA H200 (sm90), 3 call(s)\n")
    assert out.count("nvjet_sm90_tst_") == 3


def test_diff_reads_one_side_from_standard_input(trace: Trace) -> None:
    result = _run_cli("diff", "-", str(trace("geglu_compiled")), stdin=trace("geglu_eager").read_bytes())
    assert result.returncode == 1, result.stderr
    assert result.stdout.decode().startswith("a = <stdin>: NVIDIA H200")


def test_bad_standard_input_names_stdin_not_a_temporary_file() -> None:
    result = _run_cli("show", "-", stdin=b"")
    assert result.returncode == 2
    assert result.stderr.decode() == "kernelprof: error: <stdin>: the file is empty, not a Chrome trace\n"


def test_standard_input_is_read_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "-", "-"]) == 2
    assert capsys.readouterr().err == "kernelprof: error: only one of the traces can be standard input ('-')\n"
