"""The CPU side of one call: its ops (and user ranges) by name, and the ``nn.Module``s among them."""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import ModuleNotRecordedError, NoDeviceActivityError, OpNotFoundError, QueryError
from ..tables import format_us, nearest, plural, printable, render_table
from .inductor_ranges import inductors_range, is_graph_call
from .kernel_text import GLOB, glob_in_message
from .kernels import KernelList
from .measured import MODULE_RANGE_PREFIX

V = TypeVar("V")


# An op table's time columns and what they hold, in every table of ops by name (OpTable.table, the
# timeline page; `kernelprof show --ops`'s tree has its own, per row): an op's figures sum its
# occurrences and its children, which neither "cpu us" nor "device us" said (aten::linear's 122.3
# was three linears' time, their addmms within).
# The device time holds the op's memcpys and memsets too: aten::mm's 166.8 over GEMMs adding to
# 165.2 read as a miscount where the note said nothing of cuBLAS's memsets.
# Each header says whose figures they are, as the kernel table's time does (`median us`, `call 1 us`):
# a failure's table of medians and the timeline page's call 1 both read `cpu us (all)`, aten::clamp_min
# 13.9 in one and 13.5 in the other, under a heading and a note that spoke of "the call" in a profile of 3.
OP_TIME_HEADERS = ("cpu us (all)", "device us (all)")


def op_time_headers(whose: str = "") -> tuple[str, str]:
    """The time columns' headers, after ``whose`` figures they are (``median``, ``call 1``, or none)."""
    prefix = f"{whose} " if whose else ""
    cpu, device = OP_TIME_HEADERS
    return f"{prefix}{cpu}", f"{prefix}{device}"


def op_times_note(medians: int | None = None, device: bool = True) -> str:
    """The line under an op table: what ``(all)`` sums, over how many calls ``median`` is taken
    (where the table holds medians), and what the device time holds (where it has one)."""
    parts = ["all: each op's occurrences in a call summed, its children included"]
    if medians is not None:
        parts.append(f"median: over the {medians} calls")
    if device:
        parts.append("device time: its kernels, memcpys and memsets")
    return "(" + "; ".join(parts) + ")"


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

    def __repr__(self) -> str:
        # One line, in the documented names (``children``, not the field it reads), the names as
        # every output shows them.
        device = "" if self.subtree_device_us is None else f", device {format_us(self.subtree_device_us)}us"
        children = "[" + ", ".join(repr(printable(c)) for c in self.child_names) + "]"
        vary = ", children_vary=True" if self.children_vary else ""
        return (
            f"Op({printable(self.name)!r}, count={self.count}, cpu {format_us(self.cpu_time_us)}us, "
            f"self {format_us(self.self_cpu_time_us)}us{device}, children={children}{vary})"
        )

    def _device(self, value: float | None) -> float:
        __tracebackhide__ = True
        if value is None:
            self.kernels.require_measured()  # the profile's own reason first
            raise NoDeviceActivityError(f"no GPU activity was recorded for {printable(self.name)}")
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


@dataclass(frozen=True)
class OpTreeNode:
    """One row of a call's op tree (``OpTable.tree()``, ``kernelprof show --ops``): the
    occurrences of op ``name`` under the ops above it (the path from a top-level op), with the
    figures of those occurrences only, so that a node never exceeds the node it is under. Its
    ``children`` are the ops inside those occurrences, in the order first seen. As by name, an
    occurrence inside one of its name is part of that one."""

    name: str
    count: int
    cpu_time_us: float
    device_time_us: float | None  # None where no GPU activity was recorded
    children: tuple[OpTreeNode, ...] = field(repr=False)


OpLoader = Callable[[], tuple[Sequence[str], Callable[[str], Op]]]
OpTreeLoader = Callable[[], tuple[OpTreeNode, ...]]

_NO_TREE = (
    "the op tree is one call's (its figures are that call's, not medians): "
    "read prof.fastest_call.ops.tree() or prof.calls[i].ops.tree()"
)


def _bare(name: str) -> str:
    """An op's name without its namespace, lower case: ``aten::linear`` -> ``linear``."""
    return name.split("::", 1)[-1].lower()


def nearest_ops(name: str, names: Iterable[str], n: int = 3) -> list[str]:
    """The op names nearest to ``name``, best first: the same op in another namespace (or case),
    then names close to it compared without their namespace, then names that hold it or that it
    holds (``gelu`` -> ``aten::gelu_backward``, ``aten::addmm`` -> ``aten::mm``).

    Without the namespace, because every ATen op shares ``aten::``: compared whole, a typo such
    as ``aten::linearr`` came out near ``aten::t`` and ``aten::addmm``."""
    pool = list(dict.fromkeys(names))
    asked = _bare(name).strip("*?")
    bare = {candidate: _bare(candidate) for candidate in pool}
    same = [c for c in pool if bare[c] == asked]
    by_bare: dict[str, list[str]] = {}
    for candidate, short in bare.items():
        by_bare.setdefault(short, []).append(candidate)
    close = [c for short in difflib.get_close_matches(asked, list(by_bare), n=n, cutoff=0.6) for c in by_bare[short]]
    holds = [c for c in pool if len(asked) >= 2 and asked in bare[c]]
    held = [c for c in pool if len(bare[c]) >= 2 and bare[c] in asked]
    return list(dict.fromkeys([*same, *close, *holds, *held]))[:n]


# How many of the names that ran a "did not run" error lists where none is near the name asked.
_FIRST_RAN = 5


class _NamedTable(Mapping[str, V]):
    """A mapping whose names are worked out on first use (``_loaded``: the names as a dict's
    keys, in order, so that a lookup is one hash and not a scan; a call can run tens of
    thousands of user ranges), with the "did not run" error naming the nearest names."""

    __slots__ = ()
    _noun = "op"  # what the table names, in its messages
    _where = "prof.ops"

    def _loaded(self) -> dict[str, None]:
        raise NotImplementedError

    def _nearest(self, name: str, names: Iterable[str]) -> list[str]:
        return nearest(name, names)

    def _ran_in(self) -> str:
        """Where the table's names ran, as its "did not run" error says it."""
        return "the profiled call"

    def _asked_as(self) -> str:
        """How a test names this table (``prof.ops``)."""
        return self._where

    def _suggested(self, name: str) -> str:
        """A nearest name as the "did not run" error shows it."""
        return printable(name)  # the names come from the trace: each shown on the message's line

    def _not_found_why(self, name: str) -> str:
        """Why ``name`` may be missing, where the table can tell (a sentence, or "")."""
        return ""

    def _not_run(self, what: str, name: str, names: Iterable[str]) -> str:
        names = list(names)
        close = [self._suggested(n) for n in self._nearest(name, names)]
        hint = f"; nearest: {', '.join(close)}" if close else ""
        if not close and names:
            # None near (aten::matmul where aten::linear ran): the first that ran, not a bare "did not run" (a trial).
            first = ", ".join(printable(n) for n in names[:_FIRST_RAN])
            hint = f"; {self._noun}s that ran: {first}{', ...' if len(names) > _FIRST_RAN else ''}"
        why = self._not_found_why(name)
        # A test that means "it must not run" wrote prof.ops[name].count == 0 (a trial): say what asks that.
        absent = f". To assert that it does not run: assert {name!r} not in {self._asked_as()}"
        return f"{what} {name!r} did not run in {self._ran_in()}{hint}{'. ' + why if why else ''}{absent}"

    def __contains__(self, name: object) -> bool:
        """``"aten::mm" in prof.ops`` asks for that exact name. ``in`` never reads a pattern as a
        name: a string that names nothing here but, read as a glob, matches some names
        (``"aten::*"``) is a :class:`QueryError`; a glob that matches none is False."""
        __tracebackhide__ = True
        if not isinstance(name, str):
            return False
        names = self._loaded()
        if name in names:
            return True
        if GLOB.search(name):
            globbed = [n for n in names if fnmatch.fnmatchcase(n, name)]
            if globbed:
                instead = f"any(fnmatch.fnmatchcase(name, {name!r}) for name in {self._where})"
                raise QueryError(glob_in_message(name, globbed, self._noun, instead))
        return False

    def get(self, name: str, default: Any = None) -> Any:
        """``prof.ops.get("aten::mm")``: the op, or ``default`` where none of that exact name ran;
        a pattern that names nothing here but matches names is a :class:`QueryError`, as in ``in``
        (``get("aten::m*")`` returning None would read as "no such op")."""
        __tracebackhide__ = True
        return self[name] if name in self else default  # noqa: SIM401 (Mapping.get is what this replaces)

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


class OpTable(_NamedTable[Op]):
    """CPU ops of one call by name, in first-seen order.

    Built on first use: the op tree is not needed for kernel queries, and a trace of
    thousands of calls has a table per call that is mostly never looked at. ``load``
    returns the op names and a function that makes one ``Op``.
    """

    __slots__ = ("_load", "_made", "_make", "_names", "_tree", "call", "medians")

    def __init__(
        self, load: OpLoader, tree: OpTreeLoader | None = None, *, call: int | None = None, medians: int | None = None
    ) -> None:
        self._load: OpLoader | None = load
        self._tree = tree
        # Whose figures the table holds: each op's median over ``medians`` calls, or the own
        # figures of the call numbered ``call``; neither where the maker did not say.
        self.call = call
        self.medians = medians
        self._names: dict[str, None] = {}
        self._make: Callable[[str], Op] | None = None
        self._made: dict[str, Op] = {}

    def _loaded(self) -> dict[str, None]:
        if self._load is not None:
            names, self._make = self._load()
            self._names = dict.fromkeys(names)
            self._load = None
        return self._names

    def _nearest(self, name: str, names: Iterable[str]) -> list[str]:
        return nearest_ops(name, names)

    def _suggested(self, name: str) -> str:
        # A trial: aten::gelu's nearest was Inductor's launch range of the kernel it was fused into,
        # suggested as an op of that name.
        inductors = inductors_range(self[name])
        return printable(name) + (f" (Inductor's range: {inductors}, not an op)" if inductors else "")

    def _not_found_why(self, name: str) -> str:
        # Inductor's graph call among the ops: what it compiled ran as its kernels, no op of it recorded.
        if not any(is_graph_call(n) for n in self._loaded()):
            return ""
        return (
            "torch.compile ran this code: the ops Inductor compiled are its kernels, not ops (a Triton "
            "kernel's name lists the ops fused into it); ask prof.kernels"
        )

    def _ran_in(self) -> str:
        if self.medians is not None:
            return f"the {self.medians} profiled calls"
        return "the profiled call" if self.call is None else f"call {self.call}"

    def _asked_as(self) -> str:
        return self._where if self.medians is not None or self.call is None else f"prof.calls[{self.call}].ops"

    def __getitem__(self, name: str) -> Op:
        __tracebackhide__ = True
        op = self._made.get(name)
        if op is not None:
            return op
        names = self._loaded()
        if name not in names:
            raise OpNotFoundError(self._not_run("op", name, names))
        assert self._make is not None
        op = self._made[name] = self._make(name)
        return op

    @property
    def names(self) -> list[str]:
        __tracebackhide__ = True
        return list(self._loaded())

    def tree(self) -> tuple[OpTreeNode, ...]:
        """The call's op tree, its top-level ops first: each node the occurrences of an op under
        the ops above it. A profile's own table (medians over its calls) has none: a
        :class:`QueryError` that says whose to read."""
        __tracebackhide__ = True
        if self._tree is None:
            raise QueryError(_NO_TREE)
        return self._tree()

    @property
    def whose(self) -> str:
        """Whose figures the table holds, as its time headers say: ``median``, ``call 1`` or ``""``."""
        return "median" if self.medians is not None else "" if self.call is None else f"call {self.call}"

    @property
    def heading(self) -> str:
        """The words above the table in a failure: whose ops they are, never "the call" of a
        profile of several (its times are the medians the time headers and the note name)."""
        if self.medians is not None:
            return f"the ops of the {self.medians} calls"
        return "the ops of the call" if self.call is None else f"the ops of call {self.call}"

    def time_headers(self) -> tuple[str, str]:
        return op_time_headers(self.whose)

    def times_note(self, device: bool = True) -> str:
        return op_times_note(self.medians, device)

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
                    # "-" as for device time: no GPU activity recorded is not zero kernels measured.
                    str(len(op.kernels)) if op.kernels.measured else "-",
                )
            )
        table = render_table(("op", "count", *self.time_headers(), "kernels"), rows, right=(1, 2, 3, 4))
        return f"{table}\n{self.times_note()}"

    def __repr__(self) -> str:
        return f"OpTable({plural(len(self._loaded()), 'op')})"

    def __str__(self) -> str:
        return self.table()  # print() gives the table, as IPython does

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self) if cycle else str(self))


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
        return self.op.kernels._kept(lambda k: k.module == self.name)

    @property
    def device_time_us(self) -> float:
        return self.op.device_time_us

    @property
    def cpu_time_us(self) -> float:
        return self.op.cpu_time_us

    def __repr__(self) -> str:
        # One line, as every repr: pytest prints it in an assertion's "where" lines. The kernels'
        # table is str(), what print() and IPython show.
        if not self.op.kernels.measured:
            return f"ModuleView({printable(self.name)}: {plural(self.count, 'call')}, no GPU activity recorded)"
        return (
            f"ModuleView({printable(self.name)}: {plural(self.count, 'call')}, {plural(len(self.kernels), 'kernel')}, "
            f"{format_us(self.device_time_us)} us on the GPU)"
        )

    def __str__(self) -> str:
        return f"{self!r}:\n{self.kernels.table()}" if self.op.kernels.measured else repr(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self) if cycle else str(self))


_NO_MODULES = (
    "this profile has no nn.Module ranges: profile an nn.Module with modules=True (or --kernelprof-modules, "
    "ini kernelprof_modules), or pass modules=model for a function that calls one; a trace recorded "
    "without them cannot tell which module launched a kernel"
)


class ModuleTable(_NamedTable[ModuleView]):
    """The modules of one call by name (``named_modules()`` names; the model under its class
    name), in the order they first ran. Empty is an error: a profile recorded without
    ``modules=True`` must not read as "no module launched anything"."""

    __slots__ = ("_names", "_ops")
    _noun = "module"
    _where = "prof.modules"

    def __init__(self, ops: OpTable) -> None:
        self._ops = ops
        self._names: dict[str, None] | None = None

    def _recorded(self) -> dict[str, None]:
        """The modules' names, none where the profile recorded no module ranges."""
        if self._names is None:
            prefix = len(MODULE_RANGE_PREFIX)
            self._names = dict.fromkeys(n[prefix:] for n in self._ops if n.startswith(MODULE_RANGE_PREFIX))
        return self._names

    def _loaded(self) -> dict[str, None]:
        __tracebackhide__ = True
        names = self._recorded()
        if not names:
            raise ModuleNotRecordedError(_NO_MODULES)
        return names

    def __getitem__(self, name: str) -> ModuleView:
        __tracebackhide__ = True
        names = self._loaded()
        if name not in names:
            raise ModuleNotRecordedError(self._not_run("module", name, names))
        return ModuleView(name, self._ops[MODULE_RANGE_PREFIX + name])

    def table(self) -> str:
        rows = []
        for view in (self[name] for name in self._loaded()):
            device = "-" if view.op.subtree_device_us is None else format_us(view.op.subtree_device_us)
            kernels = str(len(view.kernels)) if view.kernels.measured else "-"
            rows.append((view.name, str(view.count), device, kernels))
        return render_table(("module", "calls", "device us", "kernels"), rows, right=(1, 2, 3))

    def __repr__(self) -> str:
        # One line, as every repr (pytest prints it in an assertion's "where" lines), and no error:
        # an error there would hide the assertion's own line.
        names = self._recorded()
        return f"ModuleTable({plural(len(names), 'module')})" if names else "ModuleTable(none recorded)"

    def __str__(self) -> str:
        # print() gives the table, as IPython does; where none was recorded, how to record them.
        return self.table() if self._recorded() else f"ModuleTable(none recorded): {_NO_MODULES}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self) if cycle else str(self))
