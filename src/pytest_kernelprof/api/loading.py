"""Profiles from files: ``load_trace`` (a Chrome trace torch.profiler exported) and ``load_sweep``
(the folder ``ProfileSweep.export`` wrote), and the warning that a profile taken or loaded in a
test was held to none of the suite's rules.

The suite's ``kernelprof_forbid`` rules are the fixture's: its profiler holds every profile to
them. A profile made without it (these functions, ``pytest_kernelprof.profile``, a ``Profiler``
the test made) would pass a rule it breaks in silence, so in a test that such rules hold it
warns with ``UncheckedProfileWarning`` (an error under ``filterwarnings = error``).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable

from ..assemble import build_profile
from ..checks.rules import Rule
from ..checks.sweep import ProfileSweep, SweepCase, read_index
from ..decode import BUILT_IN, Decoder
from ..errors import UncheckedProfileWarning, hide_own_errors
from ..model import KernelProfile
from ..paths import callers_stacklevel
from ..running import keep, suite_rules
from ..traces.chrome import events_from_trace_file
from ..traces.records import paused_gc
from .captures import TraceCapture


def warn_unchecked(what: str, checked: Iterable[Rule], remedy: str, profiles: str = "the profile") -> None:
    """Warn, at the user's line, where the running test is held to suite rules that ``what``
    (``load_trace('a.json.gz')``) did not hold ``profiles`` to; ``checked``: the rules it did;
    ``remedy``: what to use instead. Nothing outside a test, or where every rule was checked."""
    __tracebackhide__ = True  # under filterwarnings = error, raised here: the user's line is the one
    held = {rule.name for rule in checked}
    unchecked = [name for name in suite_rules() if name not in held]
    if not unchecked:
        return
    warnings.warn(
        f"{what} checked {profiles} against none of the suite's kernelprof_forbid rules "
        f"({', '.join(unchecked)}): {remedy}, or exempt the test from a rule with "
        "@pytest.mark.kernelprof_allow(name).",
        UncheckedProfileWarning,
        stacklevel=callers_stacklevel(),
    )


def load_trace(
    path: str | bytes | os.PathLike[str] | os.PathLike[bytes],
    *,
    allow_variation: bool = False,
    check_complete: bool = True,
    decoder: Decoder | None = None,
) -> KernelProfile:
    """A KernelProfile from a Chrome trace that torch.profiler exported (.json or .json.gz).

    Calls come from the ``ProfilerStep#N`` annotations; without any, the trace is one call.
    ``check_complete=False`` accepts a trace whose GPU records were partly lost (counts may
    then be short), for reading rather than asserting. ``decoder`` decodes the kernels
    (``Decoder().teach(...)`` for kernels the built-in evidence cannot place; None, the
    default: the built-in decoder).

    In a test, the profile goes into the test's reports (a failure's kernel tables, the job
    summary, JUnit) as one of the ``kernelprof`` fixture does; the fixture's
    ``kernelprof.load_trace`` also holds it to the suite's ``kernelprof_forbid`` rules. This one
    checks no rule: in a test that such rules hold it warns with ``UncheckedProfileWarning``.
    """
    __tracebackhide__ = hide_own_errors  # a TraceError, a sequence mismatch: the message says it all
    path = os.fsdecode(path)  # a path as bytes (os.listdir(b".")) is one, as open() takes it
    profile = read_trace(path, allow_variation=allow_variation, check_complete=check_complete, decoder=decoder)
    keep(TraceCapture(profile, None, path=path))
    warn_unchecked(
        f"load_trace({path!r})",
        (),
        "pytest_kernelprof.load_trace holds a trace to no rule. Use the kernelprof fixture's "
        "kernelprof.load_trace(path), which checks them",
    )
    return profile


def load_sweep(
    path: str | os.PathLike[str], *, allow_variation: bool = False, decoder: Decoder | None = None
) -> ProfileSweep:
    """The sweep that ``ProfileSweep.export(folder)`` wrote: ``path`` is the folder or its
    ``sweep.json``. Each case's profile is its trace's (see :func:`load_trace`; ``decoder`` as
    there, None the built-in one), and what torch.compile compiled in each case is the index's;
    in a test, each profile goes into the test's reports as one of :func:`load_trace` does. This
    one checks no rule (the fixture's ``kernelprof.load_sweep`` does): in a test that suite rules
    hold it warns as ``load_trace`` does."""
    __tracebackhide__ = hide_own_errors
    sweep, captures = read_sweep(path, allow_variation=allow_variation, decoder=decoder)
    for capture in captures:
        keep(capture)
    warn_unchecked(
        f"load_sweep({os.fspath(path)!r})",
        (),
        "pytest_kernelprof.load_sweep holds its cases to no rule. Use the kernelprof fixture's "
        "kernelprof.load_sweep(path), which checks them",
        "its profiles",
    )
    return sweep


def read_sweep(
    path: str | os.PathLike[str], *, allow_variation: bool = False, decoder: Decoder | None = None
) -> tuple[ProfileSweep, list[TraceCapture]]:
    """:func:`load_sweep` without keeping its profiles: the sweep, and a capture per case."""
    __tracebackhide__ = hide_own_errors
    cases, captures = [], []
    for indexed in read_index(path):
        profile = read_trace(indexed.trace, allow_variation=allow_variation, decoder=decoder)
        capture = TraceCapture(profile, None, path=os.fspath(indexed.trace))
        captures.append(capture)
        cases.append(SweepCase(indexed.params, profile, indexed.compiled, export=capture.export_trace))
    return ProfileSweep(cases, source=os.fspath(path)), captures


def read_trace(
    path: str | os.PathLike[str],
    *,
    allow_variation: bool = False,
    check_complete: bool = True,
    decoder: Decoder | None = None,
) -> KernelProfile:
    """:func:`load_trace` without keeping the profile for the running test's reports."""
    __tracebackhide__ = hide_own_errors
    if decoder is None:
        decoder = BUILT_IN
    elif not isinstance(decoder, Decoder):
        raise TypeError(f"decoder must be a pytest_kernelprof.types.Decoder or None, got {type(decoder).__name__}")
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
