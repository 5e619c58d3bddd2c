"""What the builder refuses or warns about before it reads a profile: a trace that recorded
nothing, GPU records no call took, GPU records without their launch, launches without their
GPU record. A test tool that passes where it should fail is worse than none: a count read from
what the profiler lost must not pass ``assert prof.kernels.count() == 0`` or ``assert not
prof.syncs`` by accident.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Mapping, Sequence

from ..errors import IncompleteProfileError, IncompleteProfileWarning, hide_own_errors
from ..paths import callers_stacklevel
from ..tables import display_name, plural
from ..traces import RawEvent, Source
from .steps import RuntimeNames, Step

_ESCAPE = "load_trace(..., check_complete=False) reads it without this warning"


def check_recorded(events: Sequence[RawEvent], source: Source) -> None:
    """Refuse a trace that recorded nothing: no event the builder reads (CPU op, annotation,
    runtime call, Python frame, GPU record) and none of another accelerator's (``source.unread``).
    What is left is metadata (``"ph": "M"``, ``deviceProperties``) and the profiler's own span
    (a ``"Trace"`` event, which torch writes for a session that ran nothing): read on, it would
    be one call of no op, and ``"aten::mm" not in prof.ops`` would pass on what was not measured.

    ``check_complete=False`` does not lift it: that reads what a lossy trace holds, and this one
    holds nothing. A live session always records its ``ProfilerStep`` marks; one that does not
    (``source.gpu_requested`` false: a CPU-only capture) is left to the profile's own errors."""
    __tracebackhide__ = hide_own_errors
    if events or source.unread or not source.gpu_requested:
        return
    raise IncompleteProfileError(
        f"{source.label}: the trace recorded nothing: it holds no CPU op, annotation, runtime call or GPU "
        "record (no complete 'X' event of the categories torch.profiler records work in; only metadata, "
        "if anything), so every count would read as 0 and the profile is refused. Export the trace after "
        "the profiled code ran inside the torch.profiler session, with ProfilerActivity.CPU (and CUDA), "
        "and keep its events."
    )


def check_records_complete(
    steps: list[Step], gpu_events: Sequence[RawEvent], runtime_names: RuntimeNames, launched: Mapping[int, RawEvent]
) -> None:
    """Refuse a profile whose counts would be wrong, and warn (``IncompleteProfileWarning``) of
    one whose counts may be.

    Refused: most GPU records in no call (a record joins the call whose ``ProfilerStep`` range
    holds its launch: those outside every range would read as missing); GPU records none of
    which has a launch record (``launched``, the runtime calls by correlation id): a trace
    without its CPU side, where launches and host syncs would read as none; a launch recorded
    on the CPU side with no GPU record (the profiler lost it).

    Warned: some GPU records in no call (a ``ProfilerStep`` range lost, or launches between the
    steps), some without a launch record (launched from a thread the profiler did not trace: each
    joins the call begun before it ran, and its launch, launching op and host syncs are not
    seen). The recordings of tests/data (H100 and H200 traces, CPU ones of torch 2.4 to 2.14,
    the live Kineto events replayed) have none of either: no legitimate record is left out, so
    any is a loss. Refusals come first: under
    ``filterwarnings = error`` a warning would take their place."""
    __tracebackhide__ = hide_own_errors
    taken = [g for step in steps for _, g in step.gpu]
    left = len(gpu_events) - len(taken)
    if left > len(taken):
        listing, why = _not_taken(steps, gpu_events, taken)
        raise IncompleteProfileError(
            f"no profiled call took {left} of the {len(gpu_events)} GPU records of the trace ({listing}): {why}. "
            "The kernels and copies would read as missing, so the profile is refused. Profile with "
            "torch.profiler's schedule and prof.step() around each call, and keep every event and its 'dur'; "
            "load_trace(..., check_complete=False) reads the calls' records anyway."
        )
    orphans = [g for g in taken if g.correlation not in launched]
    if orphans and len(orphans) == len(taken):
        raise IncompleteProfileError(
            f"the trace lacks its CPU side: none of the {len(taken)} GPU records of the profiled calls has "
            f"a launch record (no 'cuda_runtime' or 'cuda_driver' event of their correlation id: {_names(orphans)}), "
            "so launches and host syncs would read as none; the profile is refused. Profile with "
            "ProfilerActivity.CPU beside CUDA and keep every event of the trace; "
            "load_trace(..., check_complete=False) reads its kernels anyway."
        )
    recorded = {g.correlation for g in gpu_events}
    launches = [r for step in steps for r in step.runtime if runtime_names[r.name][0]]
    lost = [r for r in launches if r.correlation not in recorded]
    if lost:
        names = Counter(r.name for r in lost)
        listing = ", ".join(f"{n} x{c}" for n, c in names.most_common())
        raise IncompleteProfileError(
            f"the profiler lost GPU records: {len(lost)} of {len(launches)} kernel launches recorded on the "
            f"CPU side have no GPU record ({listing}). The counts would be wrong, so the profile is refused. "
            "Synchronize before the profiler stops, or raise the CUPTI buffer size; rerun to see if it persists."
        )
    if left:
        listing, why = _not_taken(steps, gpu_events, taken)
        _warn(
            f"no profiled call took {left} of the {len(gpu_events)} GPU records of the trace ({listing}): {why}. "
            "They are in no call's kernels or copies, so counts may be short. Profile with torch.profiler's "
            f"schedule and prof.step() around each call, and keep every event; {_ESCAPE}."
        )
    if orphans:
        _warn(
            f"{len(orphans)} of the {len(taken)} GPU records of the profiled calls have no launch record (no "
            f"'cuda_runtime' or 'cuda_driver' event of their correlation id: {_names(orphans)}): the profiler lost "
            "them, or did not trace the thread that launched them. Their launches, launching ops and host syncs "
            "are not seen, so launch and sync counts may be short. Profile with ProfilerActivity.CPU beside "
            f"CUDA and keep every event of the trace; {_ESCAPE}."
        )


def _names(records: Sequence[RawEvent]) -> str:
    seen = Counter(display_name(g.name) for g in records).most_common(3)
    return ", ".join(f"{n} x{c}" for n, c in seen)


def _not_taken(steps: list[Step], gpu_events: Sequence[RawEvent], taken: list[RawEvent]) -> tuple[str, str]:
    """The names of the GPU records no call took, and why they were not."""
    kept = {id(g) for g in taken}
    listing = _names([g for g in gpu_events if id(g) not in kept])
    if all(step.start == step.end for step in steps):
        why = (
            f"every one of its {plural(len(steps), 'ProfilerStep range')} lasts 0 us (a trace written without "
            "its events' 'dur'), so no launch falls inside a call"
        )
    else:
        why = (
            "their launches fall outside every profiled call's ProfilerStep range (a call's range missing, "
            "launched between the profiled steps or before the first: the trace's CPU side and GPU side do not match)"
        )
    return listing, why


def _warn(message: str) -> None:
    """Warn at the first frame outside pytest_kernelprof: the user's line that loaded or captured."""
    __tracebackhide__ = True  # under filterwarnings = error the warning is raised here
    warnings.warn(message, IncompleteProfileWarning, stacklevel=callers_stacklevel())
