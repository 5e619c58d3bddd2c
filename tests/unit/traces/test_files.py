"""The two trace readers (msgspec's typed one, the standard library's) and the input they refuse; plain
and gzip files, any layout, read the same, in batches."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelprof import TraceError, load_trace
from pytest_kernelprof.traces import chrome, trace_bytes, typed_batches
from pytest_kernelprof.traces import json_reader as trace_json
from tests.helpers import DATA, fields, kineto_text, read_with

Trace = Callable[[str], Path]
RECORDED = sorted(p.name for p in DATA.glob("*.json.gz") if not p.name.endswith(".kineto.json.gz"))
# Zoo traces were recorded with record_shapes=True: their ops carry "Input type".
RECORDED += ["zoo/h200/gemm_linear_1024_bwd_bf16.json.gz", "zoo/h200/conv2d_3x3_fwd_fp16.json.gz"]


@pytest.fixture
def no_msgspec(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """msgspec cannot be imported: what a user without the ``[fast]`` extra has."""
    monkeypatch.setitem(sys.modules, "msgspec", None)
    chrome.typed_reader.cache_clear()
    yield
    chrome.typed_reader.cache_clear()  # before monkeypatch gives msgspec back


@pytest.mark.parametrize("name", RECORDED)
def test_both_readers_give_the_same_events_for_every_recorded_trace(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = DATA / name
    typed = chrome.typed_reader()
    assert typed is not None
    data = gzip.decompress(path.read_bytes())
    read = typed.read(data, 0)
    assert read is not None, "a trace torch.profiler wrote must take the typed reader"
    header, events = read
    assert len(events) > 10
    expected = read_with(path, "json", monkeypatch)
    assert expected == ("ok", repr((header, fields(events))))
    if name.startswith("cpu_torch"):  # a CPU trace of another torch version's layout (test_torch_layouts.py)
        assert header["deviceProperties"] == []
    else:
        card = "NVIDIA H100 80GB HBM3" if name.startswith("h100_") else "NVIDIA H200"
        assert header["deviceProperties"][0]["name"] == card
    if name.startswith("zoo/"):
        assert any(event.input_types for event in events), "the ops' input types were not read"


def test_without_msgspec_the_standard_library_reads_traces(no_msgspec: None, trace: Trace) -> None:
    assert chrome.typed_reader() is None
    prof = load_trace(trace("geglu_compiled"))
    assert prof.kernels.count("triton_poi_fused_*gelu*mul*") == 1


def test_the_typed_reader_leaves_what_it_does_not_expect_to_the_json_reader(
    trace: Trace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = gzip.decompress(trace("linear_eager").read_bytes()).decode()
    kernel = text.index('"cat": "kernel"')
    variants = {
        # Types the typed records do not take, which the Chrome adapter converts or ignores.
        "text id": re.sub(r'"External id": (\d+)', r'"External id": "\1"', text, count=1),
        "float stream": text[:kernel] + text[kernel:].replace('"stream": 7', '"stream": 7.0', 1),
        "two-number grid": text[:kernel]
        + re.sub(r'"grid": \[(\d+), \d+, \d+\]', r'"grid": [\1, 1]', text[kernel:], count=1),
        "NaN in an ignored field": text.replace('"queued": 0', '"queued": NaN', 1),
    }
    typed = chrome.typed_reader()
    assert typed is not None
    for what, variant in variants.items():
        assert variant != text, what
        assert typed.read(variant.encode(), 0) is None, what
        path = tmp_path / "variant.json"
        path.write_text(variant)
        outcome = read_with(path, "msgspec", monkeypatch)
        assert outcome == read_with(path, "json", monkeypatch), what
        assert outcome[0] == "ok", what


def test_batches_are_cut_only_between_events(trace: Trace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(typed_batches, "_TYPED_BATCH", 1)  # a cut at every event start
    original = trace("train_compiled")
    text = gzip.decompress(original.read_bytes()).decode()
    typed = chrome.typed_reader()
    assert typed is not None
    read = typed.read(text.encode(), 0)
    assert read is not None
    assert ("ok", repr((read[0], fields(read[1])))) == read_with(original, "json", monkeypatch)

    # Inside an event, what looks like the start of the next: the cut there cannot decode, so
    # the batch runs on to the next cut.
    odd = text.replace('"queued": 0', '"queued": [{"x": 0},\n  {"x": 1}]', 1)
    assert odd != text
    odd_read = typed.read(odd.encode(), 0)
    assert odd_read is not None
    assert fields(odd_read[1]) == fields(read[1])
    path = tmp_path / "odd.json"
    path.write_text(odd)
    outcome = read_with(path, "msgspec", monkeypatch)
    assert outcome == read_with(path, "json", monkeypatch)
    assert outcome == ("ok", repr((read[0], fields(read[1]))))


@pytest.mark.parametrize("reader", ["msgspec", "json"])
def test_a_negative_duration_is_malformed(
    reader: str, trace: Trace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = json.loads(gzip.decompress(trace("linear_eager").read_bytes()))
    kernels = [e for e in data["traceEvents"] if e.get("cat") == "kernel"]
    for kernel in kernels:
        kernel["dur"] = -1
    path = tmp_path / "negative.json"
    path.write_text(kineto_text(data))
    index = data["traceEvents"].index(kernels[0])
    outcome = read_with(path, reader, monkeypatch)
    assert outcome[0] == "error"
    assert outcome[1].startswith(f"{path}: event {index} has a negative duration (dur -1)")
    assert kernels[0]["name"][:60] in outcome[1]
    assert outcome == read_with(path, "json", monkeypatch)
    with pytest.raises(TraceError, match="negative duration"):
        load_trace(path)


@pytest.mark.parametrize("reader", ["msgspec", "json"])
def test_a_negative_duration_on_an_event_the_builder_ignores_is_left_alone(
    reader: str, trace: Trace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = json.loads(gzip.decompress(trace("linear_eager").read_bytes()))
    data["traceEvents"].append({"ph": "X", "cat": "overhead", "name": "Buffer Flush", "ts": 1.0, "dur": -1, "tid": 1})
    path = tmp_path / "overhead.json"
    path.write_text(kineto_text(data))
    assert read_with(path, reader, monkeypatch)[0] == "ok"


@pytest.mark.parametrize("reader", ["msgspec", "json"])
def test_a_byte_order_mark_is_skipped(
    reader: str, trace: Trace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = trace("geglu_eager")
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + gzip.decompress(original.read_bytes()))
    outcome = read_with(path, reader, monkeypatch)
    assert outcome == read_with(original, "json", monkeypatch)
    assert outcome[0] == "ok"


@pytest.mark.parametrize(
    "text",
    [
        '{"traceEvents": [' + "[" * 100_000 + "]" * 100_000 + "]}",
        '{"deep": ' + "[" * 100_000 + "]" * 100_000 + ', "traceEvents": []}',
        '{\n  "traceEvents": [\n  {"ph": "X", "args": ' + "[" * 100_000 + "]" * 100_000 + "}\n  ]\n}",
    ],
    ids=["event", "header", "kineto layout"],
)
@pytest.mark.parametrize("reader", ["msgspec", "json"])
def test_deep_nesting_is_one_trace_error(
    reader: str, text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "deep.json"
    path.write_text(text)
    outcome = read_with(path, reader, monkeypatch)
    assert outcome[0] == "error"
    assert re.fullmatch(rf"{re.escape(str(path))}: JSON nested too deeply to be a trace \(line \d+\)", outcome[1])


def test_a_trace_over_the_size_cap_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(trace_bytes.MAX_TRACE_MB_ENV, "1")
    # One CPU op: a trace that records nothing is refused once read (issue 34).
    text = '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 1}], "pad": "'
    text += "x" * (1 << 20) + '"}'
    plain = tmp_path / "big.json"
    plain.write_text(text)
    packed = tmp_path / "big.json.gz"
    packed.write_bytes(gzip.compress(text.encode()))  # 1 KB that decompresses past the cap
    for path in (plain, packed):
        with pytest.raises(TraceError) as info:
            load_trace(path)
        assert str(info.value) == (
            f"{path}: larger than 1 MB, the most a trace is read to (set KERNELPROF_MAX_TRACE_MB to read a bigger one)"
        )
    monkeypatch.setenv(trace_bytes.MAX_TRACE_MB_ENV, "2")
    assert not load_trace(packed).has_device_activity
    monkeypatch.setenv(trace_bytes.MAX_TRACE_MB_ENV, "lots")
    with pytest.raises(TraceError, match="KERNELPROF_MAX_TRACE_MB='lots': expected a whole number of megabytes"):
        load_trace(packed)


def test_a_stream_that_cannot_be_a_trace_stops_at_once() -> None:
    with pytest.raises(TraceError) as info:
        load_trace("/dev/zero")
    assert (
        str(info.value)
        == r"/dev/zero: not a Chrome trace: it starts with b'\x00\x00\x00\x00\x00\x00\x00\x00', not with '{'"
    )


def test_an_endless_stream_stops_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(trace_bytes.MAX_TRACE_MB_ENV, "1")
    with subprocess.Popen(["yes", "{"], stdout=subprocess.PIPE) as endless:
        assert endless.stdout is not None
        path = f"/dev/fd/{endless.stdout.fileno()}"
        try:
            with pytest.raises(TraceError, match=f"^{path}: larger than 1 MB"):
                load_trace(path)
        finally:
            endless.kill()


def test_a_gzip_trace_from_a_pipe_is_read(trace: Trace) -> None:
    with subprocess.Popen(["cat", str(trace("linear_eager"))], stdout=subprocess.PIPE) as cat:
        assert cat.stdout is not None
        prof = load_trace(f"/dev/fd/{cat.stdout.fileno()}")
    assert prof.kernels.names == load_trace(trace("linear_eager")).kernels.names


@pytest.mark.parametrize(
    ("durations", "suspect"),
    [
        ([1.5, 0, 2], False),
        ([1.5, None, 2], True),  # a missing dur reads as 0, a null one is not a number
        ([1.5, -0.001], True),
        ([float("nan"), -1.0, 2.0], True),  # NaN first: min() sees nothing smaller after it
        ([1.5, "-1"], True),
        (["1", "2"], True),
    ],
)
def test_which_batches_get_their_durations_checked(durations: list[Any], suspect: bool) -> None:
    events: list[Any] = [{"ph": "X"}] + [{"ph": "X", "dur": d} for d in durations] + [1]
    assert trace_json.may_have_negative_durations(events) is True  # 1 is not an event object
    assert trace_json.may_have_negative_durations(events[:-1]) is suspect


def test_plain_json_and_gzip_give_the_same_profile(tmp_path: Path, trace: Callable[[str], Path]) -> None:
    gz = trace("linear_eager")
    plain = tmp_path / "linear.json"
    plain.write_bytes(gzip.decompress(gz.read_bytes()))
    assert load_trace(plain).kernels.names == load_trace(gz).kernels.names
    assert load_trace(str(plain)).source == str(plain)


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
