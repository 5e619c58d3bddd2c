"""The entry points users call: a configurable profiler object and ``load_trace``."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from .build import build_profile, paused_gc
from .capture import DEFAULT_CALLS, DEFAULT_WARMUP, Capture, Recording, capture_callable, record_block
from .events import events_from_trace_file
from .model import KernelProfile
from .rules import Rule, check_rules


class Profiler:
    """Profiles callables with fixed defaults; the ``kernelprof`` fixture is one of these.

    ``profiler(fn, *args, **kwargs)`` forwards every extra argument to ``fn``; options go
    through :meth:`profile`. Each finished session is kept in ``captures`` (newest last) so
    the pytest plugin can show the kernel table of a failing test. Every profile is checked
    against ``forbid`` (see ``rules.py``; the fixture passes the ini's ``kernelprof_forbid``)
    and raises :class:`ForbiddenError` when it breaks one.
    """

    def __init__(
        self,
        *,
        warmup: int = DEFAULT_WARMUP,
        calls: int = DEFAULT_CALLS,
        no_grad: bool = False,
        allow_variation: bool = False,
        forbid: Sequence[Rule] = (),
        stacks: bool = False,
    ) -> None:
        self.warmup = warmup
        self.calls = calls
        self.no_grad = no_grad
        self.allow_variation = allow_variation
        self.forbid = tuple(forbid)
        self.stacks = stacks
        self.captures: list[Capture] = []

    def __call__(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> KernelProfile:
        __tracebackhide__ = True
        return self.profile(fn, args, kwargs)

    def profile(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: Mapping[str, Any] | None = None,
        *,
        warmup: int | None = None,
        calls: int | None = None,
        no_grad: bool | None = None,
        allow_variation: bool | None = None,
        stacks: bool | None = None,
    ) -> KernelProfile:
        """Warm up ``warmup`` times, then profile ``calls`` calls, each its own step.

        ``stacks=True`` records Python stacks: syncs and kernels carry the user's frames
        (it costs; see the README). None means the profiler's setting.
        """
        __tracebackhide__ = True
        if not isinstance(args, tuple):
            raise TypeError(f"args must be a tuple of positional arguments, got {type(args).__name__}")
        capture = capture_callable(
            fn,
            args,
            kwargs,
            warmup=self.warmup if warmup is None else warmup,
            calls=self.calls if calls is None else calls,
            no_grad=self.no_grad if no_grad is None else no_grad,
            allow_variation=self.allow_variation if allow_variation is None else allow_variation,
            stacks=self.stacks if stacks is None else stacks,
        )
        self.captures.append(capture)
        check_rules(capture.profile, self.forbid)
        return capture.profile

    @contextlib.contextmanager
    def record(self, *, allow_variation: bool | None = None, stacks: bool | None = None) -> Iterator[Recording]:
        """Profile a block: one call, or one per ``rec.step()``; ``rec.profile`` after the block."""
        variation = self.allow_variation if allow_variation is None else allow_variation
        with record_block(allow_variation=variation, stacks=self.stacks if stacks is None else stacks) as rec:
            yield rec
        self.captures.append(rec.capture)
        check_rules(rec.capture.profile, self.forbid)


def profile(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> KernelProfile:
    """Profile ``fn(*args, **kwargs)`` outside pytest, with the default warm-up and calls."""
    return Profiler()(fn, *args, **kwargs)


def load_trace(
    path: str | os.PathLike[str], *, allow_variation: bool = False, check_complete: bool = True
) -> KernelProfile:
    """A KernelProfile from a Chrome trace that torch.profiler exported (.json or .json.gz).

    Calls come from the ``ProfilerStep#N`` annotations; without any, the trace is one call.
    ``check_complete=False`` accepts a trace whose GPU records were partly lost (counts may
    then be short), for reading rather than asserting.
    """
    with paused_gc():
        source, events = events_from_trace_file(path)
        return build_profile(events, source, allow_variation=allow_variation, check_complete=check_complete)
