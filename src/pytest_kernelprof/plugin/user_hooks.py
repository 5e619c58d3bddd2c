"""The plugin's own hooks (``hookspec.py``) called as what they are, user code: each
implementation on its own, so that one that raises, or returns what is not lines or pairs, is
told in one line that names the hook and the plugin or ``conftest.py`` that implemented it, and
the plugin's own output and the other implementations' are still written; and only as much of
what each returns is read as the output keeps (an endless iterator is not read to its end).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Sized
from pathlib import Path
from typing import Any

import pytest

from ..tables import clip, printable

# Of a summary hook's lines, at most this many characters in all are read: the summary's own
# budget is 900 KiB (reports/summary.py) and a line past it is left out anyway.
SUMMARY_CHARS = 1024 * 1024


def implementations(
    config: pytest.Config, name: str, kwargs: dict[str, Any]
) -> Iterator[tuple[str, Callable[[], object]]]:
    """Each implementation of the hook ``name``, in the order pytest calls them: who implemented
    it (a ``conftest.py``'s path relative to the rootdir, a plugin's name) and a call of it alone.
    Where a wrapper wraps the hook, the whole hook once, as pytest would call it."""
    caller = getattr(config.hook, name)
    found = caller.get_hookimpls()
    if any(impl.wrapper or impl.hookwrapper for impl in found):
        yield "its implementations", lambda: itertools.chain.from_iterable(r or () for r in caller(**kwargs))
        return
    for impl in reversed(found):  # pluggy calls the last registered first
        arguments = [kwargs[argument] for argument in impl.argnames]
        yield who(config, impl.plugin_name), functools.partial(impl.function, *arguments)


def who(config: pytest.Config, plugin_name: str) -> str:
    """A conftest's path (its plugin name) relative to the rootdir, a plugin's name as it is."""
    path = Path(plugin_name)
    if path.is_absolute():
        try:
            return str(path.relative_to(config.rootpath))
        except ValueError:
            return str(path)
    return plugin_name


def failed(hook: str, implementer: str, exc: BaseException, then: str) -> str:
    """The line that tells of an implementation that failed."""
    told = printable(clip(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__))
    return f"kernelprof: the {hook} hook of {printable(clip(implementer))} raised {told}: {then}"


def summary_lines(config: pytest.Config, exitstatus: int) -> tuple[list[str], list[str]]:
    """The lines ``pytest_kernelprof_summary`` implementations add (a ``str`` is taken as its
    lines), and a line for each implementation that failed (its lines left out)."""
    hook = "pytest_kernelprof_summary"
    lines: list[str] = []
    errors: list[str] = []
    room = SUMMARY_CHARS
    for implementer, call in implementations(config, hook, {"config": config, "exitstatus": exitstatus}):
        try:
            result = call()
            if result is None:
                continue
            if isinstance(result, str):
                result = result.splitlines()
            if not isinstance(result, Iterable):
                raise TypeError(f"returned {type(result).__name__}, not a list of lines")
            mine: list[str] = []
            for line in result:
                text = str(line)
                room -= len(text) + 1
                if room < 0:
                    break
                mine.append(text)
        except Exception as exc:  # a hook's failure is the hook's: the plugin's summary is still written
            errors.append(failed(hook, implementer, exc, "its lines are left out of the job summary"))
            continue
        lines += mine
        if room < 0:
            break
    return lines, errors


def junit_pairs(item: pytest.Item, profile: object, room: int) -> tuple[list[tuple[str, object]], int, list[str]]:
    """The ``(name, value)`` pairs ``pytest_kernelprof_junit_properties`` implementations add for
    one profile: at most ``room`` of them (an iterator is read no further than ``room`` + 1), how
    many more there were (of a list, all of them; of an iterator, 1 where it had more), and a line
    for each implementation that failed (its pairs left out)."""
    hook = "pytest_kernelprof_junit_properties"
    pairs: list[tuple[str, object]] = []
    more = 0
    errors: list[str] = []
    for implementer, call in implementations(item.config, hook, {"item": item, "profile": profile}):
        try:
            result = call()
            if result is None:
                continue
            if isinstance(result, str | bytes) or not isinstance(result, Iterable):
                raise TypeError(f"returned {type(result).__name__}, not (name, value) pairs")
            left = max(room - len(pairs), 0)
            mine: list[tuple[str, object]] = []
            for pair in itertools.islice(result, left + 1):
                found = _pair(pair)
                if found is None:
                    raise TypeError(f"returned {printable(clip(repr(pair)))} among its pairs, not a (name, value) pair")
                mine.append(found)
            # Of a list, how many it left out; of an iterator, that it had more (it is read no further).
            extra = max((len(result) if isinstance(result, Sized) else len(mine)) - left, 0)
        except Exception as exc:  # a hook's failure is the hook's: the plugin's properties are still written
            errors.append(failed(hook, implementer, exc, "its JUnit properties are left out"))
            continue
        pairs += mine[:left]
        more += extra
    return pairs, more, errors


def _pair(value: object) -> tuple[str, str | int | float] | None:
    """``value`` as a ``(name, value)`` pair, or None where it is none (read no further than 3):
    the name as text, the value a number or text. Made text here, inside the implementation's
    guard, so that a ``__str__`` that raises is that implementation's failure; what is returned
    can no longer raise when the JUnit report writes it."""
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        return None
    found = tuple(itertools.islice(value, 3))
    return (_text(found[0]), _value(found[1])) if len(found) == 2 else None


def _value(value: object) -> str | int | float:
    # A subclass of int or float may write itself otherwise: of numbers, only the plain kinds stay.
    if isinstance(value, int | float) and type(value) in (int, float, bool):
        return value
    return _text(value)


def _text(value: object) -> str:
    # str() of what returns a str subclass from __str__ gives that subclass; a slice of it is a plain str.
    return str(value)[:]
