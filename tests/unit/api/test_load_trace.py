"""load_trace on files that are not good traces: one clear error naming the file."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelprof import TraceError, load_trace


def test_plain_json_and_gzip_give_the_same_profile(tmp_path: Path, trace: Callable[[str], Path]) -> None:
    gz = trace("linear_eager")
    plain = tmp_path / "linear.json"
    plain.write_bytes(gzip.decompress(gz.read_bytes()))
    assert load_trace(plain).kernels.names == load_trace(gz).kernels.names
    assert load_trace(str(plain)).source == str(plain)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b'{"traceEvents": [', "not valid JSON, the file may be truncated"),
        (b'{"hello": 1}', "without a 'traceEvents' list"),
        (b"[1, 2]", "a JSON array (2 items), not an object with a 'traceEvents' list"),
        (b'{"traceEvents": [1]}', "holds a int, not an event object"),
        (b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": 3, "ts": 1}]}', "event name is a int, not a string"),
        (b"\x1f\x8b\x08\x00garbage", "gzip stream is truncated or corrupt"),
        (b"\xff\xfe\x00", "not valid JSON text, not UTF-8"),
        (b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "soon"}]}', "event 0 is malformed"),
        (b'{"traceEvents": [], "x": 1} trailing', "text after the end"),
        (b'{"traceEvents": [] "x": 1}', "expected ',' between fields"),
    ],
)
def test_bad_files_get_one_clear_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(TraceError, match=re.escape(message)) as info:
        load_trace(path)
    assert str(info.value).startswith(str(path))
    assert path.read_bytes() == content  # reading never alters the file


def test_truncated_gzip(tmp_path: Path, trace: Callable[[str], Path]) -> None:
    path = tmp_path / "cut.json.gz"
    path.write_bytes(trace("geglu_eager").read_bytes()[:500])
    with pytest.raises(TraceError, match="truncated or corrupt"):
        load_trace(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="no such trace file"):
        load_trace(tmp_path / "nope.json")


def test_an_empty_event_list_is_a_profile_without_gpu_activity(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"traceEvents": []}))
    prof = load_trace(path)
    assert len(prof.calls) == 1
    assert not prof.has_device_activity


def test_kineto_layout_and_any_other_layout_read_the_same(tmp_path: Path, trace: Callable[[str], Path]) -> None:
    """Kineto's line layout is read in batches; any other layout event by event."""
    original = trace("train_compiled")
    data = json.loads(gzip.decompress(original.read_bytes()))
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(data))  # one line: no layout to batch on
    odd = tmp_path / "odd.json"
    text = gzip.decompress(original.read_bytes()).decode()
    odd.write_text(text.replace('"args": {', '"args":\n  {', 1))  # a nested object at event indent
    expected = load_trace(original)
    for path in (compact, odd):
        prof = load_trace(path)
        assert prof.kernels.names == expected.kernels.names
        assert prof.ops.names == expected.ops.names
        assert [len(c.kernels) for c in prof.calls] == [len(c.kernels) for c in expected.calls]


def test_a_malformed_event_in_a_batch_is_reported_not_skipped(tmp_path: Path, trace: Callable[[str], Path]) -> None:
    text = gzip.decompress(trace("linear_eager").read_bytes()).decode()
    bad = tmp_path / "bad.json"
    bad.write_text(
        text.replace('"ph": "X", "cat": "cpu_op", "name": "aten::linear"', '"ph": "X", "cat": "cpu_op", "name": 7', 1)
    )
    with pytest.raises(TraceError, match="event name is a int"):
        load_trace(bad)


@pytest.mark.parametrize("layout", ["kineto", "one line"])
def test_recorded_traces_take_the_batched_path(
    trace: Callable[[str], Path], layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_kernelprof.traces import files as traces
    from pytest_kernelprof.traces.chrome import raw_event_from_chrome
    from pytest_kernelprof.traces.files import _read_event_batches
    from pytest_kernelprof.traces.json_reader import Reader

    text = gzip.decompress(trace("train_compiled").read_bytes()).decode()
    if layout == "one line":
        text = json.dumps(json.loads(text))
    monkeypatch.setattr(traces, "_BATCH_CHARS", 1)  # a batch of each event
    reader = Reader(text, "t")
    reader.pos = text.index("[", text.index('"traceEvents"'))
    events: list[Any] = []
    pos, count = _read_event_batches(reader, raw_event_from_chrome, events)
    assert count == len(json.loads(text)["traceEvents"]) - 1  # the last is left to the event-by-event reader
    assert text.startswith("{", pos)
    assert len(events) > 100
