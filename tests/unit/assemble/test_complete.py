"""Issue 34: a trace that measured less than it claims. Any loss of records is told (a warning
that says how many of how many), a large one refused; a trace that recorded nothing is refused
(tests/unit/traces/test_files_bad_input.py)."""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import pytest

from pytest_kernelprof import IncompleteProfileError, IncompleteProfileWarning, load_trace
from tests.helpers import DATA, Stream, build, write


def three_calls() -> Stream:
    s = Stream()
    for i in range(3):
        t = 100.0 * i
        s.step(i, t, 50)
        s.launch(s.op("aten::mm", t + 1, 20), "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_NNT", t + 2)
        s.launch(s.op("aten::relu", t + 30, 5), "relu_kernel", t + 31)
    return s


def test_a_missing_profiler_step_range_is_told_with_its_counts(tmp_path: Path) -> None:
    s = three_calls()
    s.events = [e for e in s.events if e["name"] != "ProfilerStep#1"]
    with pytest.warns(IncompleteProfileWarning) as caught:
        prof = load_trace(write(tmp_path, s))
    assert len(caught) == 1
    assert str(caught[0].message).startswith(
        "no profiled call took 2 of the 6 GPU records of the trace (nvjet_sm90_tst_64x8_64x16_1x2_h_bz_NNT x1, "
        "relu_kernel x1): their launches fall outside every profiled call's ProfilerStep range (a call's range "
        "missing"
    )
    assert "counts may be short" in str(caught[0].message)
    assert caught[0].filename == __file__  # at the line that loaded the trace, not inside the plugin
    assert len(prof.calls) == 2


def test_missing_launch_records_are_told_with_their_counts() -> None:
    s = three_calls()
    dropped = {e["args"]["correlation"] for e in s.events if e["name"] == "relu_kernel"}  # type: ignore[index]
    s.events = [e for e in s.events if not (e["cat"] == "cuda_runtime" and e["args"]["correlation"] in dropped)]  # type: ignore[index]
    with pytest.warns(IncompleteProfileWarning, match=r"^3 of the 6 GPU records .* no launch record .*relu_kernel x3"):
        prof = build(s)
    assert prof.kernels.names == ["nvjet_sm90_tst_64x8_64x16_1x2_h_bz_NNT", "relu_kernel"]
    assert prof.launches == 1  # what the warning said: the lost launches are not counted


def test_check_complete_false_reads_a_lossy_trace_without_a_warning() -> None:
    s = three_calls()
    s.events = [e for e in s.events if e["name"] != "ProfilerStep#1"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(build(s, check_complete=False).calls) == 2


def test_losing_most_records_is_still_refused() -> None:
    s = three_calls()
    s.events = [e for e in s.events if e["name"] not in ("ProfilerStep#1", "ProfilerStep#2")]
    with pytest.raises(IncompleteProfileError, match=r"no profiled call took 4 of the 6 GPU records"):
        build(s)


def test_a_refusal_is_not_hidden_by_a_warning_before_it() -> None:
    # Under filterwarnings = error a warning raised first would stand in for the refusal.
    s = three_calls()
    s.events = [e for e in s.events if e["name"] != "ProfilerStep#1"]
    s.launch(s.op("aten::add", 40, 1), "lost_kernel", 41, record=False)
    with pytest.raises(IncompleteProfileError, match=r"the profiler lost GPU records: 1 of 5 kernel launches"):
        build(s)


def test_a_recording_missing_one_step_warns(tmp_path: Path) -> None:
    # A real H200 recording (3 calls) without its second ProfilerStep range.
    trace = json.loads(gzip.decompress((DATA / "h200_geglu_eager.json.gz").read_bytes()))
    trace["traceEvents"] = [e for e in trace["traceEvents"] if e.get("name") != "ProfilerStep#1"]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    with pytest.warns(IncompleteProfileWarning, match=r"^no profiled call took \d+ of the \d+ GPU records"):
        assert len(load_trace(path).calls) == 2
