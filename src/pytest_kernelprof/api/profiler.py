"""The entry points users call: a configurable profiler object and ``load_trace``.

The one place that assembles the pipeline: a capture's session or a trace file's events
go to ``build_profile`` here and nowhere else.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..assemble import build_profile, paused_gc
from ..capture import Capture, CapturedSession, Recording, capture_callable, record_block
from ..capture.module_ranges import resolve_model
from ..checks.rules import Rule, check_rules
from ..decode import BUILT_IN, Decoder
from ..errors import hide_own_errors
from ..model import KernelProfile
from ..options import DEFAULT_CALLS, DEFAULT_WARMUP, MAX_CALLS, MAX_CALLS_WHY
from ..paths import atomic_path
from ..traces.chrome import events_from_trace_file


class Profiler:
    """Profiles callables with fixed defaults; the ``kernelprof`` fixture is one of these.

    ``profiler(fn, *args, **kwargs)`` forwards every extra argument to ``fn``; options go
    through :meth:`profile`. Each finished session is kept in ``captures`` (newest last) so
    the pytest plugin can show the kernel table of a failing test. Every profile is checked
    against ``forbid`` (see ``checks/rules.py``; the fixture passes the ini's ``kernelprof_forbid``)
    and raises :class:`ForbiddenError` when it breaks one.

    ``modules=True`` here (the fixture's ``--kernelprof-modules``) records module ranges where
    the profiled callable is an nn.Module and skips other callables; ``modules=True`` passed to
    :meth:`profile` insists on one.

    ``decoder`` decodes the kernels: the fixture's knows the ini's ``kernelprof_kernels``
    lines; :meth:`teach` adds to it for the profiles this profiler takes next.
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
        modules: bool = False,
        decoder: Decoder = BUILT_IN,
    ) -> None:
        self.warmup = warmup
        self.calls = calls
        self.no_grad = no_grad
        self.allow_variation = allow_variation
        self.forbid = tuple(forbid)
        self.stacks = stacks
        self.modules = modules
        if not isinstance(decoder, Decoder):
            raise TypeError(f"decoder must be a pytest_kernelprof.Decoder, got {type(decoder).__name__}")
        self.decoder = decoder
        self.captures: list[Capture] = []

    def __call__(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> KernelProfile:
        __tracebackhide__ = True
        return self.profile(fn, args, kwargs)

    def teach(
        self,
        pattern: str,
        *,
        kind: str | None = None,
        family: str | None = None,
        dtype: str | None = None,
        layout: str | None = None,
        part_of: str | None = None,
    ) -> None:
        """Decode kernels whose name matches the glob ``pattern`` with these facts, before
        anything else the decoder knows, in the profiles this profiler takes from now on
        (kernels are decoded when a profile is built)::

            kernelprof.teach("flash_fwd_*", kind="attention", family="flash-attn")
        """
        __tracebackhide__ = True
        self.decoder = self.decoder.teach(
            pattern, kind=kind, family=family, dtype=dtype, layout=layout, part_of=part_of, origin=f"teach({pattern!r})"
        )

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
        modules: object = None,
    ) -> KernelProfile:
        """Warm up ``warmup`` times, then profile ``calls`` calls, each its own step.

        ``stacks=True`` records Python stacks: syncs and kernels carry the user's frames
        (it costs; see the README). ``modules=True`` opens a range per module call of ``fn``
        (an nn.Module), so that ``prof.modules`` and ``Kernel.module`` say which module
        launched each kernel; ``modules=model`` does it for a function that calls ``model``.
        None means the profiler's setting.
        """
        __tracebackhide__ = True
        if not isinstance(args, tuple):
            raise TypeError(f"args must be a tuple of positional arguments, got {type(args).__name__}")
        warmup = check_calls("warmup", self.warmup if warmup is None else warmup)
        calls = check_calls("calls", self.calls if calls is None else calls)
        model = _model(fn, self.modules if modules is None else modules, required=modules is not None)
        capture = capture_profile(
            fn,
            args,
            kwargs,
            warmup=warmup,
            calls=calls,
            no_grad=self.no_grad if no_grad is None else no_grad,
            allow_variation=self.allow_variation if allow_variation is None else allow_variation,
            stacks=self.stacks if stacks is None else stacks,
            model=model,
            decoder=self.decoder,
        )
        self.captures.append(capture)
        check_rules(capture.profile, self.forbid)
        return capture.profile

    @contextlib.contextmanager
    def record(
        self, *, allow_variation: bool | None = None, stacks: bool | None = None, modules: object = None
    ) -> Iterator[Recording]:
        """Profile a block: one call, or one per ``rec.step()``; ``rec.profile`` after the block.
        ``modules=model`` opens a range per module call of ``model`` in the block."""
        variation = self.allow_variation if allow_variation is None else allow_variation
        if modules is True:
            raise TypeError("record(modules=...) takes the nn.Module whose module calls to record")
        model = _model(None, False if modules is None else modules, required=True)
        with record_block(stacks=self.stacks if stacks is None else stacks, model=model) as rec:
            yield rec
        assert rec._session is not None  # set by record_block on its way out
        rec._capture = build_capture(rec._session, allow_variation=variation, decoder=self.decoder)
        self.captures.append(rec.capture)
        check_rules(rec.capture.profile, self.forbid)

    def load_trace(
        self, path: str | os.PathLike[str], *, allow_variation: bool = False, check_complete: bool = True
    ) -> KernelProfile:
        """:func:`load_trace`, held to this profiler's ``forbid`` rules and kept in ``captures``
        like a live profile: record on a GPU, assert in CPU CI under the suite's rules."""
        __tracebackhide__ = True
        profile = load_trace(path, allow_variation=allow_variation, check_complete=check_complete, decoder=self.decoder)
        self.captures.append(TraceCapture(profile, None, path=os.fspath(path)))
        check_rules(profile, self.forbid)
        return profile


def check_calls(name: str, value: int) -> int:
    """``value``, a count of calls passed as ``name``, if it is at most ``MAX_CALLS``; the
    type and the lower bound are capture's to check."""
    if isinstance(value, int) and value > MAX_CALLS:
        raise ValueError(f"{name} must be at most {MAX_CALLS}, got {value}: {MAX_CALLS_WHY}")
    return value


def _model(fn: object, modules: object, *, required: bool) -> Any | None:
    """``modules=``: True (the modules of ``fn``, an nn.Module), False, or the nn.Module to record."""
    if modules is False:  # the common case: no torch import here
        return None
    import torch

    return resolve_model(fn, modules, torch, required=required)


def capture_profile(
    fn: Callable[..., Any],
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    warmup: int = DEFAULT_WARMUP,
    calls: int = DEFAULT_CALLS,
    no_grad: bool = False,
    allow_variation: bool = False,
    stacks: bool = False,
    model: Any | None = None,
    decoder: Decoder = BUILT_IN,
) -> Capture:
    """Capture ``fn`` (see ``capture.capture_callable``) and build its profile: a ``Capture``
    with the profile and the torch profiler, for trace export. ``decoder`` decodes the
    kernels (what the user taught, then the built-in evidence)."""
    __tracebackhide__ = True
    session = capture_callable(
        fn, args, kwargs, warmup=warmup, calls=calls, no_grad=no_grad, stacks=stacks, model=model
    )
    return build_capture(session, allow_variation=allow_variation, decoder=decoder)


def build_capture(session: CapturedSession, *, allow_variation: bool = False, decoder: Decoder = BUILT_IN) -> Capture:
    """The profile of a captured session, with what it takes to export its trace."""
    __tracebackhide__ = True
    with paused_gc():
        profile = build_profile(
            session.events,
            session.source,
            allow_variation=allow_variation,
            memory=session.memory,
            compile_facts=session.compile_facts,
            flagged_syncs=session.flagged_syncs,
            decoder=decoder,
        )
    return Capture(profile, session.torch_profiler, session.learned)


def profile(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> KernelProfile:
    """Profile ``fn(*args, **kwargs)`` outside pytest, with the default warm-up and calls."""
    return Profiler()(fn, *args, **kwargs)


def load_trace(
    path: str | os.PathLike[str],
    *,
    allow_variation: bool = False,
    check_complete: bool = True,
    decoder: Decoder = BUILT_IN,
) -> KernelProfile:
    """A KernelProfile from a Chrome trace that torch.profiler exported (.json or .json.gz).

    Calls come from the ``ProfilerStep#N`` annotations; without any, the trace is one call.
    ``check_complete=False`` accepts a trace whose GPU records were partly lost (counts may
    then be short), for reading rather than asserting. ``decoder`` decodes the kernels
    (``Decoder().teach(...)`` for kernels the built-in evidence cannot place).
    """
    __tracebackhide__ = hide_own_errors  # a TraceError, a sequence mismatch: the message says it all
    if not isinstance(decoder, Decoder):
        raise TypeError(f"decoder must be a pytest_kernelprof.Decoder, got {type(decoder).__name__}")
    with paused_gc():
        source, events = events_from_trace_file(path)
        return build_profile(
            events,
            source,
            allow_variation=allow_variation,
            check_complete=check_complete,
            decoder=decoder,
            from_trace=True,
        )


@dataclass(frozen=True, kw_only=True)
class TraceCapture(Capture):
    """A profile read from a trace file: exported as a copy of that file, since no torch
    profiler holds its events; gzipped or not as the new name says."""

    path: str

    def export_trace(self, path: str | os.PathLike[str]) -> None:
        with open(self.path, "rb") as raw:
            packed = raw.read(2) == b"\x1f\x8b"
        with (
            atomic_path(path) as tmp,
            gzip.open(self.path, "rb") if packed else open(self.path, "rb") as src,
            gzip.open(tmp, "wb") if os.fspath(path).endswith(".gz") else open(tmp, "wb") as dst,
        ):
            shutil.copyfileobj(src, dst, 1 << 20)
