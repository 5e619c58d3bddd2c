"""What the GPU did while a call's host code ran: the one-line account of host span, busy and
work time, and how much communication ran under compute (``Overlap``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..tables import format_share, format_us, printable
from .kernels import Kernel

if TYPE_CHECKING:
    from .profiles import CallProfile, KernelProfile


@dataclass(frozen=True)
class Overlap:
    """How much communication time ran while compute kernels ran on the GPU."""

    communication_us: float
    hidden_us: float

    @property
    def exposed_us(self) -> float:
        return self.communication_us - self.hidden_us

    @property
    def fraction(self) -> float:
        """Hidden share of communication time, 0 to 1 (1.0 when there was no communication)."""
        return self.hidden_us / self.communication_us if self.communication_us > 0 else 1.0

    def __repr__(self) -> str:
        return (
            f"Overlap({format_us(self.hidden_us)} of {format_us(self.communication_us)}us communication "
            f"hidden under compute: {self.fraction:.0%})"
        )


def gpu_time_line(view: CallProfile | KernelProfile) -> str:
    """``host span 223.3us, GPU busy 139.4us within it (idle 38%), GPU work 235.6us in all (96.2us after
    the host returned)``: the host span, the GPU's busy time within it, and all the GPU time of the
    call's work, which runs on after the host returns where the call ends by launching (so
    back-to-back kernels can read as idle). The part after the host returned is said where there
    is one: without it, kernel time above the host span and "busy" below kernel time read as
    contradictions."""
    after = view.gpu_work_us - view.gpu_busy_us
    ran_on = f" ({format_us(after)}us after the host returned)" if round(after, 1) > 0 else ""
    return (
        f"host span {format_us(view.wall_us)}us, GPU busy {format_us(view.gpu_busy_us)}us within it "
        f"(idle {format_share(view.gpu_idle_fraction)}), GPU work {format_us(view.gpu_work_us)}us in all{ran_on}"
    )


def call_line(view: CallProfile) -> str:
    """``4 launches, 222.8us in kernels, host span ...``: a call's launches, its time in kernels
    and :func:`gpu_time_line`, as ``kernelprof show`` and the timeline page lead with them."""
    graphs = f" ({view.graph_launches} graph)" if view.graph_launches else ""
    launches = f"{view.launches} launch{'' if view.launches == 1 else 'es'}{graphs}"
    return f"{launches}, {format_us(view.kernels.total_us)}us in kernels, {gpu_time_line(view)}"


def memory_ops_line(view: CallProfile, whose: str = "", *, call: int | None = None) -> str:
    """``memory ops per call: Memset (Device) x2``: one call's memcpys and memsets by name, as a
    profile's section (a failure's) lists them, in the words of ``kernelprof diff``'s ``memsets
    per call`` (a trial read ``memory ops:`` in one output and ``memory ops per call:`` in another).
    ``whose``: a note after ``per call`` that names the call where the calls made different ones.
    ``call``: the number of the one call shown, which ``kernelprof show`` and the timeline page
    name (``memory ops in call 1:``, as their kernel tables' ``call 1 us``): "per call" under a
    ``call 0:`` heading read wrong (a trial)."""
    named = Counter(m.name for m in view.memory_ops)
    listed = ", ".join(f"{printable(name)} x{count}" for name, count in sorted(named.items()))
    return f"{'memory ops per call' + whose if call is None else f'memory ops in call {call}'}: {listed or 'none'}"


def inductor_dtype_note(kernels: Sequence[Kernel]) -> str | None:
    """Why an Inductor kernel's dtype reads ``?``, where one does: a trace recorded before the
    plugin read them, or without it (a newcomer read the recorded samples' ``?`` as dtype questions
    failing on compiled code). What ``kernelprof show`` and the timeline page say under the table."""
    rows = [k for k in kernels if k.family == "inductor" and k.dtype is None]
    undated = {k.name for k in rows}
    if not undated:
        return None
    # Names, and the rows where they differ: a trial counted 13 rows of "?" against "2 Inductor kernels".
    count = f"{len(undated)} Inductor kernel name{'' if len(undated) == 1 else 's'}"
    if len(rows) != len(undated):
        count += f" ({len(rows)} kernels)"
    # What to do, in one line (the whole story, signatures read live and kept in saved traces, made
    # 330 characters: a trial); said here, not by a pointer to docs/, which a wheel has none of.
    return (
        f"dtype ?: this trace has no dtype for {count}; a trace the plugin saves from a live profile keeps "
        f"{'its dtype' if len(undated) == 1 else 'their dtypes'} "
        "(--kernelprof-trace-dir, kernelprof.captures[i].export_trace(path))"
    )


def _union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def overlap_of(kernels: Sequence[Kernel]) -> Overlap:
    """Communication kernels' time, and the part of it covered by other kernels' time."""
    __tracebackhide__ = True
    comm = _union(
        [
            (k.start_us, k.start_us + k.duration_us)
            for k in kernels
            if k.kind == "communication" and k.start_us is not None
        ]
    )
    compute = _union(
        [
            (k.start_us, k.start_us + k.duration_us)
            for k in kernels
            if k.kind != "communication" and k.start_us is not None
        ]
    )
    total = sum(end - start for start, end in comm)
    hidden = 0.0
    j = 0
    for start, end in comm:
        while j < len(compute) and compute[j][1] <= start:
            j += 1
        k = j
        while k < len(compute) and compute[k][0] < end:
            hidden += min(end, compute[k][1]) - max(start, compute[k][0])
            k += 1
    return Overlap(total, hidden)
