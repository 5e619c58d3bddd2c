"""The general reader of a trace's JSON text: a cursor that decodes one value at a time,
and the event list read one event at a time, each event converted and checked.

Any file ``files.py``'s faster batches cannot read (or leave over) ends here, so this module
words every error a trace file can have: each one a :class:`TraceError` naming the file and,
where it helps, the line.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from itertools import repeat
from typing import Any, TypeVar

from ..errors import TraceError

T = TypeVar("T")


def hide_trace_errors(excinfo: Any) -> bool:
    """A ``__tracebackhide__`` for pytest: the reader's frames are hidden from a test's failure
    when the error is a TraceError (it names the file and what is wrong), shown for any other."""
    return bool(excinfo.errisinstance(TraceError))


_TOO_DEEP = "JSON nested too deeply to be a trace"


class Reader:
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
        self.pos = SPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]  # "*" always matches
        return self.text[self.pos : self.pos + 1]

    def expect(self, char: str, what: str) -> None:
        __tracebackhide__ = hide_trace_errors
        if self.skip() != char:
            found = self.text[self.pos : self.pos + 20] or "the end of the file"
            raise self.fail(f"not valid JSON, the file may be truncated: expected {what}, found {found!r}")
        self.pos += 1

    def value(self) -> Any:
        __tracebackhide__ = hide_trace_errors
        self.skip()
        try:
            value, self.pos = self.decode(self.text, self.pos)
        except ValueError as exc:
            raise self.not_json(exc) from None
        except RecursionError:
            raise self.fail(_TOO_DEEP) from None
        return value

    def not_json(self, exc: ValueError) -> TraceError:
        """What the decoder's ``exc`` says of the text: malformed JSON (at its place), or a number
        of more digits than Python converts (a plain ValueError), which no profiler writes."""
        if isinstance(exc, json.JSONDecodeError):
            self.pos = exc.pos
            return self.fail(f"not valid JSON, the file may be truncated ({exc.msg})")
        return self.fail(f"a number of more than {sys.get_int_max_str_digits()} digits, which no profiler writes")


EXPORT_HINT = " (export one with prof.export_chrome_trace(path))"


def not_an_object(reader: Reader) -> TraceError:
    """What a file that does not start with ``{`` is instead: not JSON, or which JSON."""
    start = reader.pos
    shown = reader.text[start : start + 40].split("\n", 1)[0].rstrip()
    try:
        value, _ = reader.decode(reader.text, start)
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError) and exc.pos == start:
            return TraceError(f"{reader.name}: not JSON: it starts with {shown!r}, and a Chrome trace is a JSON object")
        return reader.not_json(exc)
    except RecursionError:
        return TraceError(f"{reader.name}: not valid JSON: nested too deeply to read (it starts with {shown!r})")
    kind = json_kind(value) + (f" ({len(value)} items)" if isinstance(value, list) else "")
    return TraceError(
        f"{reader.name}: a JSON {kind}, not an object with a 'traceEvents' list, so not a Chrome trace "
        f"from torch.profiler{EXPORT_HINT}"
    )


def json_kind(value: Any) -> str:
    kinds = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)


SPACE = re.compile(r"[ \t\n\r]*")
_SEPARATOR = re.compile(r"[ \t\n\r]*([,\]])[ \t\n\r]*")


def convert_event(
    reader: Reader, convert: Callable[[dict[str, Any]], T | None], event: Any, index: int, durations: bool = True
) -> T | None:
    """``convert(event)``; with ``durations``, an event it keeps may not have a negative ``dur``."""
    __tracebackhide__ = hide_trace_errors
    if type(event) is not dict:
        raise reader.fail(f"'traceEvents' holds a {type(event).__name__}, not an event object")
    try:
        converted = convert(event)
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise reader.fail(f"event {index} is malformed ({type(exc).__name__}: {exc}): {_shown(event)}") from None
    if durations and converted is not None:
        try:
            negative = event["dur"] < 0
        except (KeyError, TypeError):  # no duration, or one that is not a number
            negative = _negative(event.get("dur", 0))
        if negative:
            raise reader.fail(
                f"event {index} has a negative duration (dur {event['dur']!r}), which no profiler writes: "
                f"{_shown(event)}"
            )
    return converted


def may_have_negative_durations(events: list[Any]) -> bool:
    """Whether a batch needs its durations checked event by event: one pass in C that says no for most."""
    try:
        # "not >= 0" also for NaN, after which min() sees no smaller value
        return not min(map(dict.get, events, repeat("dur"), repeat(0)), default=0) >= 0
    except TypeError:  # a duration that is not a number, or an event that is not an object
        return True


def _negative(dur: Any) -> bool:
    try:
        return float(dur) < 0
    except (TypeError, ValueError):  # ``convert`` judges what is not a number
        return False


def _shown(event: dict[str, Any]) -> str:
    try:
        return str(event)[:120]
    except RecursionError:
        return "(nested too deeply to show)"


def read_events_one_by_one(
    reader: Reader, convert: Callable[[dict[str, Any]], T | None], pos: int, out: list[T], index: int
) -> list[T]:
    """The events from ``pos`` (the next one's start, or the list's end) to the list's end,
    after ``out`` and the ``index`` events read before them."""
    __tracebackhide__ = hide_trace_errors
    # The general loop of reading a trace: one raw_decode per event, separators by regex,
    # everything bound to locals.
    text, decode, separator = reader.text, reader.decode, _SEPARATOR.match
    append = out.append
    if index == 0 and text.startswith("]", pos):
        reader.pos = pos + 1
        return out
    while True:
        try:
            event, pos = decode(text, pos)
        except ValueError as exc:
            reader.pos = pos
            raise reader.not_json(exc) from None
        except RecursionError:
            raise reader.fail(_TOO_DEEP) from None
        reader.pos = pos
        converted = convert_event(reader, convert, event, index)
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
