"""What one call asked of the CUDA runtime: runtime calls, host syncs and copies, and what
would remove them."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..decode.sync_calls import DIRECTIONS, HOST_MEMORY, SYNC_KINDS, api_name, memcpy_kind
from ..errors import QueryError
from ..tables import format_us, nearest, printable, render_table
from .kernels import MemoryOp
from .measured import _Measured, _Records, needs_measurement


class RuntimeCalls(_Measured, Mapping[str, int]):
    """CUDA runtime and driver calls of one call, by name, with their counts.

    Where the profile recorded no GPU activity and no runtime call, nothing could be
    measured: every read raises :class:`NoDeviceActivityError`, so that "no launches" or
    ``"cudaStreamSynchronize" not in prof.runtime`` never passes because nothing was seen.
    """

    __slots__ = ("_counts",)

    def __init__(self, counts: Mapping[str, int] | None = None, *, unavailable: str | None = None) -> None:
        self._counts = dict(counts or {})
        self._unavailable = None if self._counts else unavailable

    @needs_measurement
    def _read(self) -> dict[str, int]:
        return self._counts

    def __getitem__(self, name: str) -> int:
        __tracebackhide__ = True
        return self._read()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())

    def __repr__(self) -> str:
        if self._unavailable is not None:
            return "RuntimeCalls(unmeasured: no GPU activity recorded)"
        return f"RuntimeCalls({self._counts!r})"


class Count(int):
    """A count from ``SyncList.count``/``CopyList.count``: an int that remembers what it
    counted, so that a failed ``assert prof.copies.count(direction="DtoH") == 0`` shows them,
    in the words a kernel count uses (``copies.count(direction='DtoH') matched 1 of 1 copies``)."""

    query: str  # the call that counted: "copies.count(direction='DtoH')"
    noun: str  # what it counted among: "host syncs", "copies"
    total: int  # how many there were to count
    table: str
    fixes: list[str]  # what would remove the counted records, one line each
    times: str | None = None  # whose times the table holds, where several calls gave them

    def __new__(cls, value: int, query: str, noun: str, total: int, table: str, fixes: Sequence[str] = ()) -> Count:
        count = super().__new__(cls, value)
        count.query, count.noun, count.total = query, noun, total
        count.table = table
        count.fixes = list(fixes)
        return count

    def explain(self) -> list[str]:
        head = f"{self.query} matched {int(self)} of {self.total} {self.noun}"
        if self.times:
            head += f" (times: {self.times})"
        return [head, *self.table.splitlines(), *_fix_lines(self.fixes)]


FIX_PREFIX = "to fix: "  # what each line that says what would remove records starts with


def _fix_lines(fixes: Sequence[str]) -> list[str]:
    return [FIX_PREFIX + fix for fix in fixes]


@dataclass(frozen=True)
class Sync:
    """A host call of one profiled call that blocks until the GPU has caught up.

    ``call`` is the runtime/driver API as recorded (``cudaStreamSynchronize``), ``kind`` one
    of ``"stream"``, ``"device"``, ``"event"``, ``"copy"``; ``ops`` the CPU ops and user
    ranges around the call, outermost first (``("aten::item", "aten::_local_scalar_dense")``),
    ``op`` the innermost of them, both empty/None for a ``torch.cuda.synchronize()`` outside
    any range. ``duration_us`` is the host time spent in the call, ``start_us`` its start
    from the start of the profiled call. ``memcpy`` names the GPU record of a ``copy``.
    With ``stacks=True``: ``stack``, the user's Python frames around the call, outermost
    first, as the profiler names them (``"test_train.py(40): train_step"``: the line is
    the function's *def* line), and ``line``, the exact ``file:line`` of the call where
    torch's sync debug mode flagged it (live profiles only; None where it did not).
    """

    call: str
    kind: str
    op: str | None
    ops: tuple[str, ...]
    duration_us: float
    start_us: float = 0.0
    memcpy: str | None = None
    stack: tuple[str, ...] | None = None
    line: str | None = None

    @property
    def where(self) -> str | None:
        """The best location known: the flagged line, else the innermost user frame."""
        if self.line is not None:
            return self.line
        return self.stack[-1] if self.stack else None

    def __repr__(self) -> str:
        chain = " > ".join(self.ops) or "no op"
        where = f" at {self.where}" if self.where else ""
        return printable(f"Sync({self.kind} {self.call} {format_us(self.duration_us)}us in {chain}{where})")


def _check_choice(what: str, value: str | None, choices: Sequence[str], whats: str | None = None) -> None:
    __tracebackhide__ = True
    if value is not None and value not in choices:
        raise QueryError(f"unknown {what} {value!r}; the {whats or what + 's'} are: {', '.join(choices)}")


# The runtime and driver calls a host sync is recorded as (sync_calls.sync_kind): a call
# pattern that names none of them and no recorded sync is a typo, which would count 0.
SYNC_CALLS = (
    "cudaStreamSynchronize",
    "cuStreamSynchronize",
    "cudaDeviceSynchronize",
    "cuCtxSynchronize",
    "cudaEventSynchronize",
    "cuEventSynchronize",
    "cudaMemcpy",
    "cudaMemcpyAsync",
    "cuMemcpyDtoH",
    "cuMemcpyHtoD",
    "cuMemcpyDtoHAsync",
    "cuMemcpyHtoDAsync",
)
_COPY_CALLS = ("cudaMemcpy", "cuMemcpy")


def _check_sync_call(call: str | None, syncs: Sequence[Sync]) -> None:
    __tracebackhide__ = True
    if call is None or any(char in call for char in "*?[") or api_name(call) in SYNC_CALLS:
        return
    if api_name(call).startswith(_COPY_CALLS) or any(api_name(s.call) == api_name(call) for s in syncs):
        return
    close = nearest(call, dict.fromkeys([*SYNC_CALLS, *(api_name(s.call) for s in syncs)]), n=3)
    hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
    raise QueryError(
        f"syncs.count({call!r}): no CUDA call that syncs the host has that name{hint}; "
        f"the calls are: {', '.join(SYNC_CALLS)}, or a glob ('cuda*Synchronize')"
    )


def _filters(**given: Any) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in given.items() if v is not None)


# ``kind`` is ``Sync.kind`` as ``count(kind=...)`` takes it; a copy's direction and host memory
# have a column of their own (a trial read "copy DtoH pageable" and asked for that kind).
# "runtime call": the CUDA API the host waited in, as prof.runtime names them; "call" alone read as
# the profiled call whose number heads the time column (a trial).
SYNC_COLUMNS = ("runtime call", "kind", "copy", "host us", "ops", "where")


def sync_cells(s: Sync) -> tuple[str, ...]:
    """A sync's ``SYNC_COLUMNS`` as every sync table shows them (the timeline page's too)."""
    copy = " ".join(filter(None, memcpy_kind(s.memcpy))) if s.memcpy is not None else ""
    return (s.call, s.kind, copy or "-", format_us(s.duration_us), " > ".join(s.ops) or "-", s.where or "-")


def sync_table(syncs: Sequence[Sync], *, call: int | None = None) -> str:
    """The syncs as a table; ``call``: the number of the call whose own times they are, which
    the time column names (``call 1 host us``), as a kernel table's ``call 1 us``."""
    rows = [(str(i), *sync_cells(s)) for i, s in enumerate(syncs)]
    columns = (*SYNC_COLUMNS[:3], call_column(SYNC_COLUMNS[3], call), *SYNC_COLUMNS[4:])
    return render_table(("#", *columns), rows, right=(0, 4))


def call_column(header: str, call: int | None) -> str:
    """A time column's header, naming the call whose own times it holds where that is known:
    ``call 1 gpu us`` beside ``kernelprof show``'s ``call 1 us``."""
    return header if call is None else f"call {call} {header}"


# Ops in which the host reads a GPU value: the sync is the read itself.
_HOST_READS = frozenset(
    ("aten::item", "aten::_local_scalar_dense", "aten::is_nonzero", "aten::nonzero", "aten::masked_select")
)
_HOST_COPIES = frozenset(("aten::copy_", "aten::_to_copy"))
_PINNED_COPY = "copy into pinned host memory (t.pin_memory(), or pin_memory=True) with non_blocking=True"
_PAGEABLE_COPY = f"a copy to or from pageable memory blocks the host: {_PINNED_COPY}"
# What would remove a sync, by cause. A copy's is said as the copies' failures say it: a copy of
# pageable host memory blocks the host whether it was asked non_blocking or not (a trial read
# "copy non_blocking=True" for a copy that already was).
_SYNC_FIXES = {
    "copy": _PAGEABLE_COPY,
    "read": "the host read a GPU value (.item(), bool(t), nonzero, boolean-mask indexing): keep it on the GPU "
    "(torch.where, masks as multipliers) or read it once per step",
    "device": "torch.cuda.synchronize() waits for the whole GPU: drop it from the step (time with CUDA events)",
    "event": "event.synchronize() blocks the host: make a stream wait instead (stream.wait_event(event))",
    "stream": "a stream synchronize: profile with stacks=True to see the line that waits",
}


def _sync_causes(syncs: Sequence[Sync]) -> list[str]:
    causes: list[str] = []
    for s in syncs:
        if s.kind in ("copy", "device", "event"):
            cause = s.kind
        elif _HOST_READS.intersection(s.ops):
            cause = "read"
        else:  # a stream sync: inside a copy to the host, that copy's
            cause = "copy" if _HOST_COPIES.intersection(s.ops) else "stream"
        if cause not in causes:
            causes.append(cause)
    return causes


def sync_fixes(syncs: Sequence[Sync]) -> list[str]:
    """What would remove the syncs, one line per cause, for failure messages."""
    return [_SYNC_FIXES[cause] for cause in _sync_causes(syncs)]


_DTOH_COPY = "a DtoH copy reads GPU results on the host: keep them on the GPU, or read them once per step"


def copy_fixes(copies: Sequence[MemoryOp]) -> list[str]:
    """What would remove the copies' cost to the host, for failure messages."""
    fixes: list[str] = []
    if any(c.host_memory == "pageable" for c in copies):
        fixes.append(_PAGEABLE_COPY)
    if any(c.direction == "DtoH" for c in copies):
        fixes.append(_DTOH_COPY)
    return fixes


def advice(syncs: Sequence[Sync] = (), copies: Sequence[MemoryOp] = ()) -> list[str]:
    """What would remove ``syncs`` and the cost of ``copies``, a ``to fix:`` line per cause, each
    said once: the lines a failure prints under their tables."""
    fixes = sync_fixes(syncs)
    said = set(fixes)
    if _SYNC_FIXES["read"] in said:  # the host's read of a GPU value is its DtoH copy: said already
        said.add(_DTOH_COPY)
    return _fix_lines([*fixes, *(fix for fix in copy_fixes(copies) if fix not in said)])


class SyncList(_Records[Sync]):
    """The host syncs of one call, in time order (see :class:`Sync`). ``call``: the number of
    that call, which its table's time column names (``call 1 host us``), as ``kernelprof show``'s
    does: a trial read the same header over a failure's table and ``prof.syncs``' as two kinds of
    figure."""

    __slots__ = ("call",)
    _noun = "host syncs"

    def __init__(self, items: Sequence[Sync] = (), *, unavailable: str | None = None, call: int | None = None) -> None:
        super().__init__(items, unavailable=unavailable)
        self.call = call

    def _like(self, items: Sequence[Sync]) -> SyncList:
        return SyncList(items, call=self.call)

    def count(self, call: str | None = None, *, kind: str | None = None) -> Count:
        """How many syncs are of API ``call`` (a glob, or the name without Kineto's ``_v...``
        suffix) and ``kind``; all of them when both are None."""
        __tracebackhide__ = True
        _check_choice("sync kind", kind, SYNC_KINDS)
        _check_sync_call(call, self._items())
        found = [
            s
            for s in self._items()
            if (kind is None or s.kind == kind)
            and (call is None or api_name(s.call) == call or fnmatch.fnmatchcase(s.call, call))
        ]
        query = f"syncs.count({_filters(call=call, kind=kind)})"
        table = self._table(found) if found else self.table()
        return Count(len(found), query, "host syncs", len(self._loaded()), table, sync_fixes(found))

    def fix_lines(self) -> list[str]:
        """What would remove the syncs, a ``to fix:`` line per cause: printed under their table
        (the repr, which pytest prints twice for ``assert not prof.syncs``, says none)."""
        __tracebackhide__ = True
        return advice(syncs=self._items())

    def _table(self, items: Sequence[Sync]) -> str:
        return sync_table(items, call=self.call)

    def _summary(self, item: Sync) -> str:
        # Short: pytest prints ``assert not prof.syncs`` with this line twice (the assertion and
        # its "where"); the table (``table()``) has the rest.
        where = item.where or item.op or "no op"
        return f"{item.call} at {where}" if item.where else f"{item.call} in {where}"


COPY_COLUMNS = ("direction", "host mem", "bytes", "gpu us", "op", "name")


def copy_cells(c: MemoryOp) -> tuple[str, ...]:
    """A copy's ``COPY_COLUMNS`` as every copy table shows them (the timeline page's too)."""
    nbytes = "-" if c.bytes is None else str(c.bytes)
    return (c.direction or "-", c.host_memory or "-", nbytes, format_us(c.duration_us), c.op or "-", c.name)


def copy_table(copies: Sequence[MemoryOp], *, medians: bool = False, call: int | None = None) -> str:
    """The copies as a table; its time column says whose times it holds, as a kernel table's
    does: ``median gpu us`` where ``medians`` (each copy's median over the calls), ``call 1 gpu
    us`` where they are the own times of the call numbered ``call`` (``kernelprof show``'s),
    ``gpu us`` where they are one call's own and the table does not know which (a trial saw
    205.7 in a failure and 211.3 in ``kernelprof show`` for one copy, both under ``gpu us``)."""
    rows = [(str(i), *copy_cells(c)) for i, c in enumerate(copies)]
    time = "median gpu us" if medians else call_column(COPY_COLUMNS[3], call)
    columns = (*COPY_COLUMNS[:3], time, *COPY_COLUMNS[4:])
    return render_table(("#", *columns), rows, right=(0, 3, 4))


class CopyList(_Records[MemoryOp]):
    """The memcpys of one call, in launch order (memsets are in ``memory_ops`` only)."""

    __slots__ = ("medians", "times")
    _noun = "copies"

    def __init__(
        self,
        items: Sequence[MemoryOp] = (),
        *,
        unavailable: str | None = None,
        times: str | None = None,
        medians: bool = False,
    ) -> None:
        super().__init__(items, unavailable=unavailable)
        # Whose times the copies are, where a profile of several calls gave them
        # ("each one's median over the 3 calls"): a failure's table says so above it, and
        # its header says "median gpu us" where they are ``medians``.
        self.times = times
        self.medians = medians

    def count(self, direction: str | None = None, *, host_memory: str | None = None) -> Count:
        """How many copies go in ``direction`` and touch ``host_memory``; all when both are None."""
        __tracebackhide__ = True
        _check_choice("direction", direction, DIRECTIONS)
        _check_choice("host memory", host_memory, HOST_MEMORY, "host memories")
        found = [
            c
            for c in self._items()
            if (direction is None or c.direction == direction) and (host_memory is None or c.host_memory == host_memory)
        ]
        query = f"copies.count({_filters(direction=direction, host_memory=host_memory)})"
        table = self._table(found) if found else self.table()
        count = Count(len(found), query, "copies", len(self._loaded()), table, copy_fixes(found))
        count.times = self.times
        return count

    def _like(self, items: Sequence[MemoryOp]) -> CopyList:
        return CopyList(items, times=self.times, medians=self.medians)

    def _table(self, items: Sequence[MemoryOp]) -> str:
        return copy_table(items, medians=self.medians)

    def fix_lines(self) -> list[str]:
        """What would remove the copies' cost to the host, a ``to fix:`` line per cause (see
        ``SyncList.fix_lines``)."""
        __tracebackhide__ = True
        return advice(copies=self._items())

    def _summary(self, item: MemoryOp) -> str:
        # Short, as a sync's: direction and host memory say what the record's name says.
        what = " ".join(filter(None, (item.direction, item.host_memory))) or item.name
        size = "" if item.bytes is None else f" {item.bytes} B"
        return f"{what}{size} by {item.op or 'no op'}"
