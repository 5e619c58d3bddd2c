"""What capture refuses before it runs anything (what cannot be profiled by calling it; the
counts are ``ProfileOptions``'s to check) and the errors and notes of a session that went
wrong: a call that raised, another profiler that stopped or cleared the session.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

from ..errors import ProfilerBusyError
from ..traces import ANNOTATION, STEP_PREFIX, RawEvent


def annotate(exc: BaseException, note: str) -> None:
    add_note = getattr(exc, "add_note", None)
    if add_note is not None:
        add_note(note)


def check_callable(fn: object) -> None:
    """A TypeError for what cannot be profiled by calling it: a non-callable (``fn(x)`` passed
    instead of ``fn``), and generator or coroutine functions, whose call runs nothing."""
    __tracebackhide__ = True
    if not callable(fn):
        raise TypeError(
            f"kernelprof needs a callable to profile, got {type(fn).__name__}: pass the function and its "
            "arguments separately, kernelprof(fn, x), not kernelprof(fn(x))"
        )
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    if inspect.isasyncgenfunction(fn):
        raise TypeError(
            f"kernelprof cannot profile {name}: it is an async generator function, and calling it runs nothing. "
            "Profile a function that drains it, e.g. lambda: asyncio.run(drain(fn(x)))"
        )
    if inspect.isgeneratorfunction(fn):
        raise TypeError(
            f"kernelprof cannot profile {name}: it is a generator function, and calling it runs nothing "
            "until the generator is iterated. Profile a function that consumes it: kernelprof(lambda: list(fn(x)))"
        )
    if inspect.iscoroutinefunction(fn):
        raise TypeError(
            f"kernelprof cannot profile {name}: it is a coroutine function (async def), and calling it runs "
            "nothing until it is awaited. Profile a function that runs it: kernelprof(lambda: asyncio.run(fn(x)))"
        )


def check_result(fn: object, result: object) -> None:
    """A TypeError where a call returned deferred work (a generator, coroutine or awaitable),
    which ran nothing; the object is closed so that it warns of nothing later."""
    __tracebackhide__ = True
    if not (inspect.isgenerator(result) or inspect.isasyncgen(result) or inspect.isawaitable(result)):
        return
    close = getattr(result, "close", None)
    if inspect.isasyncgen(result):
        close = None  # its aclose() is itself a coroutine; dropping an unstarted one warns of nothing
    if close is not None:
        close()
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    what = type(result).__name__
    remedy = (
        "iterate it: kernelprof(lambda: list(fn(x)))"
        if inspect.isgenerator(result) or inspect.isasyncgen(result)
        else "await it: kernelprof(lambda: asyncio.run(fn(x)))"
    )
    raise TypeError(
        f"kernelprof: calling {name} returned a {what}, so nothing ran: the work happens only when you {remedy}"
    )


def interrupted(step: str, who: str = "the callable") -> ProfilerBusyError:
    return ProfilerBusyError(
        f"the profiler session of pytest-kernelprof was stopped during {step}: {who} started or stopped "
        "a torch profiler itself (torch.profiler.profile, or start()/stop()), which ends the one session a "
        "process can have, so nothing of its work was recorded. Profile it without a profiler of its "
        "own, or use that profiler's results instead of kernelprof."
    )


def check_steps(events: Sequence[RawEvent], expected: int) -> None:
    """A ProfilerBusyError where the session lost its step marks: another profiler cleared its events."""
    __tracebackhide__ = True
    found = sum(1 for e in events if e.category == ANNOTATION and e.name.startswith(STEP_PREFIX))
    if found != expected:
        raise ProfilerBusyError(
            f"the profiler session holds {found} of the {expected} profiled call{'' if expected == 1 else 's'} "
            "(ProfilerStep marks): another "
            "torch profiler in the process cleared the session's events. Profile the callable without a "
            "profiler of its own."
        )
