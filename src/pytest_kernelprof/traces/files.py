"""Read Chrome/Perfetto trace files as torch.profiler exports them (.json, .json.gz).

Training traces run to millions of events. ``json.load`` turns each into a dict of
dicts, several times the file's size in memory; here the ``traceEvents`` array is
decoded a batch of events at a time and each event is converted at once (to a ``RawEvent``, by ``chrome.py``),
so peak memory stays near the size of the decompressed file.

A caller may also pass a typed reader (``TypedReader``: with msgspec, the ``[fast]``
extra, ``chrome.py`` makes one whose records keep only the fields a trace event needs),
which is faster than ``json.load`` itself; ``typed_batches.py`` cuts its batches. Anything that
reader does not expect (another layout, an odd type, a malformed event) is left to the
standard-library reader (``json_reader.py``), so both give the same profile and the same error for every
file. What an event is, this module does not know: the converters are passed in. The bytes
(the size cap, pipes, gzip) are ``trace_bytes.py``'s.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import TraceError
from ..tables import printable
from .json_reader import (
    EXPORT_HINT,
    SPACE,
    Reader,
    convert_event,
    hide_trace_errors,
    json_kind,
    may_have_negative_durations,
    not_an_object,
    read_events_one_by_one,
)
from .trace_bytes import _BOM, _MB, MAX_TRACE_MB_ENV, _trace_bytes
from .typed_batches import _CUT_TRIES, TypedReader

T = TypeVar("T")


def _decoded_text(data: bytes | bytearray, name: str) -> str:
    __tracebackhide__ = hide_trace_errors
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TraceError(f"{name}: not valid JSON text, not UTF-8 at byte {exc.start}") from None


def read_trace(
    path: str | os.PathLike[str],
    convert: Callable[[dict[str, Any]], T | None],
    typed: TypedReader[T] | None = None,
) -> tuple[dict[str, Any], list[T]]:
    """The trace's top-level fields (without ``traceEvents``) and ``convert`` of each event.

    ``convert`` returns None for events to drop and raises KeyError, TypeError or ValueError
    for a malformed event. Every problem becomes one :class:`TraceError` naming the file.
    An event that ``convert`` keeps may not have a negative ``dur``. A UTF-8 byte order
    mark is skipped. Files over ``max_trace_bytes()`` (decompressed) are refused.
    ``typed``: a faster reader that makes what ``convert`` makes, tried first.
    """
    __tracebackhide__ = hide_trace_errors
    name = os.fspath(path)
    try:
        return read_trace_data(_trace_bytes(name), name, convert, typed)
    except MemoryError:
        # What was read is released as the error leaves the reader: the message can be made.
        raise TraceError(
            f"{name}: out of memory while reading the trace: reading takes about the trace's decompressed size "
            "in memory, twice that or more without msgspec (pip install 'pytest-kernelprof[fast]'); read it where "
            f"more memory is free, or set {MAX_TRACE_MB_ENV} to refuse traces this big before they are read"
        ) from None


def read_trace_data(
    data: bytes | bytearray,
    name: str,
    convert: Callable[[dict[str, Any]], T | None],
    typed: TypedReader[T] | None = None,
) -> tuple[dict[str, Any], list[T]]:
    """``read_trace`` of a trace's uncompressed bytes; ``name`` names it in errors.

    The typed reader decodes slices of ``data`` itself (no copy of the whole); the general
    reader decodes it to text once, and empties a bytearray ``data`` then: one copy is kept.
    """
    __tracebackhide__ = hide_trace_errors
    if typed is not None:
        found = typed.read(data, 3 if data.startswith(_BOM) else 0)
        if found is not None:
            return found
    text = _decoded_text(data, name)
    if isinstance(data, bytearray):
        data.clear()  # the text is all that is read from here on: keep one copy in memory
    del data
    reader = Reader(text, name)
    reader.pos = 1 if text.startswith("\ufeff") else 0
    first = reader.skip()  # not text.strip(): that would copy a text of hundreds of MB
    if not first:
        raise TraceError(f"{name}: the file is empty, not a Chrome trace")
    if first != "{":
        raise not_an_object(reader)
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
        if "traceEvents" in header:
            what = f"its 'traceEvents' is a JSON {json_kind(header['traceEvents'])}, not a list of events"
        else:
            keys = ", ".join(map(_shown_key, list(header)[:8])) + (", ..." if len(header) > 8 else "")
            what = f"a JSON object without a 'traceEvents' list (its keys: {keys or 'none'})"
        raise TraceError(f"{name}: {what}, so not a Chrome trace from torch.profiler{EXPORT_HINT}")
    return header, events


def _shown_key(key: str) -> str:
    # The file's text, on a line of a CI log: a key with a newline would start a line of its own,
    # which GitHub Actions runs as a workflow command where it starts with "::".
    return printable(key if len(key) <= _KEY_CHARS else key[:_KEY_CHARS] + "...")


_KEY_CHARS = 40


def _read_events(reader: Reader, convert: Callable[[dict[str, Any]], T | None]) -> list[T]:
    __tracebackhide__ = hide_trace_errors
    out: list[T] = []
    pos, index = _read_event_batches(reader, convert, out)
    return read_events_one_by_one(reader, convert, pos, out, index)


def _read_event_batches(reader: Reader, convert: Callable[[dict[str, Any]], T | None], out: list[T]) -> tuple[int, int]:
    """Decode events a batch of about a megabyte at a time into ``out``, whatever the layout;
    where the events left to read start, and how many were read.

    A batch is cut after an event's ``}`` that a ``,`` and the next ``{`` follow, and kept
    where it decodes: a cut inside a string or a nested object leaves one open, so where the
    batch decodes, the cut was between two events. One ``json.loads`` per batch saves a
    Python round trip per event. The rest (the last batch, whatever no cut decodes) is left
    to the event-by-event reader, which also finds the list's end and words any error.
    """
    __tracebackhide__ = hide_trace_errors
    text = reader.text
    pos = SPACE.match(text, reader.pos + 1).end()  # type: ignore[union-attr]  # past the "["; "*" always matches
    index = 0
    loads = json.loads
    while True:
        search = pos + _BATCH_CHARS
        for _ in range(_CUT_TRIES):
            cut = _CUT_TEXT.search(text, search)
            if cut is None:
                return pos, index
            try:
                events = loads("[" + text[pos : cut.start() + 1] + "]")
            except (ValueError, RecursionError):
                search = cut.end()  # a cut inside a string or a nested object: try the next
                continue
            break
        else:
            return pos, index
        reader.pos = pos
        durations = may_have_negative_durations(events)
        for event in events:
            converted = convert_event(reader, convert, event, index, durations)
            if converted is not None:
                out.append(converted)
            index += 1
        pos = cut.end() - 1  # the next event's "{"


# An event's end, a comma and the next event's start, in any layout; how much a batch reads.
_CUT_TEXT = re.compile(r"\}[ \t\r\n]*,[ \t\r\n]*\{")
_BATCH_CHARS = _MB
