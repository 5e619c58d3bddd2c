"""Kernels and memory ops of one call, and the queries on them (their table and names are
``kernel_text.py``'s; what a query matches and what its failure says of the rest, ``kernel_matching.py``'s)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, overload

from ..decode import KINDS, KernelName
from ..errors import KernelMatchError, QueryError, QueryTypeError
from ..tables import display_name, format_us, name_is, name_matches, plural, printable
from .counts import KernelCount, query_text, wanted_text
from .kernel_matching import Pattern, nearest_lines, query_matches, undecided, undecided_lines
from .kernel_text import GLOB, KernelNames, glob_in_message, kernel_table, kind_text, rows_text
from .kernel_text import KERNEL_CELLS as KERNEL_CELLS  # the timeline's table and tests import them from here
from .kernel_text import kernel_cells as kernel_cells
from .measured import MODULE_RANGE_PREFIX, UNMEASURED_TABLE, _Records
from .query_args import KernelDtype, check_dtype, check_family, check_kind, check_pattern
from .unknowns import warn_undecided


class OpChains(Protocol):
    """What resolves a profiled kernel's ``ops``: the op tree of its call, which the builder
    keeps and walks on first read (see ``Kernel.ops``)."""

    def kernel_ops(self, launcher: Any, kernel_name: str) -> tuple[str, ...]:
        """The ranges around the launch by ``launcher`` (the builder's own record of the
        launching op) of the kernel ``kernel_name``, outermost first."""
        ...


@dataclass(frozen=True)
class _ResolvedOps:
    """A kernel's ``ops`` once resolved: what a pickled or copied kernel keeps of its call's op
    tree, rather than the whole tree."""

    ops: tuple[str, ...]

    def kernel_ops(self, launcher: Any, kernel_name: str) -> tuple[str, ...]:
        return self.ops


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
    # Where ``ops`` comes from, for a profile's kernels: the op tree of their call and the
    # builder's record of the launching op. None for a kernel made by hand.
    chains: OpChains | None = field(default=None, compare=False, repr=False)
    launcher: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # The decoder's dtype as one that also equals its torch.dtype (``k.dtype == torch.bfloat16``).
        if self.dtype is not None and type(self.dtype) is not KernelDtype:
            object.__setattr__(self, "dtype", KernelDtype(self.dtype))

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
        the op tree of their call; a ``Kernel`` made by hand has ``(op,)``. At most 256 ranges:
        a chain nested deeper (no real trace is) keeps its outermost and innermost 128, as ``Sync.ops`` does.
        """
        if self.chains is None:
            return (self.op,) if self.op is not None else ()
        return self.chains.kernel_ops(self.launcher, self.name)

    @property
    def module(self) -> str | None:
        """The innermost ``nn.Module`` whose call launched this kernel (profiles recorded with
        ``modules=True``), e.g. ``"model.layers.3.mlp"``; None outside any module's range."""
        for name in reversed(self.ops):
            if name.startswith(MODULE_RANGE_PREFIX):
                return name[len(MODULE_RANGE_PREFIX) :]
        return None

    def __getstate__(self) -> dict[str, Any]:
        # ``chains`` holds the op tree of the kernel's whole call: a pickled or copied kernel
        # keeps its own chain instead (``dataclasses.replace`` keeps the tree, sharing it).
        state = dict(self.__dict__)
        if self.chains is not None:
            state["chains"], state["launcher"] = _ResolvedOps(self.ops), None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A pickled dtype is the plain string (KernelDtype.__reduce__): the kernel's own again.
        self.__dict__.update(state)
        self.__post_init__()

    def __repr__(self) -> str:
        layout = f" {self.layout}" if self.layout else ""
        template = " template" if self.template else ""
        op = f" op={printable(self.op)}" if self.op else ""
        dtype = f" {self.dtype}" if self.dtype else ""
        return (
            f"Kernel({kind_text(self)}{template}{dtype}{layout} {format_us(self.duration_us)}us "
            f"{display_name(self.name)!r}{op})"
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


class KernelList(_Records[Kernel]):
    """The kernels of one call, in launch order, with queries that explain their failures.

    A list built from a profile that recorded no GPU activity is *unavailable*: every
    access raises :class:`NoDeviceActivityError`, so "no kernels" never passes a test.

    Each kernel keeps its number in its call (``positions``): a selection (``of_kind``,
    ``matching``, a slice, an op's or a module's kernels) numbers its table, its counts' matches
    and its failures as the call's own table does, so that ``#3`` is one kernel everywhere in a
    report. A list made by hand, of no call, numbers its kernels from 0.
    """

    # The numbers live on the list, not on Kernel: a number is a kernel's place in one list of
    # one call, not a fact of the kernel. As a field it would make the same kernel of two calls
    # (or a kernel and its hand-made twin) unequal, which ``==`` on calls and the diff rely on,
    # and each profile would pay for it in ``_new_kernel``, the hot path of building one.
    __slots__ = ("_positions_", "_times")
    _noun = "kernels"

    def __init__(
        self,
        items: Sequence[Kernel] = (),
        *,
        unavailable: str | None = None,
        times: str | None = None,
        positions: Sequence[int] | None = None,
    ) -> None:
        super().__init__(items, unavailable=unavailable)
        self._times = times
        self._positions_ = None if positions is None else tuple(positions)
        if self._positions_ is not None and len(self._positions_) != len(items):
            raise ValueError(f"{len(items)} kernels and {len(self._positions_)} positions: one position a kernel")

    @property
    def times(self) -> str | None:
        """Whose times the kernels' ``duration_us`` are, where several calls gave them
        (``"each kernel's median over the 3 calls"``): what a failed query's table says."""
        return getattr(self, "_times", None)  # a deferred list has none: one call's own

    def _positions(self) -> Sequence[int]:
        """Each kernel's number in its call, as tables show it: 0..n-1 for a whole call's list
        (a deferred one included) or one made by hand."""
        positions: tuple[int, ...] | None = getattr(self, "_positions_", None)  # a deferred list has none
        return range(len(self._loaded())) if positions is None else positions

    def _numbered(self, keep: Callable[[Kernel], bool]) -> list[tuple[int, Kernel]]:
        """(number, kernel) of the kernels ``keep`` keeps."""
        # Read before the comprehension, a frame of its own until Python 3.12, which a
        # NoDeviceActivityError raised inside showed as the plugin's source (a trial).
        __tracebackhide__ = True
        items = self._items()
        return [(n, k) for n, k in zip(self._positions(), items, strict=True) if keep(k)]

    def _kept(self, keep: Callable[[Kernel], bool]) -> KernelList:
        """The kernels ``keep`` keeps, with their numbers and times."""
        __tracebackhide__ = True
        pairs = self._numbered(keep)
        return KernelList([k for _, k in pairs], times=self.times, positions=[n for n, _ in pairs])

    @overload
    def __getitem__(self, index: int) -> Kernel: ...
    @overload
    def __getitem__(self, index: slice) -> KernelList: ...
    def __getitem__(self, index: int | slice) -> Kernel | KernelList:
        __tracebackhide__ = True
        if isinstance(index, slice):
            return KernelList(self._items()[index], times=self.times, positions=self._positions()[index])
        return self._items()[index]

    def __eq__(self, other: object) -> bool:
        """Kernels compare with kernels; a list of strings compares with the kernels' names, in order."""
        __tracebackhide__ = True
        if isinstance(other, KernelList):
            return self._items() == other._items()
        if isinstance(other, list | tuple):
            if all(isinstance(item, str) for item in other):
                kernels = self._items()
                return len(kernels) == len(other) and all(map(name_is, (k.name for k in kernels), other))
            if all(isinstance(item, Kernel) for item in other):
                return list(self._items()) == list(other)
            kinds = ", ".join(sorted({type(item).__name__ for item in other}))
            raise QueryTypeError(
                f"a KernelList compares with a list of kernel names (str) or of Kernels, not of {kinds}: "
                "write prof.kernels == ['name', ...], prof.kernels.names == [...] or "
                "[k.kind for k in prof.kernels] == [...]"
            )
        return NotImplemented

    def __contains__(self, item: object) -> bool:
        """``"name" in prof.kernels`` asks for a kernel of that exact name: whole, without its
        leading ``void `` or as every output shows it (``count()`` and ``matching()`` take
        patterns). ``in`` never reads a pattern as a name: a string that names no kernel but,
        read as a glob, matches some (``"triton_*"``) is a :class:`QueryError`, and so is a
        regex, where ``assert "triton_*" not in prof.kernels`` would pass on Triton kernels. A
        glob that matches none is False, as both readings say."""
        __tracebackhide__ = True
        if isinstance(item, re.Pattern):
            raise QueryTypeError(
                f"`in` on kernels asks for a whole kernel name, not a regex: write "
                f"prof.kernels.count(re.compile({item.pattern!r})) > 0 (or == 0 for none)"
            )
        if not isinstance(item, str):
            return item in self._items()
        kernels = self._items()
        if any(name_is(k.name, item) for k in kernels):
            return True
        if GLOB.search(item):
            globbed = [k.name for k in kernels if name_matches(k.name, item)]
            if globbed:
                instead = f"prof.kernels.count({item!r}) > 0 (or == 0 for none)"
                raise QueryError(glob_in_message(item, globbed, "kernel", instead))
        return False

    @property
    def names(self) -> KernelNames:
        __tracebackhide__ = True
        return KernelNames(k.name for k in self._items())

    @property
    def total_us(self) -> float:
        __tracebackhide__ = True
        return sum(k.duration_us for k in self._items())

    def matching(self, pattern: Pattern | None = None, *, family: str | None = None) -> KernelList:
        """Kernels whose name matches a glob (whole name, case-sensitive) or a regex (search),
        and whose ``family`` is ``family`` (``matching(family="aten")``: ATen's own kernels)."""
        __tracebackhide__ = True
        check_pattern(pattern)
        check_family(family)
        return self._kept(lambda k: query_matches(k, pattern, None, family=family))

    def of_kind(self, kind: str) -> KernelList:
        __tracebackhide__ = True
        if kind is None:
            raise QueryTypeError(f"of_kind takes a kind, one of {', '.join(KINDS)}; got None")
        check_kind(kind)
        self._warn_undecided("of_kind", None, kind)
        return self._kept(lambda k: k.is_kind(kind))

    def unplaced(self) -> KernelList:
        """The kernels no evidence placed (kind ``"other"`` for want of any): each could be of
        any kind, so kind questions warn about them (``UndecodedKernelWarning``)."""
        __tracebackhide__ = True
        return self._kept(lambda k: k.unplaced)

    def _warn_undecided(
        self,
        method: str,
        pattern: Pattern | None,
        kind: str | None,
        dtype: str | None = None,
        family: str | None = None,
    ) -> None:
        __tracebackhide__ = True
        kernels = [self._loaded()[i] for i in undecided(self, pattern, kind, dtype, family)]
        question = f"of_kind({kind!r})" if method == "of_kind" else query_text(method, pattern, kind, dtype, family)
        warn_undecided(question, kernels)

    def count(
        self,
        pattern: Pattern | None = None,
        *,
        kind: str | None = None,
        dtype: str | Any = None,
        family: str | None = None,
    ) -> KernelCount:
        """How many kernels match ``pattern``, ``kind``, ``family`` and ``dtype`` (all kernels when all
        are None); ``dtype`` is one of the decoder's (``"bf16"``) or a ``torch.dtype`` (``torch.bfloat16``);
        ``family`` a family's whole name (``count(family="aten", kind="pointwise") == 0``: no eager
        ATen pointwise kernel left in a compiled model).

        An ``int`` that remembers what it counted, so that a failed ``assert ... == 1`` shows
        the kernels (with their dtypes) and which of them matched: ``assert
        prof.kernels.count(kind="gemm", dtype="fp32") == 0`` says which GEMM runs in fp32."""
        __tracebackhide__ = True
        check_pattern(pattern)
        check_kind(kind)
        check_family(family)
        dtype = check_dtype(dtype)
        matched = tuple(n for n, _ in self._numbered(lambda k: query_matches(k, pattern, kind, dtype, family)))
        self._warn_undecided("count", pattern, kind, dtype, family)
        return KernelCount(matched, self, pattern, kind, dtype, family)

    def one(
        self,
        pattern: Pattern | None = None,
        *,
        kind: str | None = None,
        dtype: str | Any = None,
        family: str | None = None,
    ) -> Kernel:
        """The single kernel that matches, or a :class:`KernelMatchError` (an ``AssertionError``)
        with the table and near names."""
        __tracebackhide__ = True
        check_pattern(pattern)
        check_kind(kind)
        check_family(family)
        dtype = check_dtype(dtype)
        pairs = self._numbered(lambda k: query_matches(k, pattern, kind, dtype, family))
        self._warn_undecided("one", pattern, kind, dtype, family)
        found = [k for _, k in pairs]
        if len(found) == 1:
            return found[0]
        numbers = [n for n, _ in pairs]
        wanted = wanted_text(pattern, kind, dtype, family)
        # The matches named as count() names them: the table's stars alone were hard to find.
        which = f": {rows_text(numbers)}" if numbers else ""
        times = f" (times: {self.times})" if self.times else ""
        head = f"expected exactly one kernel with {wanted}, matched {len(found)} of {len(self._loaded())} kernels"
        lines = [f"{head}{which}{times}:", self.table(marked=frozenset(numbers))]
        lines.extend(undecided_lines(self, pattern, kind, dtype, family))
        if not found:
            lines.extend(nearest_lines(self, pattern, kind=kind, dtype=dtype, family=family))
        error = KernelMatchError("\n".join(lines))
        error.kernels = self
        raise error

    def table(self, marked: frozenset[int] = frozenset()) -> str:
        """The kernel table, each row numbered as in its call; rows whose number is in ``marked``
        get a ``*``. A display, so it does not raise where nothing was measured, but never reads
        as "no kernels" there either."""
        if self._unavailable is not None:
            return UNMEASURED_TABLE
        if not self._loaded():
            return "(no kernels)"
        return kernel_table(self._items(), self._positions(), marked=marked, medians=self.times is not None)

    def __repr__(self) -> str:
        # One line: pytest shows reprs in an assertion's "where" lines, a newline there as "\n".
        # The table is table(), and what IPython shows.
        if self._unavailable is not None:
            return "KernelList(unmeasured: no GPU activity recorded)"
        return f"KernelList({plural(len(self._loaded()), 'kernel')})"

    def __str__(self) -> str:
        # print() gives the table, as IPython does: a trial's print(prof.kernels) gave the repr, and
        # the table was a method to discover. Unmeasured, the repr's line, which says so.
        return repr(self) if self._unavailable is not None else self.table()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self) if cycle else str(self))
