"""The entry points users call: a configurable profiler object and ``profile``.

A capture's session goes to ``build_profile`` here and nowhere else (a trace file's events in
``loading.py``).
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar, overload

from ..assemble import build_profile
from ..capture import CapturedSession, capture_callable, record_block
from ..capture.module_ranges import model_of
from ..checks.rules import Rule, check_rules
from ..checks.sweep import Check, ProfileSweep
from ..checks.sweep_cases import Cases
from ..decode import BUILT_IN, Decoder
from ..errors import ForbiddenError, LateTeachingWarning
from ..model import KernelProfile
from ..options import DEFAULT_CALLS, DEFAULT_WARMUP, DEFAULTS, ProfileOptions
from ..running import join
from ..tables import plural
from ..traces.records import paused_gc
from .captures import Capture, Recording, TraceCapture
from .forbid import forbid_rules
from .loading import read_sweep, read_trace, warn_unchecked
from .sweeps import DEFAULT_MAX_CASES, explore_cases, note, run_sweep

T = TypeVar("T")


class _Option(Generic[T]):
    """A profiler attribute that reads the field of its ``options`` of the same name; setting
    it replaces the options, validated as the constructor's argument is."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, profiler: None, owner: type) -> _Option[T]: ...
    @overload
    def __get__(self, profiler: Profiler, owner: type) -> T: ...
    def __get__(self, profiler: Profiler | None, owner: type) -> _Option[T] | T:
        if profiler is None:
            return self
        value: T = getattr(profiler.options, self._name)
        return value

    def __set__(self, profiler: Profiler, value: T) -> None:
        profiler.options = profiler.options.replace(**{self._name: value})


class _Rules(_Option[tuple[Rule, ...]]):
    """``forbid``: set from rule lines or ``Rule`` values, parsed as the constructor's are."""

    def __set__(self, profiler: Profiler, value: object) -> None:
        super().__set__(profiler, forbid_rules(value, profiler.decoder))


class Profiler:
    """Profiles callables with fixed defaults; the ``kernelprof`` fixture is one of these.

    ``profiler(fn, *args, **kwargs)`` forwards every extra argument to ``fn``; options go
    through :meth:`profile`. Each finished session is kept in ``captures`` (newest last) so
    the pytest plugin can show the kernel table of a failing test. Every profile is checked
    against ``forbid`` ([Suite-wide rules][suite-wide-rules]; the fixture passes the ini's
    ``kernelprof_forbid``) and raises :class:`ForbiddenError` when it breaks one.

    ``modules=True`` here (the fixture's ``--kernelprof-modules``) records module ranges where
    the profiled callable is an nn.Module and skips other callables; ``modules=True`` passed to
    :meth:`profile` insists on one.

    ``decoder`` decodes the kernels (None, the default: the built-in decoder): the fixture's
    knows the ini's ``kernelprof_kernels`` lines; :meth:`teach` adds to it for the profiles this
    profiler takes next.

    ``keep_traces=True`` keeps each profile's trace as its session ends, so that
    ``captures[i].export_trace(path)`` can write it after later profiles: torch writes a session's
    trace from buffers the next session takes, and an export that comes too late raises
    :class:`TraceNotKeptError` (under ``--kernelprof-trace-dir`` the plugin keeps them itself).

    The settings are held in ``options``, validated when the profiler is made; each of them
    is also an attribute (``profiler.calls``), and setting one replaces the options, validated
    as the constructor's argument is (``profiler.calls = 0`` raises a ``ValueError``).

    :vartype warmup: int
    :ivar warmup: Calls run before the profiled ones and not recorded (compiling, autotuning,
        allocator caches).
    :vartype calls: int
    :ivar calls: Calls profiled after the warm-up, each its own step (``prof.calls``).
    :vartype no_grad: bool
    :ivar no_grad: Run every call under ``torch.no_grad()``.
    :vartype allow_variation: bool
    :ivar allow_variation: Let the calls launch different kernel sequences (the profile is then
        ``varied``); otherwise such a profile raises ``KernelSequenceMismatchError`` with a diff.
    :vartype stacks: bool
    :ivar stacks: Record Python stacks, so that syncs and kernels carry the user's frames (it costs).
    :vartype modules: bool | nn.Module
    :ivar modules: True: record the module calls of a profiled nn.Module (other callables are
        profiled without); an nn.Module: record that module's calls, whatever the callable.
    :vartype forbid: tuple[Rule, ...]
    :ivar forbid: The rules every profile is checked against; set it from rule lines or ``Rule``
        values, as the constructor takes them.
    :vartype keep_traces: bool
    :ivar keep_traces: Keep each profile's trace as its session ends, for
        ``captures[i].export_trace(path)`` after later profiles.
    :vartype decoder: Decoder
    :ivar decoder: What decodes the kernels of the profiles taken or loaded from now on
        (:meth:`teach` replaces it with one that knows one more rule).
    :vartype options: ProfileOptions
    :ivar options: Every setting above, as one frozen value.
    :vartype captures: list[Capture]
    :ivar captures: Each finished session (``Capture``), newest last: its profile and its trace.
    """

    warmup = _Option[int]()
    calls = _Option[int]()
    no_grad = _Option[bool]()
    allow_variation = _Option[bool]()
    stacks = _Option[bool]()
    modules = _Option[Any]()
    forbid = _Rules()
    keep_traces = _Option[bool]()
    # How a warning names this profiler: its profiles held to none of the suite's rules (loading.py).
    _what = "a Profiler made in the test"

    def __init__(
        self,
        *,
        warmup: int = DEFAULT_WARMUP,
        calls: int = DEFAULT_CALLS,
        no_grad: bool = False,
        allow_variation: bool = False,
        forbid: Sequence[Rule | str] | str = (),
        stacks: bool = False,
        modules: bool = False,
        decoder: Decoder | None = None,
        keep_traces: bool = False,
    ) -> None:
        self.options = ProfileOptions(
            warmup=warmup,
            calls=calls,
            no_grad=no_grad,
            allow_variation=allow_variation,
            stacks=stacks,
            modules=modules,
            decoder=decoder,
            keep_traces=keep_traces,
        )
        self.forbid = forbid  # parsed with the decoder's families, once the options hold a valid one
        self.captures: list[Capture] = []
        join(self)  # made while a test runs: its profiles are that test's (running.py)

    @classmethod
    def from_options(cls, options: ProfileOptions) -> Profiler:
        """A profiler whose settings are ``options`` (what the plugin's fixture makes)."""
        profiler = cls()
        profiler.options = options
        return profiler

    def __repr__(self) -> str:
        # One line: pytest shows a failing test's fixtures by their repr ("kernelprof = ...").
        options = self.options
        # How profiles are taken says nothing about a loaded trace: a profiler that only loaded
        # traces leaves it out ("Profiler(1 profile loaded)").
        loaded_only = bool(self.captures) and all(isinstance(capture, TraceCapture) for capture in self.captures)
        parts = [] if loaded_only else [f"warmup={options.warmup}", f"calls={options.calls}"]
        parts += [f"{name}=True" for name in ("no_grad", "allow_variation", "stacks") if getattr(options, name)]
        if options.modules is not False:
            parts.append("modules=True" if options.modules is True else f"modules={type(options.modules).__name__}")
        for count, what in ((len(options.forbid), "forbid rule"), (len(self.decoder.taught), "taught rule")):
            if count:
                parts.append(plural(count, what))
        parts.append(_held(self.captures))
        return f"Profiler({', '.join(parts)})"

    @property
    def decoder(self) -> Decoder:
        return decoder_of(self.options)

    @decoder.setter
    def decoder(self, decoder: Decoder) -> None:
        self.options = self.options.replace(decoder=decoder)

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
        anything else the decoder knows, in the profiles this profiler takes or loads from now on
        (kernels are decoded when a profile is built)::

            kernelprof.teach("flash_fwd_*", kind="attention", family="flash-attn")

        Called after the profiler took or loaded a profile, it warns (:class:`LateTeachingWarning`):
        the profiles it holds keep their decoding.
        """
        __tracebackhide__ = True
        self.decoder = self.decoder.teach(
            pattern, kind=kind, family=family, dtype=dtype, layout=layout, part_of=part_of, origin=f"teach({pattern!r})"
        )
        if self.captures:
            warnings.warn(
                f"teach({pattern!r}) after {_held(self.captures)}: kernels are decoded when a profile is built, "
                "so the profiles already held keep their decoding; the rule decodes the profiles taken or "
                "loaded from now on. Teach before taking or loading the profile it is for",
                LateTeachingWarning,
                stacklevel=2,
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
        keep_traces: bool | None = None,
    ) -> KernelProfile:
        """Warm up ``warmup`` times, then profile ``calls`` calls, each its own step.

        ``stacks=True`` records Python stacks: syncs and kernels carry the user's frames
        (it costs; see the README). ``modules=True`` opens a range per module call of ``fn``
        (an nn.Module), so that ``prof.modules`` and ``Kernel.module`` say which module
        launched each kernel; ``modules=model`` does it for a function that calls ``model``.
        ``keep_traces=True`` keeps this profile's trace for an export after later profiles.
        None means the profiler's setting.
        """
        __tracebackhide__ = True
        if not isinstance(args, tuple):
            raise TypeError(f"args must be a tuple of positional arguments, got {type(args).__name__}")
        options = _given(
            self.options,
            warmup=warmup,
            calls=calls,
            no_grad=no_grad,
            allow_variation=allow_variation,
            stacks=stacks,
            modules=modules,
            keep_traces=keep_traces,
        )
        if modules is None and options.modules is True and not _is_model(fn):
            options = options.replace(modules=False)  # the profiler's own modules=True skips such a callable
        capture = capture_profile(fn, args, kwargs, options)
        self.captures.append(capture)
        check_rules(capture.profile, options.forbid)
        warn_unchecked(self._what, options.forbid, _PROFILER_REMEDY)
        return capture.profile

    def sweep(self, fn: Callable[..., Any], cases: Cases, *, keep_traces: bool = False) -> ProfileSweep:
        """Profile a callable per case: ``fn(**case)`` builds the case's inputs and returns the
        callable to profile (``return lambda: model(x)``), each profiled with this profiler's
        options (the warm-up calls compile for the case's shapes). ``cases`` is a list of dicts
        of keyword arguments, or a dict of each argument to its values (their product)::

            sweep = kernelprof.sweep(build, dict(batch=[1, 8, 17], hidden=[1024, 4096]))
            sweep.every(lambda prof: prof.kernels.count("triton_*gelu*mul*") == 1)

        ``keep_traces=True`` keeps each case's trace as it is profiled (a temporary file until the
        profile is released), for ``sweep.export(folder)``: torch loses a session's GPU records
        once later ones ran.
        """
        __tracebackhide__ = True
        return run_sweep(self, fn, cases, keep_traces=keep_traces)

    def explore(
        self,
        fn: Callable[..., Any],
        cases: Any,
        check: Check,
        *,
        max_cases: int = DEFAULT_MAX_CASES,
        deadline: float | None = None,
        seed: int | None = 0,
    ) -> ProfileSweep:
        """Search for a case that breaks ``check``, with Hypothesis drawing the cases from
        ``cases`` (a strategy of dicts, or a dict of each argument to its strategy), and fail
        with the smallest one it shrinks to, written as a case to pin in a sweep. Each new case
        is a profile, its compile included: ``max_cases`` profiled cases at most, shrinking
        included, and no new one after ``deadline`` seconds. ``seed`` fixes the cases drawn
        (None: others each run). Returns the sweep of the cases profiled where none broke it."""
        __tracebackhide__ = True
        return explore_cases(self, fn, cases, check, max_cases=max_cases, deadline=deadline, seed=seed)

    @contextlib.contextmanager
    def record(
        self, *, allow_variation: bool | None = None, stacks: bool | None = None, modules: object = None
    ) -> Iterator[Recording]:
        """Profile a block: one call, or one per ``rec.step()``; ``rec.profile`` after the block.
        ``modules=model`` opens a range per module call of ``model`` in the block."""
        __tracebackhide__ = True
        if modules is True:
            raise TypeError("record(modules=...) takes the nn.Module whose module calls to record")
        # The profiler's own modules setting is for profiled callables: a block records a model given here.
        options = _given(
            self.options, allow_variation=allow_variation, stacks=stacks, modules=False if modules is None else modules
        )
        with record_block(options) as block:
            rec = Recording(block, lambda session: build_capture(session, options))
            yield rec
        self.captures.append(rec.capture)
        check_rules(rec.capture.profile, options.forbid)
        warn_unchecked(f"record() of {self._what}", options.forbid, _PROFILER_REMEDY)

    def load_trace(
        self,
        path: str | bytes | os.PathLike[str] | os.PathLike[bytes],
        *,
        allow_variation: bool = False,
        check_complete: bool = True,
    ) -> KernelProfile:
        """:func:`load_trace`, held to this profiler's ``forbid`` rules and kept in ``captures``
        like a live profile: record on a GPU, assert in CPU CI under the suite's rules."""
        __tracebackhide__ = True
        path = os.fsdecode(path)  # as load_trace
        profile = read_trace(path, allow_variation=allow_variation, check_complete=check_complete, decoder=self.decoder)
        self.captures.append(TraceCapture(profile, None, path=path))
        check_rules(profile, self.options.forbid)
        warn_unchecked(f"load_trace({path!r}) of {self._what}", self.options.forbid, _PROFILER_REMEDY)
        return profile

    def load_sweep(self, path: str | os.PathLike[str], *, allow_variation: bool = False) -> ProfileSweep:
        """:func:`load_sweep`, each case's profile held to this profiler's ``forbid`` rules and
        kept in ``captures``: a sweep recorded on a GPU, checked in CPU CI under the suite's rules."""
        __tracebackhide__ = True
        sweep, captures = read_sweep(path, allow_variation=allow_variation, decoder=self.decoder)
        self.captures.extend(captures)
        for case in sweep:
            try:
                check_rules(case.profile, self.options.forbid)
            except ForbiddenError as exc:
                note(exc, f"raised for the loaded sweep's case {case.label}")
                raise
        warn_unchecked(
            f"load_sweep({os.fspath(path)!r}) of {self._what}", self.options.forbid, _PROFILER_REMEDY, "its profiles"
        )
        return sweep


_PROFILER_REMEDY = (
    "a Profiler holds its profiles to its own forbid= rules only. Use the kernelprof fixture "
    "(kernelprof(fn), kernelprof.profile(...)), which holds them"
)


def _held(captures: Sequence[Capture]) -> str:
    """``2 profiles taken``, ``1 profile loaded``, ``3 profiles: 2 taken, 1 loaded``: a trace that
    ``load_trace`` read is no profile taken, though the test's reports show it as one."""
    loaded = sum(isinstance(capture, TraceCapture) for capture in captures)
    taken = len(captures) - loaded
    if taken and loaded:
        return f"{plural(len(captures), 'profile')}: {taken} taken, {loaded} loaded"
    return f"{plural(len(captures), 'profile')} {'loaded' if loaded else 'taken'}"


def _given(options: ProfileOptions, **settings: object) -> ProfileOptions:
    """``options`` with the settings of one call that are not None (None: the profiler's)."""
    changes = {name: value for name, value in settings.items() if value is not None}
    return options.replace(**changes) if changes else options


def _is_model(fn: object) -> bool:
    import torch

    return model_of(fn, torch) is not None


def decoder_of(options: ProfileOptions) -> Decoder:
    """The decoder of ``options``: the built-in one where none was given."""
    decoder: Decoder = BUILT_IN if options.decoder is None else options.decoder
    return decoder


def capture_profile(
    fn: Callable[..., Any],
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
    options: ProfileOptions = DEFAULTS,
) -> Capture:
    """Capture ``fn`` (see ``capture.capture_callable``) and build its profile: a ``Capture``
    with the profile and the torch profiler, for trace export. ``options.decoder`` decodes
    the kernels (what the user taught, then the built-in evidence)."""
    __tracebackhide__ = True
    return build_capture(capture_callable(fn, args, kwargs, options), options)


def build_capture(session: CapturedSession, options: ProfileOptions = DEFAULTS) -> Capture:
    """The profile of a captured session, with what it takes to export its trace; of the
    options, ``allow_variation`` and ``decoder`` apply."""
    __tracebackhide__ = True
    with paused_gc():
        profile = build_profile(
            session.events,
            session.source,
            allow_variation=options.allow_variation,
            memory=session.memory,
            compile_facts=session.compile_facts,
            flagged_syncs=session.flagged_syncs,
            decoder=decoder_of(options),
        )
    return Capture(profile, session.torch_profiler, session.learned)


def profile(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> KernelProfile:
    """Profile ``fn(*args, **kwargs)`` with the default warm-up and calls: in a script, or in a
    test (whose reports then show the profile, as one of the ``kernelprof`` fixture)."""
    __tracebackhide__ = True
    profiler = Profiler()
    profiler._what = "pytest_kernelprof.profile(fn)"
    return profiler(fn, *args, **kwargs)
