"""The running test's list of profilers (``running.py``): what the entry points hand it while a
test runs, and nothing outside one (issue 32 item 10)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelprof import Profiler, load_trace
from pytest_kernelprof.api.loading import read_trace
from pytest_kernelprof.running import Loaded, close_test, keeps_traces, open_test

Trace = Callable[[str], Path]


@pytest.fixture
def held() -> Iterator[list[Any]]:
    # The plugin has opened this test's own list: hold a list of ours instead, then give it back.
    holders: list[Any] = []
    before = open_test(holders)
    yield holders
    close_test(before)


def test_profilers_made_while_a_test_runs_join_it_once(held: list[Any]) -> None:
    profiler = Profiler()
    assert held == [profiler]
    Profiler.from_options(profiler.options)
    assert len(held) == 2


def test_traces_loaded_while_a_test_runs_are_kept_in_one_holder(held: list[Any], trace: Trace) -> None:
    first = load_trace(trace("linear_eager"))
    second = load_trace(trace("linear_fp32"))
    read_trace(trace("linear_eager"))  # the profiler's own reader: its profiler keeps the capture
    (loaded,) = held
    assert isinstance(loaded, Loaded)
    assert [capture.profile for capture in loaded.captures] == [first, second]
    assert loaded.captures[0].path == str(trace("linear_eager"))


def test_a_profilers_loaded_trace_is_kept_by_the_profiler_alone(held: list[Any], trace: Trace) -> None:
    profiler = Profiler()
    profiler.load_trace(trace("linear_eager"))
    assert held == [profiler]
    assert len(profiler.captures) == 1


def test_nothing_is_kept_outside_a_test(trace: Trace) -> None:
    holders: list[Any] = []
    outer = open_test(holders)
    close_test()
    load_trace(trace("linear_eager"))
    Profiler()
    assert holders == []
    close_test(outer)


def test_a_test_run_inside_a_test_gives_the_outer_tests_list_back(held: list[Any]) -> None:
    inner: list[Any] = []
    before = open_test(inner)  # as the plugin does for a test of an in-process pytester run
    Profiler()
    close_test(before)
    profiler = Profiler()
    assert len(inner) == 1
    assert held == [profiler]


def test_whether_a_tests_traces_will_be_saved_holds_until_it_ends() -> None:
    saved = open_test([], keep_traces=True)  # as the plugin opens a test under --kernelprof-trace-dir
    try:
        assert keeps_traces()
        inner = open_test([])  # a test of an in-process pytester run, saving nothing
        assert not keeps_traces()
        close_test(inner)
        assert keeps_traces()
    finally:
        close_test(saved)
    outer = open_test([])
    close_test()
    assert not keeps_traces()  # outside a test
    close_test(outer)
