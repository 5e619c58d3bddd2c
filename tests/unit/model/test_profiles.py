"""The profile's values (``model/profiles.py``) show as one line in a repr and as their table
in IPython."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import pytest_kernelprof as kp
from pytest_kernelprof import load_trace
from tests.helpers import DATA

Trace = Callable[[str], Path]


@pytest.fixture
def linear(trace: Trace) -> kp.KernelProfile:
    return load_trace(trace("linear_eager"))


def test_reprs_are_one_line_and_ipython_gets_the_table(linear: kp.KernelProfile) -> None:
    shown: list[str] = []

    class Printer:
        def text(self, text: str) -> None:
            shown.append(text)

    for value in (linear, linear.kernels, linear.ops, linear.calls[0]):
        assert "\n" not in repr(value)
        value._repr_pretty_(Printer(), False)
        assert "\n" in shown[-1]
    assert "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT" in shown[1]


def test_a_trace_files_name_stays_on_the_tables_first_line(trace: Trace, tmp_path: Path) -> None:
    """The table starts with where the profile came from: a file named with a newline and
    ``::error::`` (an artifact from another job) must not start a line, a workflow command."""
    path = tmp_path / "x\n::error::fromfilename.json.gz"
    path.write_bytes(trace("sync_device").read_bytes())
    prof = load_trace(path)
    assert len(prof.kernels) == 1
    text = prof.table()
    assert not [line for line in text.splitlines() if line.strip().startswith("::")], text
    assert text.splitlines()[0].endswith(
        r"x\n::error::fromfilename.json.gz on NVIDIA H200 (sm90): 3 calls (each kernel's time its median over them)"
    )
    assert "\n" not in repr(prof)


def test_the_line_that_names_the_median_call_shows_its_own_syncs(trace: Trace) -> None:
    from dataclasses import replace

    from pytest_kernelprof.model import SyncList

    prof = load_trace(trace("copy_dtoh_pageable_nonblocking"))
    assert [round(c.syncs[0].duration_us, 1) for c in prof.calls] == [297.2, 298.5, 291.0]
    assert round(prof.syncs[0].duration_us, 1) == 298.5  # the median call's own (a trial: it was 297.2, no call's)
    line, *table = prof.host_summary().splitlines()
    assert line.startswith("per call (call 1, the median of 3 by host span):")
    assert line.endswith(", 1 host sync:")
    assert table[1].split()[:5] == ["0", "cudaMemcpyAsync", "copy", "DtoH", "pageable"]
    assert table[1].split()[5] == "298.5"  # call 1's own
    # Calls that synced differently: the call with the most, said so.
    twice = SyncList([*prof.calls[2].syncs, *prof.calls[2].syncs])
    calls = (*prof.calls[:2], replace(prof.calls[2], syncs=twice))
    varied = replace(prof, calls=calls, call=replace(prof.call, syncs=twice))
    line = varied.host_summary().splitlines()[0]
    assert line.endswith(", 2 host syncs (call 2's, the call with the most: the calls synced differently):")


def test_the_per_call_line_gives_the_kernel_tables_sum_where_the_call_differs() -> None:
    # Trial report: a failed count's table of medians added to 221.6us, the line under it said
    # "222.8us in kernels" (the median call's own), and the two read as contradicting each other.
    prof = load_trace(DATA / "h200_geglu_compiled.json.gz")
    lines = prof.table().splitlines()
    column = lines[1].split().index("us")
    table_us = sum(float(row.split()[column]) for row in lines[2:6])
    assert f"{table_us:.1f}" == "221.6" != f"{prof.median_call.kernels.total_us:.1f}"
    assert lines[-1].startswith(
        "per call (call 1, the median of 3 by host span): 4 launches, 222.8us in kernels "
        "(the table's medians add to 221.6us), host 371.0us"
    )
