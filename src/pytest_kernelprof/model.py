"""The profile as plain frozen objects: what a test asserts on."""

from __future__ import annotations

import fnmatch
import functools
import re
import statistics
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

from .errors import ModuleNotRecordedError, NoDeviceActivityError, OpNotFoundError
from .health import (
    NO_READINGS,
    REGION_PREFIX,
    TRACE_CANNOT_TELL_COMPILE,
    CompileFacts,
    CompileReport,
    MemoryReading,
    MemoryReport,
    compile_report,
    memory_report,
    region_ids,
)
from .modules import MODULE_RANGE_PREFIX
from .names import KINDS, KernelName
from .report import display_name, format_us, nearest, render_table
from .syncs import DIRECTIONS, HOST_MEMORY, SYNC_KINDS, api_name, memcpy_kind

Pattern = str | re.Pattern[str]


@dataclass(frozen=True, kw_only=True)
class Kernel(KernelName):
    """One GPU kernel of one call: what its name says (the fields of :class:`KernelName`,
    inherited, so a field added to the decoder is a field of every kernel) and what was
    measured (the fields below)."""

    duration_us: float = 0.0
    stream: int | None = None
    device: int | None = None
    op: str | None = None
    grid: tuple[int, int, int] | None = None
    block: tuple[int, int, int] | None = None
    start_us: float | None = None  # GPU start, from the start of its call (the ProfilerStep range)
    # The user's Python frames around its launch, outermost first (stacks=True), else None.
    stack: tuple[str, ...] | None = field(default=None, compare=False)

    @property
    def end_us(self) -> float | None:
        return None if self.start_us is None else self.start_us + self.duration_us

    @property
    def ops(self) -> tuple[str, ...]:
        """The ranges around this kernel's launch, outermost first, ending with its launching op:
        CPU ops, ``record_function`` ranges, ``nn.Module: <name>`` ranges (``modules=True``),
        e.g. ``("nn.Module: model.layers.0.mlp", "aten::linear", "aten::matmul", "aten::mm")``.

        Without ``ProfilerStep#N`` and without the range Inductor opens around each of its
        launches (named after the kernel). A profile's kernels resolve it on first read, from
        the op tree of their call; a ``Kernel`` made by hand has ``(op,)``.
        """
        state = self.__dict__
        chain: tuple[str, ...] | None = state.get("_ops")
        if chain is None:
            launcher = state.get("_launcher")
            if launcher is None:
                return (self.op,) if self.op is not None else ()
            # Resolved once and kept: a derived value, the kernel's fields never change.
            chain = state["_ops"] = state["_chains"].kernel_ops(launcher, self.name)
        return chain

    @property
    def module(self) -> str | None:
        """The innermost ``nn.Module`` whose call launched this kernel (profiles recorded with
        ``modules=True``), e.g. ``"model.layers.3.mlp"``; None outside any module's range."""
        for name in reversed(self.ops):
            if name.startswith(MODULE_RANGE_PREFIX):
                return name[len(MODULE_RANGE_PREFIX) :]
        return None

    def __repr__(self) -> str:
        layout = f" {self.layout}" if self.layout else ""
        op = f" op={self.op}" if self.op else ""
        return (
            f"Kernel({self.kind}/{self.family}{layout} {format_us(self.duration_us)}us "
            f"{display_name(self.name, 60)!r}{op})"
        )


@dataclass(frozen=True)
class MemoryOp:
    """A memcpy or memset of one call: GPU work, but not a kernel.

    ``direction`` (``"HtoD"``, ``"DtoH"``, ``"DtoD"``, ``"HtoH"``) and ``host_memory``
    (``"pinned"``, ``"pageable"``) come from the record's name, e.g. ``Memcpy DtoH (Device ->
    Pageable)``; both are None for a memset. ``bytes`` is None where the events do not carry
    it (live Kineto events of torch 2.11 and older; Chrome traces do).
    """

    name: str
    kind: str  # "memcpy" or "memset"
    duration_us: float = 0.0
    stream: int | None = None
    device: int | None = None
    op: str | None = None
    direction: str | None = None
    host_memory: str | None = None
    bytes: int | None = None


def _matches(kernel: Kernel, pattern: Pattern | None, kind: str | None) -> bool:
    if kind is not None and kernel.kind != kind:
        return False
    if pattern is None:
        return True
    if isinstance(pattern, re.Pattern):
        return pattern.search(kernel.name) is not None
    return fnmatch.fnmatchcase(kernel.name, pattern)


def _check_kind(kind: str | None) -> None:
    __tracebackhide__ = True
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown kernel kind {kind!r}; the kinds are: {', '.join(KINDS)}")


def _check_pattern(pattern: object) -> None:
    __tracebackhide__ = True
    if pattern is not None and not isinstance(pattern, str | re.Pattern):
        raise TypeError(f"a kernel pattern is a glob string or a compiled re.Pattern, got {type(pattern).__name__}")


def kernel_table(
    kernels: Sequence[Kernel], positions: Sequence[int] | None = None, marked: frozenset[int] = frozenset()
) -> str:
    """The kernels as a table; ``positions`` numbers the rows (a selection keeps its call's numbers),
    and rows whose number is in ``marked`` get a ``*`` before it."""
    numbers = range(len(kernels)) if positions is None else positions
    rows = [
        (
            f"*{i}" if i in marked else str(i),
            k.kind,
            k.family,
            k.layout or "-",
            ",".join(k.fused_ops) or "-",
            format_us(k.duration_us),
            k.op or "-",
            display_name(k.name),
        )
        for i, k in zip(numbers, kernels, strict=True)
    ]
    return render_table(("#", "kind", "family", "layout", "ops", "us", "launched by", "name"), rows, right=(0, 5))


class _Measured:
    """What every collection of measured records shares: it may come from a profile that
    recorded no GPU activity, and then it says so instead of reading as empty."""

    __slots__ = ("_unavailable",)
    _unavailable: str | None

    @property
    def measured(self) -> bool:
        """Whether GPU activity was recorded, so that the records (maybe none) can be read."""
        return self._unavailable is None

    def require_measured(self) -> None:
        """Raise :class:`NoDeviceActivityError`, with the profile's reason, unless :attr:`measured`."""
        __tracebackhide__ = True
        if self._unavailable is not None:
            raise NoDeviceActivityError(self._unavailable)


class KernelList(_Measured, Sequence[Kernel]):
    """The kernels of one call, in launch order, with queries that explain their failures.

    A list built from a profile that recorded no GPU activity is *unavailable*: every
    access raises :class:`NoDeviceActivityError`, so "no kernels" never passes a test.
    """

    __slots__ = ("_kernels", "_load")

    def __init__(self, kernels: Sequence[Kernel] = (), *, unavailable: str | None = None) -> None:
        self._kernels: tuple[Kernel, ...] | None = tuple(kernels)
        self._load: Callable[[], Sequence[Kernel]] | None = None
        self._unavailable = unavailable

    @classmethod
    def deferred(cls, load: Callable[[], Sequence[Kernel]], *, unavailable: str | None = None) -> KernelList:
        """A list whose kernels ``load()`` makes on first read.

        The builder gives each profiled call one: most tests read only the representative
        call, and making Kernel objects is most of the cost of building a profile.
        """
        made = cls.__new__(cls)
        made._kernels, made._load, made._unavailable = None, load, unavailable
        return made

    def _loaded(self) -> tuple[Kernel, ...]:
        kernels = self._kernels
        if kernels is None:
            assert self._load is not None  # set whenever _kernels is not
            kernels = self._kernels = tuple(self._load())
            self._load = None
        return kernels

    def _items(self) -> tuple[Kernel, ...]:
        __tracebackhide__ = True
        self.require_measured()
        return self._loaded()

    @overload
    def __getitem__(self, index: int) -> Kernel: ...
    @overload
    def __getitem__(self, index: slice) -> KernelList: ...
    def __getitem__(self, index: int | slice) -> Kernel | KernelList:
        __tracebackhide__ = True
        if isinstance(index, slice):
            return KernelList(self._items()[index])
        return self._items()[index]

    def __len__(self) -> int:
        __tracebackhide__ = True
        return len(self._items())

    def __iter__(self) -> Iterator[Kernel]:
        __tracebackhide__ = True
        return iter(self._items())

    def __eq__(self, other: object) -> bool:
        """Kernels compare with kernels; a list of strings compares with the kernels' names, in order."""
        __tracebackhide__ = True
        if isinstance(other, KernelList):
            return self._items() == other._items()
        if isinstance(other, list | tuple):
            if all(isinstance(item, str) for item in other):
                return [k.name for k in self._items()] == list(other)
            if all(isinstance(item, Kernel) for item in other):
                return list(self._items()) == list(other)
            kinds = ", ".join(sorted({type(item).__name__ for item in other}))
            raise TypeError(
                f"a KernelList compares with a list of kernel names (str) or of Kernels, not of {kinds}: "
                "write prof.kernels == ['name', ...], prof.kernels.names == [...] or "
                "[k.kind for k in prof.kernels] == [...]"
            )
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __contains__(self, item: object) -> bool:
        """``"name" in prof.kernels`` asks for a kernel of that exact name (``matching()`` takes patterns)."""
        __tracebackhide__ = True
        if isinstance(item, str):
            return any(k.name == item for k in self._items())
        return item in self._items()

    @property
    def names(self) -> list[str]:
        __tracebackhide__ = True
        return [k.name for k in self._items()]

    @property
    def total_us(self) -> float:
        __tracebackhide__ = True
        return sum(k.duration_us for k in self._items())

    def matching(self, pattern: Pattern) -> KernelList:
        """Kernels whose name matches a glob (whole name, case-sensitive) or a regex (search)."""
        __tracebackhide__ = True
        _check_pattern(pattern)
        return KernelList([k for k in self._items() if _matches(k, pattern, None)])

    def of_kind(self, kind: str) -> KernelList:
        __tracebackhide__ = True
        _check_kind(kind)
        return KernelList([k for k in self._items() if k.kind == kind])

    def count(self, pattern: Pattern | None = None, *, kind: str | None = None) -> KernelCount:
        """How many kernels match ``pattern`` and ``kind`` (all kernels when both are None).

        An ``int`` that remembers what it counted, so that a failed ``assert ... == 1`` shows
        the kernels and which of them matched."""
        __tracebackhide__ = True
        _check_pattern(pattern)
        _check_kind(kind)
        matched = tuple(i for i, k in enumerate(self._items()) if _matches(k, pattern, kind))
        return KernelCount(matched, self, pattern, kind)

    def one(self, pattern: Pattern | None = None, *, kind: str | None = None) -> Kernel:
        """The single kernel that matches, or an AssertionError with the table and near names."""
        __tracebackhide__ = True
        _check_pattern(pattern)
        _check_kind(kind)
        matched = frozenset(i for i, k in enumerate(self._items()) if _matches(k, pattern, kind))
        found = [self._loaded()[i] for i in sorted(matched)]
        if len(found) == 1:
            return found[0]
        wanted = (
            " and ".join(
                part
                for part in (
                    f"name matching {pattern.pattern if isinstance(pattern, re.Pattern) else pattern!r}"
                    if pattern is not None
                    else "",
                    f"kind={kind!r}" if kind is not None else "",
                )
                if part
            )
            or "any kernel"
        )
        lines = [f"expected exactly one kernel with {wanted}, found {len(found)} of {len(self._loaded())}:"]
        lines.append(self.table(marked=matched))
        if not found:
            lines.extend(self.nearest_lines(pattern))
        raise AssertionError("\n".join(lines))

    def nearest_lines(self, pattern: Pattern | None) -> list[str]:
        """``nearest names: ...`` for a glob that matched nothing (none for other queries)."""
        if not isinstance(pattern, str):
            return []
        close = nearest(pattern, self.names)
        return ["nearest names: " + ", ".join(display_name(n, 80) for n in close)] if close else []

    def table(self, marked: frozenset[int] = frozenset()) -> str:
        """The kernel table; rows whose index is in ``marked`` get a ``*``. A display, so it does
        not raise where nothing was measured, but never reads as "no kernels" there either."""
        if self._unavailable is not None:
            return _UNMEASURED_TABLE
        return kernel_table(self._items(), marked=marked) if self._loaded() else "(no kernels)"

    def __repr__(self) -> str:
        # One line: pytest shows reprs in an assertion's "where" lines, a newline there as "\n".
        # The table is table(), and what IPython shows.
        if self._unavailable is not None:
            return "KernelList(unmeasured: no GPU activity recorded)"
        return f"KernelList({_plural(len(self._loaded()), 'kernel')})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self) if cycle or self._unavailable is not None else self.table())


_UNMEASURED_TABLE = "(unmeasured: no GPU activity recorded)"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _query(method: str, pattern: Pattern | None, kind: str | None) -> str:
    """``count('triton_*')``, ``count(kind='gemm')``: how a query was written, for messages."""
    args = []
    if pattern is not None:
        args.append(f"re.compile({pattern.pattern!r})" if isinstance(pattern, re.Pattern) else repr(pattern))
    if kind is not None:
        args.append(f"kind={kind!r}")
    return f"{method}({', '.join(args)})"


class KernelCount(int):
    """What :meth:`KernelList.count` returns: an ``int`` that also holds what it counted (the
    kernels, the pattern and kind, the indices that matched), for the report of a failed
    assertion such as ``assert prof.kernels.count("triton_*gelu*") == 1``."""

    kernels: KernelList
    pattern: Pattern | None
    kind: str | None
    matched: tuple[int, ...]

    def __new__(
        cls, matched: tuple[int, ...], kernels: KernelList, pattern: Pattern | None, kind: str | None
    ) -> KernelCount:
        count = super().__new__(cls, len(matched))
        count.kernels = kernels
        count.pattern = pattern
        count.kind = kind
        count.matched = matched
        return count

    @property
    def query(self) -> str:
        """How the count was asked for: ``count('triton_*')``, ``count(kind='gemm')``."""
        return _query("count", self.pattern, self.kind)

    def __repr__(self) -> str:
        return int.__repr__(self)

    def __reduce__(self) -> tuple[type[int], tuple[int]]:
        return (int, (int(self),))


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

    def _read(self) -> dict[str, int]:
        __tracebackhide__ = True
        self.require_measured()
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
    counted, so that a failed ``assert prof.copies.count(direction="DtoH") == 0`` shows them."""

    what: str
    table: str
    fixes: list[str]  # what would remove the counted records, one line each

    def __new__(cls, value: int, what: str, table: str, fixes: Sequence[str] = ()) -> Count:
        count = super().__new__(cls, value)
        count.what = what
        count.table = table
        count.fixes = list(fixes)
        return count

    def explain(self) -> list[str]:
        return [f"{int(self)} {self.what}:", *self.table.splitlines(), *_fix_lines(self.fixes)]


def _fix_lines(fixes: Sequence[str]) -> list[str]:
    return [f"to fix: {fix}" for fix in fixes]


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
        return f"Sync({self.kind} {self.call} {format_us(self.duration_us)}us in {chain}{where})"


T = TypeVar("T")


class _Records(_Measured, Sequence[T], Generic[T]):
    """A sequence of one call's records that raises :class:`NoDeviceActivityError` on every
    access where the profile recorded no GPU activity, like :class:`KernelList`."""

    __slots__ = ("_items_",)
    _noun = "records"

    def __init__(self, items: Sequence[T] = (), *, unavailable: str | None = None) -> None:
        self._items_: tuple[T, ...] = tuple(items)
        self._unavailable = unavailable

    def _items(self) -> tuple[T, ...]:
        __tracebackhide__ = True
        self.require_measured()
        return self._items_

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        __tracebackhide__ = True
        if isinstance(index, slice):
            return type(self)(self._items()[index])
        return self._items()[index]

    def __len__(self) -> int:
        __tracebackhide__ = True
        return len(self._items())

    def __iter__(self) -> Iterator[T]:
        __tracebackhide__ = True
        return iter(self._items())

    def __eq__(self, other: object) -> bool:
        __tracebackhide__ = True
        if isinstance(other, _Records):
            return self._items() == other._items()
        if isinstance(other, list | tuple):
            return list(self._items()) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def _table(self, items: Sequence[T]) -> str:
        raise NotImplementedError

    def table(self) -> str:
        if self._unavailable is not None:
            return _UNMEASURED_TABLE
        return self._table(self._items()) if self._items_ else f"(no {self._noun})"

    def _summary(self, item: T) -> str:
        raise NotImplementedError

    def headline(self) -> str:
        """One line that names the records; pytest shows ``assert not prof.syncs`` on one line."""
        name = type(self).__name__
        if self._unavailable is not None:
            return f"{name}(unavailable: no GPU activity recorded)"
        if not self._items_:
            return f"{name}(no {self._noun})"
        shown = "; ".join(self._summary(item) for item in self._items_[:3])
        more = f"; {len(self._items_) - 3} more" if len(self._items_) > 3 else ""
        return f"{name} of {len(self._items_)}: {shown}{more}"

    def __repr__(self) -> str:
        # One line, as KernelList's: pytest prints reprs in its assertion report.
        return self.headline()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.headline() if cycle or not self.measured else f"{self.headline()}\n{self.table()}")


def _check_choice(what: str, value: str | None, choices: Sequence[str]) -> None:
    if value is not None and value not in choices:
        raise ValueError(f"unknown {what} {value!r}; the {what}s are: {', '.join(choices)}")


def _filters(**given: Any) -> str:
    return " and ".join(f"{k}={v!r}" for k, v in given.items() if v is not None)


def sync_table(syncs: Sequence[Sync]) -> str:
    rows = [
        (
            str(i),
            s.call,
            s.kind if s.memcpy is None else " ".join((s.kind, *filter(None, memcpy_kind(s.memcpy)))),
            format_us(s.duration_us),
            " > ".join(s.ops) or "-",
            s.where or "-",
        )
        for i, s in enumerate(syncs)
    ]
    return render_table(("#", "call", "kind", "host us", "ops", "where"), rows, right=(0, 3))


# Ops in which the host reads a GPU value: the sync is the read itself.
_HOST_READS = frozenset(
    ("aten::item", "aten::_local_scalar_dense", "aten::is_nonzero", "aten::nonzero", "aten::masked_select")
)
_HOST_COPIES = frozenset(("aten::copy_", "aten::_to_copy"))
_PINNED_COPY = "copy into pinned host memory (t.pin_memory(), or pin_memory=True) with non_blocking=True"
# (the whole fix for tables, the short one for the one-line headline) by cause
_SYNC_FIXES = {
    "copy": (f"a copy to or from the host blocks it: {_PINNED_COPY}", "pin the host buffer, copy non_blocking=True"),
    "read": (
        "the host read a GPU value (.item(), bool(t), nonzero, boolean-mask indexing): keep it on the GPU "
        "(torch.where, masks as multipliers) or read it once per step",
        "keep values on the GPU, no .item()/bool()/nonzero",
    ),
    "device": (
        "torch.cuda.synchronize() waits for the whole GPU: drop it from the step (time with CUDA events)",
        "drop torch.cuda.synchronize() from the step",
    ),
    "event": (
        "event.synchronize() blocks the host: make a stream wait instead (stream.wait_event(event))",
        "stream.wait_event(event), not event.synchronize()",
    ),
    "stream": (
        "a stream synchronize: profile with stacks=True to see the line that waits",
        "stacks=True shows the line that waits",
    ),
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
    return [_SYNC_FIXES[cause][0] for cause in _sync_causes(syncs)]


def copy_fixes(copies: Sequence[MemoryOp]) -> list[str]:
    """What would remove the copies' cost to the host, for failure messages."""
    fixes: list[str] = []
    if any(c.host_memory == "pageable" for c in copies):
        fixes.append(f"a copy to or from pageable memory blocks the host: {_PINNED_COPY}")
    if any(c.direction == "DtoH" for c in copies):
        fixes.append("a DtoH copy reads GPU results on the host: keep them on the GPU, or read them once per step")
    return fixes


class SyncList(_Records[Sync]):
    """The host syncs of one call, in time order (see :class:`Sync`)."""

    __slots__ = ()
    _noun = "host syncs"

    def count(self, call: str | None = None, *, kind: str | None = None) -> Count:
        """How many syncs are of API ``call`` (a glob, or the name without Kineto's ``_v...``
        suffix) and ``kind``; all of them when both are None."""
        __tracebackhide__ = True
        _check_choice("sync kind", kind, SYNC_KINDS)
        found = [
            s
            for s in self._items()
            if (kind is None or s.kind == kind)
            and (call is None or api_name(s.call) == call or fnmatch.fnmatchcase(s.call, call))
        ]
        what = "host syncs" + (f" with {_filters(kind=kind, call=call)}" if kind or call else "")
        table = self._table(found) if found else self.table()
        return Count(len(found), f"{what} of {len(self._items_)}", table, sync_fixes(found))

    def headline(self) -> str:
        """The base headline, and what would remove the syncs: ``assert not prof.syncs`` shows
        only this line."""
        causes = _sync_causes(self._items_) if self._unavailable is None else []
        fixes = " / ".join(_SYNC_FIXES[cause][1] for cause in causes)
        return super().headline() + (f"; to fix: {fixes}" if fixes else "")

    def _table(self, items: Sequence[Sync]) -> str:
        return sync_table(items)

    def _summary(self, item: Sync) -> str:
        return repr(item)


def copy_table(copies: Sequence[MemoryOp]) -> str:
    rows = [
        (
            str(i),
            c.direction or "-",
            c.host_memory or "-",
            "-" if c.bytes is None else str(c.bytes),
            format_us(c.duration_us),
            c.op or "-",
            c.name,
        )
        for i, c in enumerate(copies)
    ]
    return render_table(("#", "direction", "host", "bytes", "us", "op", "name"), rows, right=(0, 3, 4))


class CopyList(_Records[MemoryOp]):
    """The memcpys of one call, in launch order (memsets are in ``memory_ops`` only)."""

    __slots__ = ()
    _noun = "copies"

    def count(self, direction: str | None = None, *, host_memory: str | None = None) -> Count:
        """How many copies go in ``direction`` and touch ``host_memory``; all when both are None."""
        __tracebackhide__ = True
        _check_choice("direction", direction, DIRECTIONS)
        _check_choice("host memory", host_memory, HOST_MEMORY)
        found = [
            c
            for c in self._items()
            if (direction is None or c.direction == direction) and (host_memory is None or c.host_memory == host_memory)
        ]
        given = _filters(direction=direction, host_memory=host_memory)
        what = "copies" + (f" with {given}" if given else "")
        table = self._table(found) if found else self.table()
        return Count(len(found), f"{what} of {len(self._items_)}", table, copy_fixes(found))

    def _table(self, items: Sequence[MemoryOp]) -> str:
        return copy_table(items)

    def _summary(self, item: MemoryOp) -> str:
        size = "" if item.bytes is None else f" {item.bytes} B"
        return f"{item.name}{size} by {item.op or 'no op'}"


@dataclass(frozen=True)
class Op:
    """A CPU op (or user range) of one call, aggregated over its occurrences in that call.

    ``children`` are the direct child op names of its first occurrence, in order;
    ``children_vary`` says whether another occurrence had other children (an op that
    dispatches differently by input, say), so that the first one is not taken for all.
    ``kernels`` are the kernels launched by it and its descendants, in every occurrence.
    Device times raise :class:`NoDeviceActivityError` where no GPU activity was recorded:
    "aten::t has zero device time" must not hold merely because nothing was measured.
    """

    name: str
    count: int
    cpu_time_us: float
    self_cpu_time_us: float
    child_names: tuple[str, ...]
    kernels: KernelList = field(repr=False)
    subtree_device_us: float | None = field(default=None, repr=False)
    self_device_us: float | None = field(default=None, repr=False)
    children_vary: bool = False

    @property
    def children(self) -> list[str]:
        return list(self.child_names)

    def _device(self, value: float | None) -> float:
        __tracebackhide__ = True
        if value is None:
            self.kernels.require_measured()  # the profile's own reason first
            raise NoDeviceActivityError(f"no GPU activity was recorded for {self.name}")
        return value

    @property
    def device_time_us(self) -> float:
        """GPU time of the kernels and memory ops launched by this op and its descendants."""
        __tracebackhide__ = True
        return self._device(self.subtree_device_us)

    @property
    def self_device_time_us(self) -> float:
        """GPU time of the kernels and memory ops this op launched itself."""
        __tracebackhide__ = True
        return self._device(self.self_device_us)


OpLoader = Callable[[], tuple[Sequence[str], Callable[[str], Op]]]


class OpTable(Mapping[str, Op]):
    """CPU ops of one call by name, in first-seen order.

    Built on first use: the op tree is not needed for kernel queries, and a trace of
    thousands of calls has a table per call that is mostly never looked at. ``load``
    returns the op names and a function that makes one ``Op``.
    """

    __slots__ = ("_load", "_made", "_make", "_names")

    def __init__(self, load: OpLoader) -> None:
        self._load: OpLoader | None = load
        self._names: tuple[str, ...] = ()
        self._make: Callable[[str], Op] | None = None
        self._made: dict[str, Op] = {}

    def _loaded(self) -> tuple[str, ...]:
        if self._load is not None:
            names, self._make = self._load()
            self._names = tuple(names)
            self._load = None
        return self._names

    def __getitem__(self, name: str) -> Op:
        __tracebackhide__ = True
        op = self._made.get(name)
        if op is not None:
            return op
        names = self._loaded()
        if name not in names:
            close = nearest(name, names)
            hint = f"; nearest: {', '.join(close)}" if close else ""
            raise OpNotFoundError(f"op {name!r} did not run in the profiled call{hint}")
        assert self._make is not None
        op = self._made[name] = self._make(name)
        return op

    def __contains__(self, name: object) -> bool:
        return name in self._loaded()

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())

    @property
    def names(self) -> list[str]:
        __tracebackhide__ = True
        return list(self._loaded())

    def table(self) -> str:
        rows = []
        for op in (self[name] for name in self._loaded()):
            device = "-" if op.subtree_device_us is None else format_us(op.subtree_device_us)
            rows.append(
                (
                    op.name,
                    str(op.count),
                    format_us(op.cpu_time_us),
                    device,
                    str(len(op.kernels) if op.kernels.measured else 0),
                )
            )
        return render_table(("op", "count", "cpu us", "device us", "kernels"), rows, right=(1, 2, 3, 4))

    def __repr__(self) -> str:
        return f"OpTable({_plural(len(self._loaded()), 'op')})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self) if cycle else self.table())


@dataclass(frozen=True)
class ModuleView:
    """One ``nn.Module`` of a call recorded with ``modules=True``: its calls' range, aggregated.

    ``kernels`` are the kernels launched inside the module's calls (its submodules' too), in
    launch order; ``self_kernels`` those whose innermost module it is. Device and CPU times are
    those of the module's range (:class:`Op`): kernels and memory ops under it.
    """

    name: str
    op: Op = field(repr=False)

    @property
    def count(self) -> int:
        """How many times the module ran in the call."""
        return self.op.count

    @property
    def kernels(self) -> KernelList:
        return self.op.kernels

    @property
    def self_kernels(self) -> KernelList:
        return KernelList([k for k in self.op.kernels if k.module == self.name])

    @property
    def device_time_us(self) -> float:
        return self.op.device_time_us

    @property
    def cpu_time_us(self) -> float:
        return self.op.cpu_time_us

    def __repr__(self) -> str:
        if not self.op.kernels.measured:
            return f"ModuleView({self.name}: {self.count} call(s), no GPU activity recorded)"
        return (
            f"ModuleView({self.name}: {self.count} call(s), {len(self.kernels)} kernels, "
            f"{format_us(self.device_time_us)} us on the GPU):\n{self.kernels.table()}"
        )


_NO_MODULES = (
    "this profile has no nn.Module ranges: profile an nn.Module with modules=True (or --kernelprof-modules, "
    "ini kernelprof_modules), or pass modules=model for a function that calls one; a trace recorded "
    "without them cannot tell which module launched a kernel"
)


class ModuleTable(Mapping[str, ModuleView]):
    """The modules of one call by name (``named_modules()`` names; the model under its class
    name), in the order they first ran. Empty is an error: a profile recorded without
    ``modules=True`` must not read as "no module launched anything"."""

    __slots__ = ("_names", "_ops")

    def __init__(self, ops: OpTable) -> None:
        self._ops = ops
        self._names: tuple[str, ...] | None = None

    def _loaded(self) -> tuple[str, ...]:
        if self._names is None:
            prefix = len(MODULE_RANGE_PREFIX)
            self._names = tuple(n[prefix:] for n in self._ops if n.startswith(MODULE_RANGE_PREFIX))
        if not self._names:
            raise ModuleNotRecordedError(_NO_MODULES)
        return self._names

    def __getitem__(self, name: str) -> ModuleView:
        names = self._loaded()
        if name not in names:
            close = nearest(name, names)
            hint = f"; nearest: {', '.join(close)}" if close else ""
            raise ModuleNotRecordedError(f"module {name!r} did not run in the profiled call{hint}")
        return ModuleView(name, self._ops[MODULE_RANGE_PREFIX + name])

    def __contains__(self, name: object) -> bool:
        return name in self._loaded()

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())

    def table(self) -> str:
        rows = []
        for view in (self[name] for name in self._loaded()):
            device = "-" if view.op.subtree_device_us is None else format_us(view.op.subtree_device_us)
            kernels = str(len(view.kernels)) if view.kernels.measured else "-"
            rows.append((view.name, str(view.count), device, kernels))
        return render_table(("module", "calls", "device us", "kernels"), rows, right=(1, 2, 3))

    def __repr__(self) -> str:
        return f"ModuleTable of {len(self._loaded())}:\n{self.table()}"


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


def _median_int(values: Sequence[int]) -> int:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


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


@dataclass(frozen=True)
class CallProfile:
    """What one profiled call did.

    ``wall_us`` is the host span of the call (its ``ProfilerStep`` range). The GPU-side
    counts and times are read through properties that raise :class:`NoDeviceActivityError`
    where no GPU activity was recorded: "no launches" must not pass because nothing ran.
    """

    index: int
    kernels: KernelList
    memory_ops: tuple[MemoryOp, ...]
    ops: OpTable
    runtime: RuntimeCalls
    memory_reading: MemoryReading | None = None  # the allocator around this call, live on a GPU only
    syncs: SyncList = field(default_factory=lambda: SyncList(unavailable=_NOT_BUILT))
    wall_us: float = 0.0
    _launches: int = field(default=0, repr=False)
    _graph_launches: int = field(default=0, repr=False)
    _gpu_busy_us: float = field(default=0.0, repr=False)

    def overlap(self) -> Overlap:
        """Communication time hidden under compute kernels in this call."""
        return overlap_of(self.kernels)

    @property
    def compiled_regions(self) -> list[str]:
        """The compile id ("0/0") of each compiled frame this call entered, once per entry."""
        names = [name for name in self.ops.names if name.startswith(REGION_PREFIX)]
        return region_ids(names, {name: self.ops[name].count for name in names})

    @property
    def memory(self) -> MemoryReport:
        """GPU memory of this call alone (see ``KernelProfile.memory``)."""
        __tracebackhide__ = True
        self.kernels.require_measured()
        return memory_report([self.runtime], [self.memory_reading], NO_READINGS)

    @property
    def copies(self) -> CopyList:
        """The call's memcpys (``memory_ops`` without the memsets)."""
        __tracebackhide__ = True
        self.kernels.require_measured()
        return CopyList([m for m in self.memory_ops if m.kind == "memcpy"])

    @property
    def launches(self) -> int:
        """Kernel launch calls (each graph launch counts one); memcpy/memset calls are not launches."""
        __tracebackhide__ = True
        self.kernels.require_measured()
        return self._launches

    @property
    def graph_launches(self) -> int:
        """``cudaGraphLaunch``/``cuGraphLaunch`` calls."""
        __tracebackhide__ = True
        self.kernels.require_measured()
        return self._graph_launches

    @property
    def gpu_busy_us(self) -> float:
        """Time within ``wall_us`` when some kernel or memory op ran on the GPU (their union)."""
        __tracebackhide__ = True
        self.kernels.require_measured()
        return self._gpu_busy_us

    @property
    def gpu_idle_fraction(self) -> float:
        """Share of the call's host span with no GPU work: ``1 - gpu_busy_us / wall_us``."""
        __tracebackhide__ = True
        busy = self.gpu_busy_us
        return 1.0 - busy / self.wall_us if self.wall_us > 0 else 0.0

    @functools.cached_property
    def modules(self) -> ModuleTable:
        """The ``nn.Module``s of the call, by name (profiles recorded with ``modules=True``).
        Made once: each ``module(name)`` reads it, and its names come from a pass over the ops."""
        return ModuleTable(self.ops)

    def module(self, name: str) -> ModuleView:
        """One module of the call by its ``named_modules()`` name, e.g. ``"model.layers.3.mlp"``."""
        return self.modules[name]

    def __repr__(self) -> str:
        return f"CallProfile(call {self.index}: {self.kernels!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(
            repr(self) if cycle or not self.kernels.measured else f"call {self.index}:\n{self.kernels.table()}"
        )


_NOT_BUILT = "this CallProfile was made without host syncs; profiles from the builder have them"


@dataclass(frozen=True)
class KernelProfile:
    """One representative call of a profiled callable, plus each call on its own.

    The representative call is the first profiled call with each kernel's duration
    replaced by its median over all calls (the calls launched the same sequence, or
    building the profile failed unless variation was allowed).
    """

    call: CallProfile
    calls: tuple[CallProfile, ...]
    device: str | None = None
    arch: str | None = None
    source: str = "live"
    varied: bool = False
    has_device_activity: bool = False
    compile_facts: CompileFacts | None = field(default=None, repr=False)  # live only

    @property
    def kernels(self) -> KernelList:
        return self.call.kernels

    @functools.cached_property
    def compile(self) -> CompileReport:
        """What torch.compile did: frames, graph breaks, recompiles, compiled regions per call."""
        return compile_report([c.compiled_regions for c in self.calls], self.compile_facts, TRACE_CANNOT_TELL_COMPILE)

    @property
    def memory(self) -> MemoryReport:
        """GPU memory per call: peak and retained bytes (live), cudaMalloc/cudaFree calls.

        Raises :class:`NoDeviceActivityError` where no GPU work was recorded.
        """
        __tracebackhide__ = True
        self.require_device_activity()
        return memory_report([c.runtime for c in self.calls], [c.memory_reading for c in self.calls], NO_READINGS)

    def require_device_activity(self) -> None:
        """Raise :class:`NoDeviceActivityError`, with the reason, unless GPU activity was recorded.

        For code that reads no kernel itself but must not pass on a profile of nothing (a
        baseline check, a benchmark); ``has_device_activity`` is the same question as a bool.
        """
        __tracebackhide__ = True
        self.call.kernels.require_measured()

    @property
    def memory_ops(self) -> tuple[MemoryOp, ...]:
        __tracebackhide__ = True
        self.require_device_activity()
        return self.call.memory_ops

    @property
    def ops(self) -> OpTable:
        return self.call.ops

    @property
    def runtime(self) -> RuntimeCalls:
        """CUDA runtime and driver calls of one call, by name; reads raise
        :class:`NoDeviceActivityError` where nothing was measured (see :class:`RuntimeCalls`)."""
        return self.call.runtime

    @property
    def syncs(self) -> SyncList:
        """Host syncs per call. Where the calls synced alike: the first call's, host times the
        median over calls; where they did not: the call with the most syncs, so that a sync
        in any call fails ``assert not prof.syncs`` (``calls[i].syncs`` has each)."""
        return self.call.syncs

    @property
    def copies(self) -> CopyList:
        """The memcpys of the representative call."""
        __tracebackhide__ = True
        return self.call.copies

    @property
    def launches(self) -> int:
        """Kernel launch calls per call (median over calls); a graph launch counts one."""
        __tracebackhide__ = True
        self.require_device_activity()  # here, not in the comprehension's own frame
        return _median_int([c.launches for c in self.calls])

    @property
    def graph_launches(self) -> int:
        """Graph launch calls per call (median over calls)."""
        __tracebackhide__ = True
        self.require_device_activity()  # here, not in the comprehension's own frame
        return _median_int([c.graph_launches for c in self.calls])

    @property
    def wall_us(self) -> float:
        """Host span of one call, the median over calls (the first call of a session carries
        the profiler's start-up, a few ms; the median leaves it out)."""
        return statistics.median(c.wall_us for c in self.calls)

    @property
    def gpu_busy_us(self) -> float:
        """GPU busy time within one call's host span (union of kernels and memory ops), median."""
        __tracebackhide__ = True
        self.require_device_activity()  # here, not in the comprehension's own frame
        return statistics.median(c.gpu_busy_us for c in self.calls)

    @property
    def gpu_idle_fraction(self) -> float:
        """Share of a call's host span with no GPU work, the median over calls."""
        __tracebackhide__ = True
        self.require_device_activity()  # here, not in the comprehension's own frame
        return statistics.median(c.gpu_idle_fraction for c in self.calls)

    @property
    def modules(self) -> ModuleTable:
        """The ``nn.Module``s of the representative call (recorded with ``modules=True``)."""
        return self.call.modules

    def module(self, name: str) -> ModuleView:
        """One module by name: ``prof.module("model.layers.3.mlp").kernels``."""
        return self.call.module(name)

    def overlap(self) -> Overlap:
        """Communication time hidden under compute, the median over the calls (by fraction).

        For a test such as "DDP overlaps its gradient all-reduce with backward":
        ``assert prof.overlap().fraction > 0.5``.
        """
        per_call = sorted((c.overlap() for c in self.calls), key=lambda o: o.fraction)
        return per_call[len(per_call) // 2]

    def table(self) -> str:
        where = f"{self.device} ({self.arch})" if self.device else "no GPU"
        head = f"KernelProfile from {self.source} on {where}: {len(self.calls)} call(s)"
        if self.varied:
            head += ", calls launched different kernel sequences"
        if not self.has_device_activity:
            try:
                self.require_device_activity()
                reason = ""
            except NoDeviceActivityError as exc:
                reason = str(exc)
            return f"{head}\nno GPU activity: {reason}\n{self.call.ops.table()}"
        memory = f"\n+ {len(self.call.memory_ops)} memory op(s) per call" if self.call.memory_ops else ""
        return f"{head}\n{self.call.kernels.table()}{memory}\n{self.host_summary()}"

    def host_summary(self) -> str:
        """Launches, host span, GPU idle share and the host syncs, as the profile table ends."""
        graphs = f" ({self.graph_launches} graph)" if self.graph_launches else ""
        line = (
            f"per call: {self.launches} launch(es){graphs}, host {format_us(self.wall_us)}us, "
            f"GPU busy {format_us(self.gpu_busy_us)}us, idle {self.gpu_idle_fraction:.0%}"
        )
        syncs = self.syncs
        if not syncs:
            return f"{line}, no host syncs"
        return f"{line}, {len(syncs)} host sync(s):\n{syncs.table()}"

    def __repr__(self) -> str:
        # One line, as KernelList's; the table is table(), and what IPython shows.
        where = f"{self.device} ({self.arch})" if self.device else "no GPU"
        label = self.source.replace("\\", "/").rsplit("/", 1)[-1]
        what = (
            f"{_plural(len(self.call.kernels), 'kernel')} per call" if self.has_device_activity else "no GPU activity"
        )
        return f"KernelProfile({label!r} on {where}: {what}, {_plural(len(self.calls), 'call')})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self) if cycle else self.table())
