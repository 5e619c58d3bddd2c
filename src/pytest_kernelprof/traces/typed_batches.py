"""The typed reader (msgspec's, the ``[fast]`` extra): a trace's event list decoded from its
bytes a batch of typed records at a time, whatever the layout.

``chrome.py`` makes the reader (its records keep only the fields a trace event needs) and
``files.py`` tries it first; this module finds the event list and cuts its batches. Anything
it does not expect (another layout, an odd type, a malformed event) is left to the general
reader, which gives the same profile and the same error for every file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .trace_bytes import _MB

T = TypeVar("T")

# Both readers' batches, this one's and ``files.py``'s.
_CUT_TRIES = 8  # cuts that fail to decode before the batches stop (a malformed event fails them all)


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
