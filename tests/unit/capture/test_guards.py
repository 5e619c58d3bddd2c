"""Profiles of nothing refused: callables that run nothing when called, and callables that
start or stop a torch profiler themselves (which cuts the plugin's session short)."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof.capture import profiler_running
from pytest_kernelprof.capture import run as capture
from pytest_kernelprof.traces import RawEvent

X = torch.randn(8, 8)


def gen(x: torch.Tensor) -> Iterator[torch.Tensor]:
    yield torch.relu(x)


async def coro(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x)


async def agen(x: torch.Tensor) -> AsyncIterator[torch.Tensor]:
    yield torch.relu(x)


class ReturnsCoroutine:
    def __call__(self, x: torch.Tensor) -> Any:
        return coro(x)


@pytest.mark.parametrize(
    ("fn", "says"),
    [
        (gen, r"gen: it is a generator function, .* kernelprof\(lambda: list\(fn\(x\)\)\)"),
        (functools.partial(gen), "it is a generator function"),
        (coro, r"coro: it is a coroutine function \(async def\), .* asyncio.run"),
        (agen, "it is an async generator function"),
        (ReturnsCoroutine(), r"calling ReturnsCoroutine returned a coroutine, so nothing ran: .* await it"),
        (lambda x: gen(x), r"returned a generator, so nothing ran: .* iterate it"),
    ],
)
@pytest.mark.parametrize("warmup", [0, 2])
def test_callables_that_run_nothing_are_refused(fn: Any, says: str, warmup: int) -> None:
    with pytest.raises(TypeError, match=says):
        kp.Profiler(warmup=warmup)(fn, X)
    assert not profiler_running()


def own_profiler(x: torch.Tensor) -> torch.Tensor:
    with torch.profiler.profile():
        return torch.relu(x)


def start_stop(x: torch.Tensor) -> None:
    prof = torch.profiler.profile()
    prof.start()
    torch.relu(x)
    prof.stop()


@pytest.mark.parametrize("fn", [own_profiler, start_stop])
def test_a_callable_with_its_own_profiler_is_refused(fn: Any) -> None:
    with pytest.raises(kp.ProfilerBusyError, match="stopped during profiled call 1 of 3: the callable started"):
        kp.profile(fn, X)
    assert not profiler_running()
    assert kp.profile(torch.relu, X).ops["aten::relu"].count == 1  # the next profile is whole


def test_a_record_block_with_its_own_profiler_is_refused() -> None:
    says = "the `with kernelprof.record\\(\\)` block: code in the block"
    with pytest.raises(kp.ProfilerBusyError, match=says), kp.Profiler().record():
        own_profiler(X)


def test_a_session_that_lost_its_step_marks_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    real = capture.raw_events

    def cleared(torch_profiler: Any, **options: Any) -> list[RawEvent]:
        return [e for e in real(torch_profiler, **options) if not e.name.startswith("ProfilerStep#1")]

    monkeypatch.setattr(capture, "raw_events", cleared)
    with pytest.raises(kp.ProfilerBusyError, match="holds 2 of the 3 profiled calls "):
        kp.profile(torch.relu, X)
