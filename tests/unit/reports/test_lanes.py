"""The timeline page's ops rows (``op_rows``): nested as the op forest nests them, each op-table
occurrence once, and bounded: a depth cap, two sets of rows for threads that overlap, short ops
merged, a cap on bars. (``test_timeline.py`` checks them against a recorded call's op table.)"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_kernelprof.reports import lanes
from pytest_kernelprof.reports.lanes import DEPTH, REFERENCE_PX
from pytest_kernelprof.traces import OP, cpu_event


def op_rows(ops: list[list[Any]], view_us: float, inductors: set[str] | tuple[()]) -> dict[str, Any]:
    """``lanes.op_rows`` of ops ``[start_us, end_us, thread, name]``, in a call that starts at 1 s."""
    origin = 10**9
    events = [
        cpu_event(OP, name, origin + round(start * 1000), origin + round(end * 1000), tid, 0)
        for start, end, tid, name in ops
    ]
    return lanes.op_rows(events, origin, view_us, inductors)


def _bars(found: dict[str, Any]) -> list[tuple[float, float, int, str]]:
    return [(start, dur, row, name) for start, dur, row, name, _ in found["bars"]]


def test_ops_nest_by_time_on_their_thread() -> None:
    ops = [[0.0, 100.0, 1, "outer"], [10.0, 40.0, 1, "a"], [50.0, 90.0, 1, "b"], [20.0, 30.0, 1, "inner"]]
    found = op_rows(ops, 100.0, ())
    outer, inner = (0.0, 100.0, 0, "outer"), (20.0, 10.0, 2, "inner")
    assert _bars(found) == [outer, (10.0, 30.0, 1, "a"), (50.0, 40.0, 1, "b"), inner]
    assert (found["rows"], found["deeper"], found["merged"], found["capped"]) == (3, 0, 0, 0)


def test_an_op_inside_one_of_its_name_and_inductors_ranges_are_left_out_their_ops_moved_up() -> None:
    ops = [
        [0.0, 100.0, 1, "aten::sum"],
        [10.0, 90.0, 1, "aten::sum"],  # part of the outer occurrence, as the op table counts it
        [20.0, 30.0, 1, "aten::as_strided"],
        [40.0, 60.0, 1, "triton_poi_fused_add_0"],  # a launch range
        [41.0, 50.0, 1, "cudaish"],
        [100.0, 200.0, 1, "## Call CompiledFxGraph fabc ##"],  # a graph call, told by its name
        [110.0, 120.0, 1, "aten::mm"],
    ]
    found = op_rows(ops, 200.0, {"triton_poi_fused_add_0"})
    assert [(row, name) for _, _, row, name in _bars(found)] == [
        (0, "aten::sum"),
        (0, "aten::mm"),
        (1, "aten::as_strided"),
        (1, "cudaish"),
    ]


def test_ops_deeper_than_the_cap_are_counted_not_drawn() -> None:
    ops = [[float(d), 100.0 - d, 1, f"op{d}"] for d in range(DEPTH + 3)]
    found = op_rows(ops, 100.0, ())
    assert [row for _, _, row, _ in _bars(found)] == list(range(DEPTH))
    assert found["deeper"] == 3


def test_threads_share_rows_unless_they_ran_at_once() -> None:
    forward = [[0.0, 40.0, 1, "forward"], [5.0, 10.0, 1, "aten::mm"], [95.0, 99.0, 1, "step"]]
    backward = [[50.0, 90.0, 2, "backward"]]  # between the forward and the step: the same rows
    alongside = [[0.0, 90.0, 3, "loader"]]  # alongside both: a set of rows of its own
    third = [[1.0, 2.0, 4, "another"]]  # a third set: counted, not drawn
    found = op_rows(forward + backward + alongside + third, 100.0, ())
    rows = {name: row for _, _, row, name in _bars(found)}
    assert rows == {"forward": 0, "aten::mm": 1, "step": 0, "backward": 0, "loader": DEPTH}
    assert (found["rows"], found["threads"]) == (DEPTH + 1, 1)


def test_ops_shorter_than_a_pixel_are_merged_with_their_short_neighbours() -> None:
    view = float(REFERENCE_PX)  # a pixel: 1 us
    short = [[10.0 + 0.3 * i, 10.2 + 0.3 * i, 1, f"aten::view{i % 4}"] for i in range(10)]
    alone = [[50.0, 50.5, 1, "aten::alone"]]  # short, but no short neighbour within a pixel
    long = [[60.0, 70.0, 1, "aten::long"]]
    found = op_rows(short + alone + long, view, ())
    merged, single, wide = found["bars"]
    assert merged[:3] == [10.0, 2.9, 0]
    assert merged[4] == 10 == found["merged"]
    assert merged[3] == (
        "10 ops, each shorter than a pixel at the opening zoom, merged: aten::view0, aten::view1, aten::view2, ..."
    )
    assert single == [50.0, 0.5, 0, "aten::alone", 1]
    assert wide == [60.0, 10.0, 0, "aten::long", 1]


def test_past_the_cap_the_shortest_bars_are_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lanes, "MAX_BARS", 3)
    ops = [[10.0 * i, 10.0 * i + 1 + i, 1, f"op{i}"] for i in range(5)]
    found = op_rows(ops, 100.0, ())
    assert [name for _, _, _, name in _bars(found)] == ["op2", "op3", "op4"]  # in time order, the longest
    assert found["capped"] == 2


def test_a_call_without_ops() -> None:
    assert op_rows([], 10.0, ()) == {"bars": [], "rows": 0, "deeper": 0, "threads": 0, "merged": 0, "capped": 0}
