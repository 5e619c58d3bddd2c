"""Read Chrome/Perfetto trace files as torch.profiler exports them (.json, .json.gz).

Training traces run to millions of events. ``json.load`` turns each into a dict of
dicts, several times the file's size in memory; here the ``traceEvents`` array is
decoded a batch of events at a time and each event is converted at once (to a ``RawEvent``, by ``chrome.py``),
so peak memory stays near the size of the decompressed file.

A caller may also pass a typed reader (``TypedReader``: with msgspec, the ``[fast]``
extra, ``chrome.py`` makes one whose records keep only the fields a trace event needs),
which is faster than ``json.load`` itself; this module cuts its batches. Anything that
reader does not expect (another layout, an odd type, a malformed event) is left to the
standard-library reader (``json_reader.py``), so both give the same profile and the same error for every
file. What an event is, this module does not know: the converters are passed in.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..errors import TraceError
from ..tables import printable
from .containers import other_format
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
from .missing import missing_trace_file

T = TypeVar("T")

MAX_TRACE_MB_ENV = "KERNELPROF_MAX_TRACE_MB"
DEFAULT_MAX_TRACE_MB = 4096
_MB = 1 << 20
_CHUNK = _MB
_BOM = b"\xef\xbb\xbf"


def max_trace_bytes() -> int:
    """The most a trace may hold, decompressed: ``KERNELPROF_MAX_TRACE_MB`` megabytes (MiB)."""
    __tracebackhide__ = hide_trace_errors
    value = os.environ.get(MAX_TRACE_MB_ENV, "").strip()
    if not value:
        return DEFAULT_MAX_TRACE_MB * _MB
    try:
        megabytes = int(value)
    except ValueError:
        megabytes = 0
    if megabytes <= 0:
        raise TraceError(f"{MAX_TRACE_MB_ENV}={value!r}: expected a whole number of megabytes above 0")
    if megabytes > _MOST_MB:
        raise TraceError(
            f"{MAX_TRACE_MB_ENV}={value!r}: more than this machine can address; at most {_MOST_MB} megabytes"
        )
    return megabytes * _MB


# The cap (and one byte past it, which the readers ask for) must fit a C size.
_MOST_MB = (sys.maxsize - 1) // _MB


def _too_big(name: str, cap: int) -> TraceError:
    return TraceError(
        f"{name}: larger than {cap // _MB} MB, the most a trace is read to "
        f"(set {MAX_TRACE_MB_ENV} to read a bigger one)"
    )


def _read_stream(handle: Any, name: str, cap: int, *, named_pipe: bool = False) -> bytearray:
    """A pipe or device, read in chunks up to the cap; a stream that cannot be a trace stops at once.
    A named pipe no process has opened to write yet reads as empty: its writer (``mkfifo`` and a
    producer started after the reader) gets :data:`PIPE_WAIT_S` to come."""
    __tracebackhide__ = hide_trace_errors
    first = handle.read(_CHUNK)
    deadline = time.monotonic() + PIPE_WAIT_S
    while named_pipe and not first and time.monotonic() < deadline:
        time.sleep(0.05)
        first = handle.read(_CHUNK)
    if named_pipe and not first:
        raise TraceError(
            f"{name}: a named pipe that no process wrote to within {PIPE_WAIT_S:g} s: start its writer first, "
            "or give the trace's file"
        )
    _check_start(first, name)
    return _read_on(handle, bytearray(first), name, cap)


def _check_start(first: bytes | bytearray, name: str) -> None:
    """Refuse a stream whose first megabyte (or all of it, if less) cannot start a trace: neither
    gzip nor JSON whose first character is '{'. Endless output (``yes``, a device) stops here."""
    __tracebackhide__ = hide_trace_errors
    other = other_format(first)
    if other is not None:
        raise TraceError(f"{name}: {other}")
    start = first[3:] if first.startswith(_BOM) else first
    if not start.startswith(b"\x1f\x8b") and start.lstrip(b" \t\r\n")[:1] not in (b"{", b""):
        raise TraceError(f"{name}: not a Chrome trace: it starts with {bytes(start[:8])!r}, not with '{{'")


def _read_on(handle: Any, data: bytearray, name: str, cap: int) -> bytearray:
    """``data`` and what ``handle`` holds after it, a chunk at a time, refused past the cap."""
    __tracebackhide__ = hide_trace_errors
    while chunk := handle.read(_CHUNK):
        data += chunk  # grown in place: no second copy of the whole, as joining chunks makes
        if len(data) > cap:
            raise _too_big(name, cap)
    return data


def copy_capped(chunks: Iterable[bytes], target: Any, name: str) -> None:
    """Copy ``chunks`` (standard input's) to the file ``target``, refused once more than
    ``max_trace_bytes()`` came, or at its first megabyte where that cannot start a trace: an
    endless stream fills neither disk nor memory. The bytes may be gzipped: the cap holds again
    for what they decompress to."""
    __tracebackhide__ = hide_trace_errors
    cap = max_trace_bytes()
    copied = 0
    head: bytearray | None = bytearray()  # the first megabyte, held until it is checked
    for chunk in chunks:
        copied += len(chunk)
        if copied > cap:
            raise _too_big(name, cap)
        if head is None:
            target.write(chunk)
            continue
        head += chunk
        if len(head) >= _CHUNK:
            _check_start(head, name)  # as a pipe read in place is: `yes | kernelprof show -` stops here
            target.write(head)
            head = None
    if head is not None:
        _check_start(head, name)
        target.write(head)


# A gzip stream that decompresses to more than this many times its size, past this many bytes,
# grows like a gzip "bomb" (a few MB that unpack to gigabytes): traces compress 8 to 20 times, a
# bomb about a thousand. Under the default cap it is refused there: a 4 MB file would otherwise
# take the 4 GiB cap, and twice that to read. Where the user set KERNELPROF_MAX_TRACE_MB, the cap is
# theirs: the stream is first decompressed without keeping what it gives, to count it, and is
# refused past the cap before its bytes fill memory, or read.
_BOMB_RATIO = 100
_BOMB_BYTES = 64 * _MB
_GZIP_INPUT = 1 << 16  # compressed bytes fed at a time (the rest of a feed is copied each call)


def _cap_is_set() -> bool:
    return bool(os.environ.get(MAX_TRACE_MB_ENV, "").strip())


def _gunzip(data: bytes | bytearray, name: str, cap: int) -> bytearray:
    """Decompress every gzip member, a megabyte at a time, stopping past the cap; a stream that
    grows like a bomb is refused, or under a cap the user set counted first, without keeping its
    bytes, and refused past the cap."""
    __tracebackhide__ = hide_trace_errors
    out = bytearray()
    if _inflate(data, name, cap, out, keep=True) is None:
        if not _cap_is_set():
            raise TraceError(
                f"{name}: a gzip stream that unpacks to more than {_BOMB_RATIO} times its size, as a gzip bomb "
                f"does (a trace compresses 8 to 20 times): refused once it passed {_BOMB_BYTES // _MB} MB "
                f"(set {MAX_TRACE_MB_ENV} to read it, up to that many megabytes)"
            )
        _inflate(data, name, cap, None, keep=False, check=False)  # the count: refused past the cap
        _inflate(data, name, cap, out, keep=True, check=False)
    return out


def _inflate(
    data: bytes | bytearray, name: str, cap: int, out: bytearray | None, *, keep: bool, check: bool = True
) -> int | None:
    """Decompress ``data`` (gzip members, zero padding allowed after the last) into ``out``
    (``keep``) or only count it, fed and taken a chunk at a time; its size, or None where
    ``check`` found it growing like a bomb (``out`` is then emptied). A TraceError past the cap
    or for a corrupt stream."""
    __tracebackhide__ = hide_trace_errors
    view = memoryview(data)
    size = fed = 0
    while True:
        stream = zlib.decompressobj(16 + zlib.MAX_WBITS)
        pending: bytes | memoryview = b""
        while not stream.eof:
            if not pending:
                pending = view[fed : fed + _GZIP_INPUT]
                fed += len(pending)
            try:
                part = stream.decompress(pending, _CHUNK)
            except zlib.error as exc:
                raise TraceError(f"{name}: the gzip stream is truncated or corrupt ({exc})") from None
            size += len(part)
            if size > cap:
                raise _too_big(name, cap)
            if keep and out is not None:
                out += part
            if not part and len(stream.unconsumed_tail) == len(pending):
                raise TraceError(f"{name}: the gzip stream is truncated or corrupt (it ends early)")
            pending = stream.unconsumed_tail
            if check and size > _BOMB_BYTES and size > _BOMB_RATIO * (fed - len(pending)):
                if out is not None:
                    out.clear()
                return None
        fed -= len(stream.unused_data)  # the next member starts there
        if bytes(view[fed : fed + 2]) == b"\x1f\x8b":
            continue
        if bytes(view[fed:]).strip(b"\x00"):
            raise TraceError(f"{name}: the gzip stream is truncated or corrupt (other data after it)")
        return size  # gzip allows zero padding after the last member


def _open(name: str) -> Any:
    """``name`` opened to read its bytes. Opened without blocking, then read blocking: a named pipe
    that no one writes to reads as empty instead of hanging the test run at ``open``."""
    __tracebackhide__ = hide_trace_errors
    if "\x00" in name:
        raise TraceError(f"{name!r}: not a file name (it holds a NUL character)")
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_BINARY", 0) | _NONBLOCK)
    try:
        if _NONBLOCK:
            os.set_blocking(fd, True)
        return open(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
PIPE_WAIT_S = 5.0  # how long a named pipe's writer may take to open it


def _trace_bytes(name: str) -> bytes | bytearray:
    """The file's bytes, decompressed; at most ``max_trace_bytes()`` of them, counted as they are
    read (a file that grows while it is read stops at the cap too)."""
    __tracebackhide__ = hide_trace_errors
    cap = max_trace_bytes()
    data: bytes | bytearray
    try:
        with _open(name) as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                data = _read_stream(handle, name, cap, named_pipe=stat.S_ISFIFO(info.st_mode))
            elif info.st_size > cap:
                raise _too_big(name, cap)
            else:
                data = handle.read(info.st_size + 1)
                if len(data) > info.st_size:  # it grew since: read on, counting
                    data = _read_on(handle, bytearray(data), name, cap)
    except FileNotFoundError:
        raise missing_trace_file(name) from None
    except IsADirectoryError:
        raise TraceError(f"{name}: a directory, not a trace file") from None
    except OSError as exc:
        raise TraceError(f"{name}: cannot read the file ({exc.strerror or exc})") from None
    if len(data) > cap:
        raise _too_big(name, cap)
    gunzipped = data[:2] == b"\x1f\x8b"
    if gunzipped:
        data = _gunzip(data, name, cap)
    other = other_format(data, gunzipped=gunzipped)
    if other is not None:
        raise TraceError(f"{name}: {other}")
    return data


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
_CUT_TRIES = 8  # cuts that fail to decode before the batches stop (a malformed event fails them all)


# -- the typed reader (msgspec) -------------------------------------------------------------


@dataclass(frozen=True)
class TypedReader(Generic[T]):
    """A reader of typed records (msgspec's): ``decode`` turns a JSON array of events into
    records, raising one of ``errors`` where it cannot; ``convert`` appends what the
    general reader's converter makes of each record to a list and returns False where that
    converter would raise or drop differently (the general reader then decides)."""

    decode: Callable[[bytes], list[Any]]
    errors: tuple[type[BaseException], ...]
    convert: Callable[[list[Any], list[T]], bool]

    def read(self, data: bytes | bytearray, begin: int) -> tuple[dict[str, Any], list[T]] | None:
        """Header and converted events of a trace whose events are JSON objects; None where the
        general reader must decide.

        The header is everything but the events, decoded by ``json`` (it is small); the events
        are decoded a megabyte at a time, whatever the layout. A batch is cut after an event's
        ``}`` that a ``,`` and the next ``{`` follow, and kept only where it decodes: a cut
        inside a string or a nested object leaves a string or a bracket open, so where the
        batch decodes, the cut was between two events. A file where no such cut decodes,
        or with any event this reader does not expect, goes to the general reader.
        """
        found = _EVENTS_KEY.search(data, begin)
        if found is None or found.start() - begin > _MB:  # torch's keys before the events are few
            return None
        events_begin = _SPACE_BYTES.match(data, found.end()).end()  # type: ignore[union-attr]  # "*" always matches
        found_closing = _closing_bracket(data, begin, found.start(), events_begin)
        if found_closing is None:
            return None  # something other than event objects (the general reader tells what)
        header, closing, last = found_closing
        view = memoryview(data)
        events: list[T] = []
        pos = events_begin
        while pos < last:
            end = self._batch_end(data, view, pos, last, events)
            if end is None:
                return None
            pos = _SEPARATOR_BYTES.match(data, end).end()  # type: ignore[union-attr]
        return header, events

    def _batch_end(self, data: bytes | bytearray, view: memoryview, pos: int, last: int, out: list[T]) -> int | None:
        """Decode the events from ``pos`` up to a cut a megabyte on (or ``last``) into ``out``;
        where they end, or None where no cut decodes or an event is unexpected."""
        search = pos + _TYPED_BATCH
        for _ in range(_CUT_TRIES):
            cut = _CUT_BYTES.search(data, search, last) if search < last else None
            end = last if cut is None else cut.start() + 1
            try:
                batch = self.decode(b"".join((b"[", view[pos:end], b"]")))
            except UnicodeDecodeError:  # msgspec's own, not one of its errors: the general reader says where
                return None
            except self.errors:
                if cut is None:
                    return None
                search = cut.end()  # a cut inside a string or a nested object: try the next
                continue
            return end if self.convert(batch, out) else None
        return None


# '"traceEvents": [' with any whitespace; an event's end, a comma and the next event's start.
_EVENTS_KEY = re.compile(rb'"traceEvents"[ \t\r\n]*:[ \t\r\n]*\[')
_CUT_BYTES = re.compile(rb"\}[ \t\r\n]*,[ \t\r\n]*\{")
_SPACE_BYTES = re.compile(rb"[ \t\r\n]*")
_SEPARATOR_BYTES = re.compile(rb"[ \t\r\n]*,?[ \t\r\n]*")
_TYPED_BATCH = _MB
_CLOSING_TRIES = 256  # "]"s from the end of the file tried for the event list's (a cheap test each)


def _closing_bracket(
    data: bytes | bytearray, begin: int, key: int, events_begin: int
) -> tuple[dict[str, Any], int, int] | None:
    """The header without its events, where the event list's ``]`` is, and where its last event
    ends: the last ``]`` that only whitespace separates from an event's ``}`` (or from the
    list's ``[``) and after which the file ends the trace object, tried from the end of the file.
    torch 2.6 to 2.12 write Kineto's errors after the events (``"ERROR": ["...cpp:47] ..."]``),
    ``]`` in their text too. Where lists of objects follow the events (not torch's order), a later
    ``]`` can pass for it: then the events' last batch does not decode, and the general reader
    reads the file."""
    closing = len(data)
    for _ in range(_CLOSING_TRIES):
        closing = data.rfind(b"]", key, closing)
        if closing < events_begin or len(data) - closing > _MB:  # torch's keys after the events are few
            return None
        brace = data.rfind(b"}", events_begin, closing)
        last = events_begin if brace < 0 else brace + 1
        if _SPACE_BYTES.fullmatch(data, last, closing) is None:  # no slice: it would copy what may be most of a file
            continue
        try:
            rest = (data[begin:key] + b'"traceEvents": []' + data[closing + 1 :]).decode("utf-8")
            header = json.loads(rest)
        except (ValueError, RecursionError):
            continue
        if type(header) is not dict or header.pop("traceEvents", None) != [] or rest.count('"traceEvents"') != 1:
            return None
        return header, closing, last
    return None
