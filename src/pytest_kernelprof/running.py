"""Where the profiles taken while a test runs go: that test's reports.

The plugin opens a test's list of profilers before the test's setup and closes it after its
teardown (``plugin/books.py``), so that a fixture's profiles are the test's too; while it is
open, every ``Profiler`` made (``pytest_kernelprof.profile`` makes one) joins it, and every trace
read with the module's ``load_trace`` is kept in it. So a profile taken without the ``kernelprof``
fixture shows in a failing test's report, the job summary and the JUnit properties as the
fixture's do. Outside a test (a script, a module's import) the list is closed and nothing is
kept.

The plugin also says here whether the test's traces will be saved (``--kernelprof-trace-dir``
with ``--kernelprof-save`` failed or all): each profile's trace must then be kept as its session
ends, before a later session takes what it is written from (``capture/session_traces.py``), and
capture asks :func:`keeps_traces` when a session ends.

A leaf: no pytest and no import, so that the plugin opens it around every test without loading
the profile model, and ``api`` hands it what it makes without knowing pytest.
"""

from __future__ import annotations

from typing import Any


class _Test:
    """The running test: its list of holders, whether its traces will be saved, and the names of
    the suite's rules it is held to."""

    def __init__(self, holders: list[Any], keep_traces: bool, rules: tuple[str, ...]) -> None:
        self.holders = holders
        self.keep_traces = keep_traces
        self.rules = rules


_open: _Test | None = None


class Loaded:
    """What a test's list holds for the traces read with ``load_trace``: their captures, as a
    profiler holds its own (``captures``, newest last)."""

    def __init__(self) -> None:
        self.captures: list[Any] = []


def open_test(holders: list[Any], *, keep_traces: bool = False, rules: tuple[str, ...] = ()) -> object:
    """Make ``holders`` (each with a ``captures`` list) the running test's, until :func:`close_test`;
    ``keep_traces``: the test's traces will be saved; ``rules``: the names of the suite's
    ``kernelprof_forbid`` rules the test is held to. Returns the test it replaces (a test that
    runs pytest in its own process), for ``close_test``."""
    global _open
    before, _open = _open, _Test(holders, keep_traces, rules)
    return before


def close_test(before: object = None) -> None:
    """End the running test's list, and give back the one ``open_test`` replaced."""
    global _open
    _open = before if isinstance(before, _Test) else None


def keeps_traces() -> bool:
    """Whether a test runs whose traces will be saved: its profiles' traces are kept as they end."""
    return _open is not None and _open.keep_traces


def suite_rules() -> tuple[str, ...]:
    """The names of the suite's rules the running test is held to; none outside a test. A profile
    the module's ``load_trace`` reads is not checked against them (``api/profiler.py`` warns)."""
    return () if _open is None else _open.rules


def join(profiler: Any) -> None:
    """Add ``profiler`` to the running test's list, once; nothing outside a test."""
    if _open is not None and not any(holder is profiler for holder in _open.holders):
        _open.holders.append(profiler)


def keep(capture: Any) -> None:
    """Keep a loaded trace's ``capture`` in the running test's list; nothing outside a test."""
    if _open is None:
        return
    loaded = next((holder for holder in _open.holders if isinstance(holder, Loaded)), None)
    if loaded is None:
        loaded = Loaded()
        _open.holders.append(loaded)
    loaded.captures.append(capture)
