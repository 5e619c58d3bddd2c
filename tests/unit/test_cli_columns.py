"""``kernelprof show``'s time columns say whose times they hold, one header per meaning: a
call's own times are ``call N us``, ``call N host us``, ``call N gpu us``, where a failure's
(medians over the calls) are ``median us`` and ``median gpu us``."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.cli import main
from pytest_kernelprof.cli.diff import _call_table
from pytest_kernelprof.tables import format_us
from tests.helpers import Stream, write

Trace = Callable[[str], Path]


def _headers(out: str, first: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(f"#  {first}")]


def test_show_names_the_call_of_its_sync_and_copy_times(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    # Trial: kernel time was "call 1 us" in show, copy time plain "gpu us" beside it, and a failure's
    # "median gpu us": two meanings, one of them unlabelled.
    path = str(trace("copy_dtoh_pageable_nonblocking"))
    assert main(["show", path]) == 0
    out = capsys.readouterr().out
    [syncs] = _headers(out, "runtime call ")
    [copies] = _headers(out, "direction ")
    assert "  call 2 host us  " in syncs
    assert "  call 2 gpu us  " in copies
    assert main(["show", "--calls", path]) == 0
    out = capsys.readouterr().out
    assert [re.findall(r"call \d host us", line) for line in _headers(out, "runtime call ")] == [
        ["call 0 host us"],
        ["call 1 host us"],
        ["call 2 host us"],
    ]
    assert [re.findall(r"call \d gpu us", line) for line in _headers(out, "direction ")] == [
        ["call 0 gpu us"],
        ["call 1 gpu us"],
        ["call 2 gpu us"],
    ]
    # A failure's tables keep theirs: each copy's median over the calls.
    assert "  median gpu us  " in load_trace(path).copies.table()


def test_an_idle_share_that_rounds_to_100_while_the_gpu_worked_reads_above_99(
    trace: Trace, capsys: pytest.CaptureFixture[str]
) -> None:
    # Trial: call 0 had 2.6us busy in a 1336.4us host span and read "idle 100%".
    prof = load_trace(trace("matmul_add_compiled"))
    assert 0.995 <= prof.calls[0].gpu_idle_fraction < 1
    assert main(["show", "--calls", str(trace("matmul_add_compiled"))]) == 0
    idle = re.findall(r"\(idle ([^)]*)\)", capsys.readouterr().out)
    assert idle[0] == ">99%"
    assert "100%" not in idle
    # kernelprof diff's idle line, of the calls it compares, says it the same way.
    idle_row = next(row for row in _call_table(prof.calls[0], prof.calls[1]).splitlines() if "GPU idle" in row)
    assert idle_row.split()[-4:] == [">99%", "99%", "-1", "pt"]  # of the whole percentages: 100 - 99


def test_show_medians_prints_the_table_a_failure_shows(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    # A trial: 56.5 in a failure's table ("median us") and 57.2 in show's ("call 1 us") for one
    # kernel, with no way to get the failure's table back from the saved trace.
    path = str(trace("geglu_eager"))
    assert main(["show", "--medians", path]) == 0
    out = capsys.readouterr().out.splitlines()
    table = load_trace(path).table().splitlines()
    assert out[: len(table)] == table  # the profile's table alone names the trace: one head line
    assert "median us" in out[1]
    assert main(["show", "--medians", "--calls", path]) == 2
    assert "--medians with --calls" in capsys.readouterr().err


def test_show_medians_says_whose_times_its_op_tree_holds(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    # A trial: under --medians the kernel table holds medians, the op tree under it one call's own
    # times, unlabelled, while a failed prof.ops assertion shows each op's median.
    path = str(trace("geglu_eager"))
    median = load_trace(path).fastest_call.index
    assert main(["show", "--medians", "--ops", path]) == 0
    out = capsys.readouterr().out.splitlines()
    heading = f"op tree of call {median} (numbered from 0), its own times; prof.ops holds each op's median:"
    assert heading in out
    assert out[out.index(heading) + 1].startswith("op ")  # right above the tree
    assert main(["show", "--ops", path]) == 0
    assert heading not in capsys.readouterr().out  # plain show's tree is under the call's own table


def test_show_and_show_medians_both_print_the_copies_and_their_fixes(
    trace: Trace, capsys: pytest.CaptureFixture[str]
) -> None:
    # Trial: plain show printed the `1 copy:` table and no `to fix:` line, --medians the `to fix:`
    # lines and no copies' table.
    path = str(trace("copy_dtoh_pageable_nonblocking"))
    fixes = load_trace(path).copies.fix_lines()
    assert fixes
    for args in (["show", path], ["show", "--medians", path]):
        assert main(args) == 0
        out = capsys.readouterr().out.splitlines()
        assert len(_headers(out="\n".join(out), first="direction ")) == 1, args
        assert [line for line in out if line.startswith("to fix: ")] == fixes, args
    # Under --calls, each fix once, though every call copied.
    assert main(["show", "--calls", path]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(_headers("\n".join(out), "direction ")) == 3
    assert [line for line in out if line.startswith("to fix: ")] == fixes


def _columns(out: str, *names: str) -> list[tuple[str, ...]]:
    """The cells of the kernel table's columns ``names``, row by row (kernel names have no spaces here)."""
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("#  kind "))
    headers = re.split(r"\s{2,}", lines[at])
    rows = []
    for line in lines[at + 1 :]:
        if not line[:1].isdigit():
            break
        cells = re.split(r"\s{2,}", line)
        rows.append(tuple(cells[headers.index(name)] for name in names))
    return rows


def test_plain_show_prints_each_kernels_median_beside_the_calls_own_times(
    trace: Trace, capsys: pytest.CaptureFixture[str]
) -> None:
    # A trial: kernel #1 of the compiled GeGLU read 59.2 in a failure's table ("median us") and
    # 60.1 in plain show ("call 2 us"), the first command a user runs after a failure.
    path = str(trace("geglu_compiled"))
    prof = load_trace(path)
    call = prof.fastest_call
    assert main(["show", path]) == 0
    out = capsys.readouterr().out
    [header] = _headers(out, "kind ")
    assert f"  call {call.index} us  median us  launched by  " in header  # the call's own first
    rows = _columns(out, f"call {call.index} us", "median us")
    assert rows == [
        (format_us(own.duration_us), format_us(median.duration_us))
        for own, median in zip(call.kernels, prof.kernels, strict=True)
    ]
    assert any(own != median for own, median in rows)  # the two columns differ on this trace
    # Every figure of a failure's table is in plain show's.
    failure = prof.kernels.table()
    assert [median for _, median in rows] == [cells[0] for cells in _columns(failure, "median us")]
    # --calls and --medians as they were: each call's own times, the medians alone.
    assert main(["show", "--calls", path]) == 0
    assert "median us" not in capsys.readouterr().out
    assert main(["show", "--medians", path]) == 0
    [header] = _headers(capsys.readouterr().out, "kind ")
    assert " call " not in header
    assert header.count("median us") == 1


def _calls(tmp_path: Path, calls: list[list[str]]) -> str:
    """A trace of one profiled call per list of kernel names, each a kernel of its own aten::mm."""
    s = Stream()
    for index, names in enumerate(calls):
        t = 1000.0 + 200 * index
        s.step(index, t, 100.0)
        op = s.op("aten::mm", t + 1, 90.0)
        for i, name in enumerate(names):
            s.launch(op, name, t + 2 + 10 * i, dur=2.0 + index)
    return str(write(tmp_path, s))


@pytest.mark.parametrize(
    "calls",
    [pytest.param([["gemm_a", "gemm_b"]], id="one-call"), pytest.param([["gemm_a"], ["gemm_b"]], id="varied")],
)
def test_one_call_and_varied_calls_have_no_median_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], calls: list[list[str]]
) -> None:
    # No medians to show: one call's are its own times, varied calls' kernels have none.
    assert main(["show", _calls(tmp_path, calls)]) == 0
    out = capsys.readouterr().out
    [header] = _headers(out, "kind ")
    assert "  call 0 us  launched by  " in header
    assert "median" not in out
