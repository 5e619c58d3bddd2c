"""The record a test's report carries to the xdist controller: every field arrives as it left."""

from __future__ import annotations

import json

from pytest_kernelprof.checks.baseline import Checked, Improved, ReadUnderOldName, Recorded, Renamed
from pytest_kernelprof.reports.records import Failure, ReportRecord, SyncSite, Unplaced, by_test

ODD = 'a|b "q" it\'s ünï ✓ new\nline tab\t back\\slash \ud800 ::x'


def test_a_record_round_trips_through_json_whatever_its_text_holds() -> None:
    record = ReportRecord(
        baselines=(
            Checked(f"/p/{ODD}.json", "sm90", ODD),
            Recorded("written", f"/p/{ODD}.json", "sm90", ODD),
            Recorded("updated", f"/p/{ODD}.json", "sm90", "x", ("kernels per call: 4 -> 5", f"count changes: {ODD}")),
            Renamed("/old|x.json", "/new|x.json"),
            ReadUnderOldName("/old|x.json", "/new|x.json"),
            Improved(f"t.py::test[{ODD}]", ODD, "peak_bytes", 1_000_000, 800_000),
        ),
        unplaced=(Unplaced(f"k<{ODD}>", "aten::mm", 3), Unplaced("other_kernel", "", 1)),
        failure=Failure("syncs", f"assert not {ODD}", 2, f"/t/{ODD}.py", None),
        syncs=(SyncSite("main.py", 40, "step", "cudaStreamSynchronize", None, 2),),
        device="kernelprof: NVIDIA H200 (sm90)",
        worker="gw1",
        profiles=2,
    )
    text = record.to_json()
    assert text.isascii()  # xdist sends it as text: a lone surrogate must not break that
    json.loads(text)
    assert ReportRecord.from_json(text) == record
    assert not ReportRecord()
    assert ReportRecord.from_json(ReportRecord().to_json()) == ReportRecord()


def test_a_tests_records_merge_in_the_order_its_reports_came() -> None:
    setup = ReportRecord(device="line", worker="gw0", profiles=1)
    call = ReportRecord(
        baselines=(Checked("p", "sm90", "x"), Checked("p", "sm90", "x")),
        failure=Failure("rule", "m", 0, "f", 1),
        profiles=2,
    )
    other = ReportRecord(unplaced=(Unplaced("k", "", 1),))
    merged = by_test([("t::a", setup), ("t::b", other), ("t::a", call)])
    assert list(merged) == ["t::a", "t::b"]
    assert merged["t::a"] == ReportRecord(
        baselines=(Checked("p", "sm90", "x"),),
        failure=Failure("rule", "m", 0, "f", 1),
        device="line",
        worker="gw0",
        profiles=3,  # the profiles its fixture took in setup and those of its call
    )
    assert merged["t::b"] == other
