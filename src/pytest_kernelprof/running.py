"""Where the profiles taken while a test runs go: that test's reports.

The plugin opens a test's list of profilers before the test and closes it after
(``plugin/fixtures.py``); while it is open, every ``Profiler`` made (``pytest_kernelprof.profile``
makes one) joins it, and every trace read with the module's ``load_trace`` is kept in it. So a
profile taken without the ``kernelprof`` fixture shows in a failing test's report, the job summary
and the JUnit properties as the fixture's do. Outside a test (a script, a module's import) the list
is closed and nothing is kept.

A leaf: no pytest and no import, so that the plugin opens it around every test without loading
the profile model, and ``api`` hands it what it makes without knowing pytest.
"""

from __future__ import annotations

from typing import Any

_open: list[Any] | None = None


class Loaded:
    """What a test's list holds for the traces read with ``load_trace``: their captures, as a
    profiler holds its own (``captures``, newest last)."""

    def __init__(self) -> None:
        self.captures: list[Any] = []


def open_test(holders: list[Any]) -> list[Any] | None:
    """Make ``holders`` (each with a ``captures`` list) the running test's, until :func:`close_test`;
    returns the list it replaces (a test that runs pytest in its own process), for ``close_test``."""
    global _open
    before, _open = _open, holders
    return before


def close_test(before: list[Any] | None = None) -> None:
    """End the running test's list, and give back the one ``open_test`` replaced."""
    global _open
    _open = before


def join(profiler: Any) -> None:
    """Add ``profiler`` to the running test's list, once; nothing outside a test."""
    if _open is not None and not any(holder is profiler for holder in _open):
        _open.append(profiler)


def keep(capture: Any) -> None:
    """Keep a loaded trace's ``capture`` in the running test's list; nothing outside a test."""
    if _open is None:
        return
    loaded = next((holder for holder in _open if isinstance(holder, Loaded)), None)
    if loaded is None:
        loaded = Loaded()
        _open.append(loaded)
    loaded.captures.append(capture)
