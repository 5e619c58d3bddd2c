"""A trace file's bytes, decompressed: a file, a pipe or standard input read up to the size cap.

Training traces run to millions of events, and a path may name anything: a file that grows
while it is read, a named pipe, a device, endless output. The bytes are counted as they come
and refused past ``KERNELPROF_MAX_TRACE_MB`` (``max_trace_bytes``); a stream whose first
megabyte cannot start a trace stops there. A gzip file is decompressed a megabyte at a time,
and one that grows like a gzip bomb is refused before it fills memory. What the bytes hold is
``files.py``'s to read.
"""

from __future__ import annotations

import os
import stat
import sys
import time
import zlib
from collections.abc import Iterable
from typing import Any

from ..errors import TraceError
from .containers import other_format
from .json_reader import hide_trace_errors
from .missing import missing_trace_file

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
