"""Read Chrome/Perfetto trace files as torch.profiler exports them (.json, .json.gz).

Training traces run to millions of events. ``json.load`` turns each into a dict of
dicts, several times the file's size in memory; here the ``traceEvents`` array is
decoded one event at a time and each event is reduced to a ``RawEvent`` at once, so
peak memory stays near the size of the decompressed text.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from collections.abc import Callable
from typing import Any, TypeVar

from .errors import TraceError

T = TypeVar("T")


class _Reader:
    """A cursor over the trace text that decodes one JSON value at a time."""

    def __init__(self, text: str, name: str) -> None:
        self.text = text
        self.name = name
        self.pos = 0
        self.decode = json.JSONDecoder().raw_decode

    def fail(self, what: str) -> TraceError:
        line = self.text.count("\n", 0, self.pos) + 1
        return TraceError(f"{self.name}: {what} (line {line})")

    def skip(self) -> str:
        self.pos = _SPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]  # "*" always matches
        return self.text[self.pos : self.pos + 1]

    def expect(self, char: str, what: str) -> None:
        if self.skip() != char:
            found = self.text[self.pos : self.pos + 20] or "the end of the file"
            raise self.fail(f"not valid JSON, the file may be truncated: expected {what}, found {found!r}")
        self.pos += 1

    def value(self) -> Any:
        self.skip()
        try:
            value, self.pos = self.decode(self.text, self.pos)
        except json.JSONDecodeError as exc:
            self.pos = exc.pos
            raise self.fail(f"not valid JSON, the file may be truncated ({exc.msg})") from None
        return value


def _decompressed_text(name: str) -> str:
    try:
        with open(name, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise TraceError(f"{name}: no such trace file") from None
    except IsADirectoryError:
        raise TraceError(f"{name}: a directory, not a trace file") from None
    except OSError as exc:
        raise TraceError(f"{name}: cannot read the file ({exc.strerror or exc})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise TraceError(f"{name}: the gzip stream is truncated or corrupt ({exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TraceError(f"{name}: not valid JSON text, not UTF-8 at byte {exc.start}") from None


def read_trace(
    path: str | os.PathLike[str], convert: Callable[[dict[str, Any]], T | None]
) -> tuple[dict[str, Any], list[T]]:
    """The trace's top-level fields (without ``traceEvents``) and ``convert`` of each event.

    ``convert`` returns None for events to drop and raises KeyError, TypeError or ValueError
    for a malformed event. Every problem becomes one :class:`TraceError` naming the file.
    """
    name = os.fspath(path)
    text = _decompressed_text(name)
    reader = _Reader(text, name)
    first = reader.skip()  # not text.strip(): that would copy a text of hundreds of MB
    if not first:
        raise TraceError(f"{name}: the file is empty, not a Chrome trace")
    if first != "{":
        raise TraceError(
            f"{name}: JSON without a 'traceEvents' list, so not a Chrome trace from torch.profiler "
            "(export one with prof.export_chrome_trace(path))"
        )
    reader.pos += 1
    header: dict[str, Any] = {}
    events: list[T] | None = None
    while reader.skip() != "}":
        if header or events is not None:
            reader.expect(",", "',' between fields")
        key = reader.value()
        if not isinstance(key, str):
            raise reader.fail("not valid JSON: an object key that is not a string")
        reader.expect(":", "':' after a key")
        if key == "traceEvents" and reader.skip() == "[":
            events = _read_events(reader, convert)
        else:
            header[key] = reader.value()
    reader.pos += 1
    if reader.skip():
        raise reader.fail("not valid JSON: text after the end of the trace object")
    if events is None:
        raise TraceError(
            f"{name}: JSON without a 'traceEvents' list, so not a Chrome trace from torch.profiler "
            "(export one with prof.export_chrome_trace(path))"
        )
    return header, events


_SPACE = re.compile(r"[ \t\n\r]*")
_SEPARATOR = re.compile(r"[ \t\n\r]*([,\]])[ \t\n\r]*")


_EVENT_START = re.compile(r"\n  \{")
_BATCH = 2000


def _read_events(reader: _Reader, convert: Callable[[dict[str, Any]], T | None]) -> list[T]:
    begin = reader.pos
    batched = _read_events_batched(reader, convert)
    if batched is not None:
        return batched
    reader.pos = begin
    return _read_events_one_by_one(reader, convert)


def _convert(reader: _Reader, convert: Callable[[dict[str, Any]], T | None], event: Any, index: int) -> T | None:
    if type(event) is not dict:
        raise reader.fail(f"'traceEvents' holds a {type(event).__name__}, not an event object")
    try:
        return convert(event)
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise reader.fail(f"event {index} is malformed ({type(exc).__name__}: {exc}): {str(event)[:120]}") from None


def _read_events_batched(reader: _Reader, convert: Callable[[dict[str, Any]], T | None]) -> list[T] | None:
    """Decode the events in batches of a few thousand, as Kineto lays them out; None if it did not.

    Kineto writes each event from a new line at two spaces' indent and closes the list with
    a line "  ]". JSON strings cannot hold a raw newline, so those marks are layout, and
    one ``json.loads`` per batch saves a Python round trip per event. Any surprise (another
    writer's layout, a truncated file) returns None and the caller decodes event by event.
    """
    text = reader.text
    begin = reader.pos + 1  # past the "["
    end = text.find("\n  ]", begin)
    if end < 0:
        return None
    starts = [m.start() for m in _EVENT_START.finditer(text, begin, end)]
    if not starts or text[begin : starts[0]].strip():
        return None
    starts.append(end)
    out: list[T] = []
    append = out.append
    loads = json.loads
    index = 0
    for i in range(0, len(starts) - 1, _BATCH):
        chunk = text[starts[i] : starts[min(i + _BATCH, len(starts) - 1)]].rstrip()
        try:
            events = loads("[" + chunk.removesuffix(",") + "]")
        except ValueError:
            return None
        if len(events) != min(_BATCH, len(starts) - 1 - i):
            return None
        for event in events:
            converted = _convert(reader, convert, event, index)
            if converted is not None:
                append(converted)
            index += 1
    reader.pos = end + len("\n  ]")
    return out


def _read_events_one_by_one(reader: _Reader, convert: Callable[[dict[str, Any]], T | None]) -> list[T]:
    # The general loop of reading a trace: one raw_decode per event, separators by regex,
    # everything bound to locals.
    text, decode, space, separator = reader.text, reader.decode, _SPACE.match, _SEPARATOR.match
    pos = space(text, reader.pos + 1).end()  # type: ignore[union-attr]  # past the "["
    out: list[T] = []
    append = out.append
    if text.startswith("]", pos):
        reader.pos = pos + 1
        return out
    index = 0
    while True:
        try:
            event, pos = decode(text, pos)
        except json.JSONDecodeError as exc:
            reader.pos = exc.pos
            raise reader.fail(f"not valid JSON, the file may be truncated ({exc.msg})") from None
        reader.pos = pos
        converted = _convert(reader, convert, event, index)
        if converted is not None:
            append(converted)
        index += 1
        found = separator(text, pos)
        if found is None:
            reader.pos = pos
            raise reader.fail("not valid JSON, the file may be truncated: the event list does not end")
        pos = found.end()
        if found.group(1) == "]":
            reader.pos = pos
            return out
