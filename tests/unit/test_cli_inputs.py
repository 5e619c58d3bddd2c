"""What ``kernelprof show`` and ``kernelprof diff`` say of their inputs beyond a trace's kernels:
a folder given for a trace (what it holds, and a trace of it to show), and two traces recorded on
different cards."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from pytest_kernelprof.cli import main
from tests.helpers import DATA

SWEEP = DATA / "h100_sweep_geglu"


def test_a_sweeps_folder_is_named_as_one_with_a_trace_of_it_to_show(capsys: pytest.CaptureFixture[str]) -> None:
    # Trial: `kernelprof show tests/data/h100_sweep_geglu` said "a directory, not a trace file",
    # and no more.
    for command in (["show", str(SWEEP)], ["diff", str(SWEEP), str(DATA / "h200_geglu_eager.json.gz")]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert "a sweep's folder (sweep.json and 8 traces), which pytest_kernelprof.load_sweep reads" in err
        shown = shlex.split(err.rsplit("kernelprof show ", 1)[1])
        assert shown == [str(SWEEP / "case-00.json.gz")]
        assert main(["show", *shown]) == 0
        capsys.readouterr()


def test_a_folder_of_traces_names_one_and_an_empty_one_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().endswith(": a directory with no trace file in it; name a trace file")
    (tmp_path / "a b.json.gz").write_bytes((DATA / "h200_geglu_eager.json.gz").read_bytes())
    (tmp_path / "notes.txt").write_text("")
    assert main(["show", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "a directory of 1 trace file; show one of them: kernelprof show " in err
    assert shlex.split(err.rsplit("kernelprof show ", 1)[1]) == [str(tmp_path / "a b.json.gz")]


def test_diff_says_where_the_traces_were_recorded_on_different_cards(capsys: pytest.CaptureFixture[str]) -> None:
    h100, h200 = DATA / "h100_inductor_geglu_bf16.json.gz", DATA / "h200_geglu_compiled.json.gz"
    assert main(["diff", str(h100), str(h200)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == "note: a ran on NVIDIA H100 80GB HBM3, b on NVIDIA H200: kernels and times may differ by card"
    assert main(["diff", str(h200), str(DATA / "h200_geglu_eager.json.gz")]) == 1
    assert "differ by card" not in capsys.readouterr().out  # one card: nothing to say
