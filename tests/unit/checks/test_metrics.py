"""Baseline metrics with a direction: worse fails, better passes and is reported, old files work."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_kernelprof import KernelProfile, load_trace
from pytest_kernelprof.assemble import build_profile
from pytest_kernelprof.checks.baseline import (
    UPDATED,
    BaselineNote,
    BaselineSession,
    Improved,
    KernelBaseline,
    Signature,
    compare_metrics,
    record,
)
from pytest_kernelprof.checks.baseline.files import accepted_lines
from pytest_kernelprof.health import CompileFacts, GraphBreak, MemoryReading
from pytest_kernelprof.plugin.settings import parse_percent
from pytest_kernelprof.traces.chrome import events_from_trace_file
from tests.helpers import DATA

Trace = Callable[[str], Path]


def live_like(peak: int, *, breaks: int = 0, recompiles: int = 0) -> KernelProfile:
    """The compiled GeGLU trace with what a live capture adds: allocator readings, compile facts."""
    source, events = events_from_trace_file(DATA / "h200_geglu_compiled.json.gz")
    facts = CompileFacts(
        "test", frames=1, graph_breaks=tuple(GraphBreak("x", "m.py", i) for i in range(breaks)), recompiles=recompiles
    )
    return build_profile(events, source, memory=[MemoryReading(0, peak, 0)] * 3, compile_facts=facts)


def test_a_signature_keeps_the_metrics_its_profile_can_tell(trace: Trace) -> None:
    events = {"syncs": 0, "dtoh_copies": 0, "launches": 4}  # a trace has these
    assert Signature.of(load_trace(trace("geglu_compiled"))).metrics == events
    assert Signature.of(live_like(1000, breaks=2)).metrics == {
        **events,
        "graph_breaks": 2,
        "recompiles": 0,
        "peak_bytes": 1000,
    }


def test_syncs_copies_and_launches_compare_from_traces(trace: Trace) -> None:
    item = Signature.of(load_trace(trace("compile_graph_break")))  # H200: .item() between compiled graphs
    assert (item.metrics["syncs"], item.metrics["dtoh_copies"], item.metrics["launches"]) == (1, 1, 3)
    worse, better = compare_metrics(item, Signature.of(load_trace(trace("geglu_compiled"))), 0.05)
    assert [str(c) for c in worse] == ["launches: 3 -> 4"]
    assert [str(c) for c in better] == ["syncs: 1 -> 0", "dtoh_copies: 1 -> 0", "memcpys: 1 -> 0"]


def test_lower_is_better_and_peak_memory_has_a_tolerance() -> None:
    stored = Signature.of(live_like(1000, breaks=1, recompiles=1))
    worse, better = compare_metrics(stored, Signature.of(live_like(1050, breaks=2)), 0.05)
    assert [str(c) for c in worse] == ["graph_breaks: 1 -> 2"]  # 1050 is within 5% of 1000
    assert [str(c) for c in better] == ["recompiles: 1 -> 0"]
    worse, better = compare_metrics(stored, Signature.of(live_like(1051, breaks=1, recompiles=1)), 0.05)
    assert [str(c) for c in worse] == ["peak_bytes: 1,000 -> 1,051 (+5.1%; tolerance 5%)"]
    _, better = compare_metrics(stored, Signature.of(live_like(900, breaks=1, recompiles=1)), 0.05)
    assert [(c.name, c.stored, c.current) for c in better] == [("peak_bytes", 1000, 900)]
    missing = Signature(stored.kernels, stored.memcpy, stored.memset, {})
    assert compare_metrics(missing, stored, 0.05) == ([], [])
    assert compare_metrics(stored, missing, 0.05) == ([], [])


def _baseline(tmp_path: Path, notes: list[BaselineNote], *, update: bool = False) -> KernelBaseline:
    return KernelBaseline(
        tmp_path / "test_m.json", "tests/test_m.py::test_m", update=update, names="stable", notes=notes
    )


def test_worse_fails_with_the_change_and_better_passes_with_a_note(tmp_path: Path) -> None:
    notes: list[BaselineNote] = []
    _baseline(tmp_path, notes, update=True).check(live_like(1000, breaks=1))
    with pytest.raises(AssertionError) as info:
        _baseline(tmp_path, notes).check(live_like(2000, breaks=3))
    message = str(info.value)
    assert "kernel signature differs" not in message  # the kernels are the same
    assert "worse than the baseline sm90/default in" in message
    assert "(lower is better):\n  graph_breaks: 1 -> 3\n  peak_bytes: 1,000 -> 2,000 (+100.0%; tolerance 5%)" in message
    assert message.endswith("if the change is intended: pytest --kernelprof-update 'tests/test_m.py::test_m'")

    notes.clear()
    _baseline(tmp_path, notes).check(live_like(500, breaks=0))
    assert [note for note in notes if isinstance(note, Improved)] == [
        Improved("tests/test_m.py::test_m", "default", "graph_breaks", 1, 0),
        Improved("tests/test_m.py::test_m", "default", "peak_bytes", 1000, 500),
    ]


def test_an_old_entry_without_metrics_is_compared_by_kernels_and_update_adds_them(tmp_path: Path) -> None:
    path = tmp_path / "test_m.json"
    record(path, "sm90", "default", live_like(1000))
    data = json.loads(path.read_text())
    del data["archs"]["sm90"]["default"]["metrics"]  # as pytest-kernelprof 0.1 wrote it
    path.write_text(json.dumps(data))
    notes: list[BaselineNote] = []
    _baseline(tmp_path, notes).check(live_like(10**9, breaks=5))  # nothing to compare the metrics with
    assert record(path, "sm90", "default", live_like(1000)) == UPDATED
    assert json.loads(path.read_text())["archs"]["sm90"]["default"]["metrics"]["peak_bytes"] == 1000


def test_a_malformed_metrics_object_is_a_baseline_error(tmp_path: Path) -> None:
    from pytest_kernelprof import BaselineError
    from pytest_kernelprof.checks.baseline import read_baseline

    path = tmp_path / "test_m.json"
    record(path, "sm90", "default", live_like(1000))
    data = json.loads(path.read_text())
    data["archs"]["sm90"]["default"]["metrics"] = {"peak_bytes": "lots"}
    path.write_text(json.dumps(data))
    with pytest.raises(BaselineError, match=r"entry sm90/default: metrics\.peak_bytes is 'lots', not a size"):
        read_baseline(path)


def test_the_summary_says_what_improved_and_how_to_lock_it_in() -> None:
    session = BaselineSession()
    session.add_report(
        "tests/test_m.py::test_m[a]", [Improved("tests/test_m.py::test_m[a]", "default", "peak_bytes", 12000, 9000)]
    )
    session.add_report("tests/test_m.py::test_n", [Improved("tests/test_m.py::test_n", "eager", "syncs", 12, 9)])
    [section] = session.summary(Path("."), narrowed=True)
    assert section == [
        "kernelprof: 2 baseline metrics better",
        "better: peak_bytes: 12,000 -> 9,000 in tests/test_m.py::test_m[a]",
        "lock it in with pytest --kernelprof-update 'tests/test_m.py::test_m[a]'",
        "better: syncs: 12 -> 9 in tests/test_m.py::test_n (eager)",
        "lock it in with pytest --kernelprof-update 'tests/test_m.py::test_n'",
    ]


def test_the_runs_end_says_a_better_value_as_the_update_listing_does(trace: Trace, tmp_path: Path) -> None:
    # Trial: the run's end said `improved: t dtoh_copies 1 -> 0` where an update's listing said
    # `better: dtoh_copies: 1 -> 0`, and counted `memcpys` (a signature count) among the metrics.
    path = tmp_path / "t.json"
    record(path, "sm90", "default", load_trace(trace("compile_graph_break")))  # .item(): a sync, a copy, a memcpy
    stored = json.loads(path.read_text())["archs"]["sm90"]["default"]
    current = load_trace(trace("geglu_compiled"))
    listed = [line for line in accepted_lines(stored, current, "stable", 0.05) if line.startswith("better: ")]
    _, better = compare_metrics(Signature.from_json(stored), Signature.of(current), 0.05)
    nodeid = "test_imp.py::test_imp"
    session = BaselineSession()
    session.add_report(nodeid, [Improved(nodeid, "default", c.name, c.stored, c.current) for c in better])
    [section] = session.summary(Path("."), narrowed=True)
    assert section[0] == "kernelprof: 2 baseline metrics and 1 memory-op count better"
    assert section[1:-1] == [f"{line} in {nodeid}" for line in sorted(listed)]
    assert "better: memcpys: 1 -> 0" in listed


def test_an_improved_test_is_named_by_its_node_id_once() -> None:
    # Trial report: "improved: test_decode launches 20 -> 18; lock it in with ..." named the test
    # by its function's name, which two modules may share.
    session = BaselineSession()
    for nodeid in ("tests/a/test_m.py::test_decode", "tests/b/test_m.py::test_decode"):
        session.add_report(nodeid, [Improved(nodeid, "default", "launches", 20, 18)])
        session.add_report(nodeid, [Improved(nodeid, "default", "syncs", 2, 1)])
    [section] = session.summary(Path("."), narrowed=True)
    assert section == [
        "kernelprof: 4 baseline metrics better",
        "better: launches: 20 -> 18 in tests/a/test_m.py::test_decode",
        "better: syncs: 2 -> 1 in tests/a/test_m.py::test_decode",
        "lock it in with pytest --kernelprof-update 'tests/a/test_m.py::test_decode'",
        "better: launches: 20 -> 18 in tests/b/test_m.py::test_decode",
        "better: syncs: 2 -> 1 in tests/b/test_m.py::test_decode",
        "lock it in with pytest --kernelprof-update 'tests/b/test_m.py::test_decode'",
    ]


@pytest.mark.parametrize(("text", "fraction"), [("5%", 0.05), ("12.5", 0.125), (" 0 % ", 0.0)])
def test_memory_tolerance_values(text: str, fraction: float) -> None:
    assert parse_percent("--kernelprof-memory-tolerance", text) == pytest.approx(fraction)


@pytest.mark.parametrize(
    ("text", "message"), [("five", "takes a percentage such as 5%"), ("-1%", "must be between 0%")]
)
def test_bad_memory_tolerances(text: str, message: str) -> None:
    with pytest.raises(pytest.UsageError, match=f"--kernelprof-memory-tolerance {message}"):
        parse_percent("--kernelprof-memory-tolerance", text)
