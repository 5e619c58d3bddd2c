"""load_trace on files that are not good traces: one clear error naming the file and saying what a
bad file really is; times no profiler writes are refused (issue 21)."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import lzma
import os
import re
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelprof import IncompleteProfileError, NoDeviceActivityError, TraceError, load_trace
from pytest_kernelprof.traces import chrome, files, trace_bytes, typed_batches


@pytest.fixture(params=["msgspec", "json"])
def reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "json":
        monkeypatch.setattr(chrome, "typed_reader", lambda: None)
        monkeypatch.setattr(chrome, "_typed_categories", lambda: None)
    return str(request.param)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"hello, this is plain text\n", "not JSON: it starts with 'hello, this is plain text'"),
        (b"# pytest-kernelprof\n\nAssert on the GPU kernels", "not JSON: it starts with '# pytest-kernelprof'"),
        (b"[" * 100000, "not valid JSON: nested too deeply"),
        (b"[1, 2]", "a JSON array (2 items), not an object"),
        (b'"trace"', "a JSON string, not an object"),
        (
            b'{"hello": 1, "traceevents": []}',
            "a JSON object without a 'traceEvents' list (its keys: hello, traceevents)",
        ),
        (b'{"traceEvents": {"a": 1}}', "its 'traceEvents' is a JSON object, not a list"),
    ],
)
def test_what_is_not_a_trace_is_called_what_it_is(reader: str, tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "trace.json"
    path.write_bytes(content)
    with pytest.raises(TraceError, match=re.escape(message)) as info:
        load_trace(path)
    assert str(info.value).startswith(f"{path}: ")
    assert "\n" not in str(info.value)


def _trace(**fields: Any) -> bytes:
    event = {"ph": "X", "cat": "kernel", "name": "k", "ts": 10.0, "dur": 2.0, "tid": 7, "args": {"correlation": 1}}
    event.update(fields)
    return json.dumps(
        {"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::x", "ts": 1, "dur": 1}, event]}
    ).encode()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"dur": 1e300}, "event 1 is malformed (ValueError: its 'dur' of 1e+300 us is more than a day"),
        ({"dur": 1e11}, "event 1 is malformed (ValueError: its 'dur' of 100000000000.0 us is more than a day"),
        ({"ts": 1e300}, "event 1 is malformed (ValueError: its 'ts' of 1e+300 us is not a time a profiler writes"),
        ({"ts": -1e17}, "event 1 is malformed (ValueError: its 'ts' of -1e+17 us is not a time a profiler writes"),
        ({"ts": 2**70}, "is not a time a profiler writes"),
    ],
)
def test_impossible_times_are_refused_naming_the_event(
    reader: str, tmp_path: Path, fields: dict[str, Any], message: str
) -> None:
    path = tmp_path / "trace.json"
    path.write_bytes(_trace(**fields))
    with pytest.raises(TraceError, match=re.escape(message)) as info:
        load_trace(path)
    assert "'name': 'k'" in str(info.value)


# A number Python will not convert (sys.get_int_max_str_digits(): 4300 digits by default).
_HUGE = b"9" * 5000


@pytest.mark.parametrize(
    "text",
    [
        _trace().replace(b'"ts": 10.0', b'"ts": ' + _HUGE),
        b'{"x": ' + _HUGE + b', "traceEvents": []}',
        _HUGE,
    ],
    ids=["a-time", "in-the-header", "the-whole-file"],
)
def test_a_number_too_long_to_convert_is_one_trace_error(reader: str, tmp_path: Path, text: bytes) -> None:
    path = tmp_path / "trace.json"
    path.write_bytes(text)
    with pytest.raises(TraceError, match=r"a number of more than \d+ digits, which no profiler writes \(line 1\)"):
        load_trace(path)


def test_the_general_reader_words_a_number_too_long_in_an_event_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # msgspec's reader converts such a number where a field takes an int: it is the general
    # reader (every file msgspec's leaves) that must not raise Python's ValueError.
    monkeypatch.setattr(chrome, "typed_reader", lambda: None)
    path = tmp_path / "trace.json"
    path.write_bytes(_trace().replace(b'"dur": 2.0', b'"dur": 2.0, "bytes": ' + _HUGE))
    with pytest.raises(TraceError, match="a number of more than"):
        load_trace(path)


def test_a_long_event_and_an_epoch_timestamp_are_read(reader: str, tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_bytes(_trace(ts=1.76e15, dur=3.6e9))  # Kineto's epoch microseconds; an hour
    # A kernel alone, no CPU side: read as a partial trace (a whole one is refused, see assemble tests).
    assert load_trace(path, check_complete=False).kernels[0].duration_us == pytest.approx(3.6e9)


@pytest.mark.parametrize("megabytes", ["99999999999999999999999", str(2**43)])
def test_a_cap_beyond_what_the_machine_addresses_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], trace: Any, megabytes: str
) -> None:
    from pytest_kernelprof.cli import main

    monkeypatch.setenv(trace_bytes.MAX_TRACE_MB_ENV, megabytes)
    with pytest.raises(TraceError, match=rf"KERNELPROF_MAX_TRACE_MB='{megabytes}': more than .* at most 8796093022207"):
        load_trace(trace("linear_eager"))
    assert main(["diff", str(trace("linear_eager")), str(trace("linear_compiled"))]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kernelprof: error: KERNELPROF_MAX_TRACE_MB=")
    assert err.count("\n") == 1


def test_the_largest_cap_reads_a_trace(monkeypatch: pytest.MonkeyPatch, trace: Any) -> None:
    monkeypatch.setenv(trace_bytes.MAX_TRACE_MB_ENV, str(2**43 - 1))
    assert load_trace(trace("linear_eager")).kernels


def _layouts(text: str) -> dict[str, str]:
    data = json.loads(text)
    return {
        "one line": json.dumps(data),
        "compact": json.dumps(data, separators=(",", ":")),
        "indented": json.dumps(data, indent=1),
        "tabs and CRLF": json.dumps(data, indent="\t").replace("\n", "\r\n"),
    }


@pytest.mark.parametrize("name", ["linear_eager", "train_compiled"])
def test_every_layout_takes_the_fast_reader_and_gives_the_same_events(name: str, trace: Any, tmp_path: Path) -> None:
    import gzip

    typed = chrome.typed_reader()
    assert typed is not None
    text = gzip.decompress(trace(name).read_bytes()).decode()
    kineto = typed.read(text.encode(), 0)
    assert kineto is not None
    for layout, variant in _layouts(text).items():
        read = typed.read(variant.encode(), 0)
        assert read is not None, layout
        assert read[0] == kineto[0], layout
        assert [repr(e) for e in read[1]] == [repr(e) for e in kineto[1]], layout
        path = tmp_path / "variant.json"
        path.write_text(variant)
        assert load_trace(path).kernels.names == load_trace(trace(name)).kernels.names, layout


def test_a_one_line_trace_is_read_in_batches(trace: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import gzip

    monkeypatch.setattr(typed_batches, "_TYPED_BATCH", 1)  # a cut after every event
    typed = chrome.typed_reader()
    assert typed is not None
    text = gzip.decompress(trace("train_compiled").read_bytes()).decode()
    # a string that looks like the end of one event and the start of the next
    text = text.replace('"name": "aten::mm"', '"name": "aten::mm},{"', 1)
    assert "aten::mm},{" in text
    kineto = typed.read(text.encode(), 0)
    one_line = typed.read(json.dumps(json.loads(text)).encode(), 0)
    assert kineto is not None
    assert one_line is not None
    assert [repr(e) for e in one_line[1]] == [repr(e) for e in kineto[1]]
    assert any(e.name == "aten::mm},{" for e in one_line[1])


def test_events_before_the_headers_lists_are_read_the_same(trace: Any, tmp_path: Path) -> None:
    import gzip

    data = json.loads(gzip.decompress(trace("linear_eager").read_bytes()))
    events_first = {"traceEvents": data["traceEvents"], **{k: v for k, v in data.items() if k != "traceEvents"}}
    path = tmp_path / "events_first.json"
    path.write_text(json.dumps(events_first))
    prof = load_trace(path)
    assert prof.kernels.names == load_trace(trace("linear_eager")).kernels.names
    assert prof.device == "NVIDIA H200"  # from deviceProperties, after the events


def test_an_event_list_that_is_not_objects_goes_to_the_general_reader() -> None:
    typed = chrome.typed_reader()
    assert typed is not None
    assert typed.read(b'{"traceEvents": [{"ph": "X"}, 3]}', 0) is None
    assert typed.read(b'{"traceEvents": [], "x": 1}', 0) == ({"x": 1}, [])


def test_the_standard_library_reader_batches_any_layout_too(
    trace: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gzip

    from pytest_kernelprof.traces.chrome import raw_event_from_chrome

    monkeypatch.setattr(chrome, "typed_reader", lambda: None)
    monkeypatch.setattr(files, "_BATCH_CHARS", 1)  # a cut after every event
    batched: list[int] = []
    batches = files._read_event_batches

    def counted(*args: Any) -> tuple[int, int]:
        pos, count = batches(*args)
        batched.append(count)
        return pos, count

    monkeypatch.setattr(files, "_read_event_batches", counted)
    text = gzip.decompress(trace("train_compiled").read_bytes()).decode()
    text = text.replace('"name": "aten::mm"', '"name": "aten::mm},{"', 1)
    total = len(json.loads(text)["traceEvents"])

    def events(content: str) -> list[str]:
        path = tmp_path / "trace.json"
        path.write_text(content)
        return [repr(e) for e in files.read_trace(path, raw_event_from_chrome)[1]]

    expected = events(text)
    assert any("aten::mm},{" in e for e in expected)
    for layout, variant in {"kineto": text, **_layouts(text)}.items():
        assert events(variant) == expected, layout
        assert batched.pop() == total - 1, layout  # all but the last, which ends the list


def test_a_trace_of_another_accelerator_says_what_it_holds(tmp_path: Path) -> None:
    # Issue 21 item 21: an MTIA trace read as "the callable launched no GPU work".
    events = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "ts": 0, "dur": 100, "tid": 1}]
    events += [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1 + i, "dur": 1, "tid": 1} for i in range(3)]
    events += [
        {"ph": "X", "cat": "mtia_ccp_events", "name": f"k{i}", "ts": 2 + i, "dur": 1, "tid": 9} for i in range(4)
    ]
    path = tmp_path / "mtia.json"
    path.write_text(json.dumps({"traceEvents": events}))
    prof = load_trace(path)
    with pytest.raises(
        NoDeviceActivityError,
        match=r"no GPU activity in this trace: .* but 4 'mtia_ccp_events' events, which this plugin does not",
    ):
        len(prof.kernels)


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
        (b'{"traceEvents": [], "a": "\xff"}', "not valid JSON text, not UTF-8 at byte 26"),
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


@pytest.mark.parametrize("bad", [b"\xff\xfe", b"\xe9", b"\xc0\xaf"])
def test_a_byte_not_of_utf_8_inside_an_event_is_one_clear_error(
    tmp_path: Path, reader: str, trace: Callable[[str], Path], bad: bytes
) -> None:
    # msgspec's reader raised Python's UnicodeDecodeError (kernelprof show printed a traceback);
    # only a bad byte in the header, which json reads, got this line.
    text = json.dumps(json.loads(gzip.decompress(trace("linear_eager").read_bytes()))).encode()
    path = tmp_path / "raw.json"
    path.write_bytes(text.replace(b"nvjet_", b"nv" + bad + b"jet_"))
    with pytest.raises(TraceError, match=r"raw\.json: not valid JSON text, not UTF-8 at byte \d+$"):
        load_trace(path)


def test_truncated_gzip(tmp_path: Path, trace: Callable[[str], Path]) -> None:
    path = tmp_path / "cut.json.gz"
    path.write_bytes(trace("geglu_eager").read_bytes()[:500])
    with pytest.raises(TraceError, match="truncated or corrupt"):
        load_trace(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="no such trace file"):
        load_trace(tmp_path / "nope.json")


_METADATA = [
    {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
]
# What torch 2.13 exports for a session that ran nothing: metadata, instant marks and the
# profiler's own span (its "Trace" category is no work).
_NOTHING_RUN = [
    *_METADATA,
    {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "x", "ts": 1, "dur": 150},
    {"ph": "i", "s": "g", "name": "Iteration Start: PyTorch Profiler", "pid": "Traces", "tid": "x", "ts": 1},
]


@pytest.mark.parametrize(
    "trace",
    [
        {"traceEvents": []},
        {"traceEvents": _METADATA},
        {"deviceProperties": [{"name": "NVIDIA H100", "computeMajor": 9, "computeMinor": 0}], "traceEvents": []},
        {"traceEvents": _NOTHING_RUN},
    ],
    ids=["empty", "metadata", "device-properties", "torch-nothing-run"],
)
@pytest.mark.parametrize("check_complete", [True, False])
def test_a_trace_that_recorded_nothing_is_refused(tmp_path: Path, trace: dict[str, Any], check_complete: bool) -> None:
    # Issue 34: such a trace read as "1 call, 0 ops", and `assert "aten::mm" not in prof.ops`
    # passed on what was never measured. check_complete=False reads a lossy trace's records: this
    # one holds none, so it is no way around the refusal.
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(trace))
    with pytest.raises(IncompleteProfileError, match=r": the trace recorded nothing: it holds no CPU op") as info:
        load_trace(path, check_complete=check_complete)
    assert str(info.value).startswith(f"{path}: ")


def test_a_trace_of_cpu_ops_only_is_read_and_another_accelerators_is_not_refused(tmp_path: Path) -> None:
    # The refusal is narrow: a CPU-only profile has ops; another accelerator's events say what the
    # trace holds (test_a_trace_of_another_accelerator_says_what_it_holds) rather than "recorded nothing".
    path = tmp_path / "cpu.json"
    path.write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 1}]}))
    assert load_trace(path).ops["aten::mm"].count == 1
    path.write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "mtia", "name": "k", "ts": 1, "dur": 1}]}))
    with pytest.raises(NoDeviceActivityError, match=r"but 1 'mtia' events, which this plugin does not read"):
        len(load_trace(path).kernels)


def test_a_malformed_event_in_a_batch_is_reported_not_skipped(tmp_path: Path, trace: Callable[[str], Path]) -> None:
    text = gzip.decompress(trace("linear_eager").read_bytes()).decode()
    bad = tmp_path / "bad.json"
    bad.write_text(
        text.replace('"ph": "X", "cat": "cpu_op", "name": "aten::linear"', '"ph": "X", "cat": "cpu_op", "name": 7', 1)
    )
    with pytest.raises(TraceError, match="event name is a int"):
        load_trace(bad)


def test_a_name_with_a_nul_is_a_trace_error() -> None:
    with pytest.raises(TraceError, match=r"^'a\\x00b': not a file name \(it holds a NUL character\)$"):
        load_trace("a\x00b")


def test_a_named_pipe_no_one_writes_to_is_refused_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "trace.json"
    os.mkfifo(fifo)
    # In a child with a timeout: a regression hangs in open(), which no signal here would end.
    code = "from pytest_kernelprof import load_trace; load_trace(__import__('sys').argv[1])"
    run = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert f"TraceError: {fifo}: a named pipe that no process wrote to within 5 s: start its writer first" in run.stderr


def _wait_until_opened(pid: int, path: Path) -> None:
    """Until process ``pid`` has ``path`` open (Linux's /proc; elsewhere, a few seconds)."""
    fds = Path(f"/proc/{pid}/fd")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if not fds.exists():
            time.sleep(3)
            return
        with contextlib.suppress(OSError):
            if any(os.readlink(fd) == str(path) for fd in fds.iterdir()):
                return
        time.sleep(0.05)


def test_a_named_pipe_whose_writer_comes_late_is_read(tmp_path: Path, trace: Callable[[str], Path]) -> None:
    # `mkfifo p; (sleep 2; zcat t.json.gz > p) & kernelprof show p` said "the file is empty".
    fifo = tmp_path / "trace.json"
    os.mkfifo(fifo)
    data = gzip.decompress(trace("linear_eager").read_bytes())
    code = "import sys; from pytest_kernelprof import load_trace; print(len(load_trace(sys.argv[1]).kernels))"
    reader = subprocess.Popen([sys.executable, "-c", code, str(fifo)], stdout=subprocess.PIPE, text=True)
    with reader:
        _wait_until_opened(reader.pid, fifo)  # the reader has the pipe open, with no writer yet
        time.sleep(0.5)
        try:  # not blocking: a reader that gave up already would leave a blocking open() hanging
            sent = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader has the pipe open any more
            pytest.fail(f"the reader gave up before its writer came: {reader.communicate(timeout=60)}")
        os.set_blocking(sent, True)
        with open(sent, "wb") as pipe:
            pipe.write(data)
        out, _ = reader.communicate(timeout=60)
    assert reader.returncode == 0
    assert out.strip() == str(len(load_trace(trace("linear_eager")).kernels))


@pytest.mark.parametrize("key", ["\n::error::keyinject", "\r\x1b[2Kerased", "\u2028::warning::x", "\ud800", "k" * 5000])
def test_a_key_that_would_start_a_log_line_is_shown_escaped(reader: str, tmp_path: Path, key: str) -> None:
    # An adversarial review: the keys were joined raw, so a key with a newline started a line of
    # its own on CI, which GitHub Actions runs as a workflow command when it starts with "::".
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"a": 1, key: 2}))
    with pytest.raises(TraceError, match="without a 'traceEvents' list") as info:
        load_trace(path)
    message = str(info.value)
    assert message.isprintable(), message  # one line, no escape sequence: no key starts a log line
    assert len(message) < 400, "a long key is shown cut short"


def test_a_category_the_plugin_does_not_read_is_named_escaped(reader: str, tmp_path: Path) -> None:
    # The same review: the reason a trace without GPU records gives named its categories raw.
    path = tmp_path / "trace.json"
    events = [{"ph": "X", "cat": cat, "name": "x", "ts": 1, "dur": 1} for cat in ("\n::error::inject", "c" * 5000)]
    path.write_text(json.dumps({"traceEvents": events}))
    with pytest.raises(NoDeviceActivityError) as info:
        len(load_trace(path).kernels)
    message = str(info.value)
    assert "\\n::error::inject" in message
    assert message.isprintable(), message
    assert len(message) < 800, "a long category is shown cut short"


def test_both_readers_name_the_categories_of_a_trace_without_gpu_records_alike(reader: str, tmp_path: Path) -> None:
    events = [{"ph": "X", "cat": cat, "name": "k", "ts": 1, "dur": 1} for cat in ("mtia_ccp_events", "mtia", "mtia")]
    events.append({"ph": "i", "cat": "other", "name": "k", "ts": 1})
    path = tmp_path / "mtia.json"
    path.write_text(json.dumps({"traceEvents": events}))
    assert chrome._unread_categories(path) == (("mtia", 2), ("mtia_ccp_events", 1))
    events[1]["dur"] = -1  # an error of the general reader's: the typed one leaves it the file
    path.write_text(json.dumps({"traceEvents": events}))
    with pytest.raises(TraceError, match="event 1 has a negative duration"):
        chrome._unread_categories(path)


_TEXT = b'{"traceEvents": []}'


def _zipped(data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("trace.json", data)
    return out.getvalue()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            gzip.compress(gzip.compress(_TEXT)),
            "gzipped twice (a gzip stream inside the gzip stream): decompress it once",
        ),
        (_zipped(_TEXT), "a zip archive, not a trace (a GitHub artifact download?): unzip it and pass the .json.gz"),
        (lzma.compress(_TEXT), "xz-compressed, not a trace as it is: decompress it (xz -dk FILE)"),
        (bz2.compress(_TEXT), "bzip2-compressed, not a trace as it is: decompress it (bunzip2 -k FILE)"),
        (
            b"\x28\xb5\x2f\xfd" + bytes(range(256)),
            "zstd-compressed, not a trace as it is: decompress it (zstd -d FILE)",
        ),
        (
            _TEXT.decode().encode("utf-16"),
            "UTF-16 text, not the UTF-8 of a trace: convert it (iconv -f UTF-16 -t UTF-8",
        ),
        (_TEXT.decode().encode("utf-16-le"), "UTF-16 text, not the UTF-8 of a trace: convert it (iconv -f UTF-16LE"),
        (_TEXT.decode().encode("utf-32"), "UTF-32 text, not the UTF-8 of a trace: convert it (iconv -f UTF-32"),
        (gzip.compress(_TEXT.decode().encode("utf-16")), "UTF-16 text, not the UTF-8 of a trace"),
    ],
    ids=["gzip-in-gzip", "zip", "xz", "bzip2", "zstd", "utf-16", "utf-16-no-bom", "utf-32", "gzipped-utf-16"],
)
def test_another_container_or_encoding_is_named_with_what_to_do(tmp_path: Path, content: bytes, message: str) -> None:
    # Each was "not valid JSON text, not UTF-8 at byte N".
    path = tmp_path / "t.json.gz"
    path.write_bytes(content)
    with pytest.raises(TraceError) as info:
        load_trace(path)
    assert str(info.value).startswith(f"{path}: {message}")


def test_a_zip_on_standard_input_is_named_at_its_first_bytes() -> None:
    with pytest.raises(TraceError, match=re.escape("<stdin>: a zip archive, not a trace (a GitHub artifact")):
        trace_bytes.copy_capped([_zipped(_TEXT)], io.BytesIO(), "<stdin>")
