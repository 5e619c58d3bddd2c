"""CPU ops -> the op forest of one call: ops by name with children, kernels and device
time; and each op's chain of enclosing ranges, which ``Kernel.ops`` reads."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import TypeVar

from ..model import Kernel, KernelList, Op, OpTreeNode
from ..model.inductor_ranges import is_graph_call as is_graph_call  # assemble/kernels.py imports them from here
from ..model.inductor_ranges import is_inductors_range as is_inductors_range  # show --ops, the timeline page
from ..model.inductor_ranges import is_launch_range as is_launch_range
from ..traces import RawEvent

T = TypeVar("T")


class _OpNode:
    __slots__ = (
        "children",
        "device_ns",
        "end",
        "kernels",
        "name",
        "nested",
        "self_device_ns",
        "start",
        "subtree_kernels",
    )

    def __init__(self, event: RawEvent) -> None:
        self.name = event.name
        self.start = event.start
        self.end = event.end
        self.children: list[_OpNode] = []
        self.kernels: list[tuple[int, Kernel]] = []  # (position in the call, kernel)
        self.subtree_kernels: list[tuple[int, Kernel]] = self.kernels
        self.self_device_ns = 0
        self.device_ns = 0
        self.nested = False  # inside an op of its name on its thread: part of that one's occurrence


def ops_by_thread(ops: Sequence[RawEvent]) -> list[list[RawEvent]]:
    """The ops of each thread, in nesting order: by start, the longer first."""
    by_thread: dict[int, list[RawEvent]] = {}
    for e in ops:
        found = by_thread.get(e.thread)
        if found is None:
            by_thread[e.thread] = [e]
        else:
            found.append(e)
    threads = list(by_thread.values())
    for thread_events in threads:
        # Two stable sorts by key functions: cheaper than one by a tuple key, and nearly free
        # on events that arrive in order.
        thread_events.sort(key=_negative_end)
        thread_events.sort(key=_START)
    return threads


_START = operator.attrgetter("start")

# The most enclosing ranges a chain keeps (``Kernel.ops``, ``Sync.ops``, a sync's Python frames):
# the outermost and the innermost half of it. Real traces nest 20 to 50 deep; a crafted one
# thousands deep would otherwise cost depth x items in time and memory (6,000 x 6,000: 1 GB).
MAX_CHAIN = 256
_HALF = MAX_CHAIN // 2


def bounded_chain(chain: Sequence[T]) -> tuple[T, ...]:
    """``chain`` as a tuple of at most ``MAX_CHAIN``: its outermost and innermost ``MAX_CHAIN // 2``."""
    if len(chain) <= MAX_CHAIN:
        return tuple(chain)
    return (*chain[:_HALF], *chain[-_HALF:])


def _negative_end(e: RawEvent) -> int:
    return -e.end


def _parents(ops: Sequence[RawEvent]) -> dict[RawEvent, RawEvent | None] | None:
    """Each op's innermost enclosing op (None for a root); None where ``ops`` are not
    in nesting order on each thread (``ops_by_thread`` sorts them).

    Ranges nest by time on their thread, as in the op forest. Kineto's events come in that
    order, so one pass usually does.
    """
    parents: dict[RawEvent, RawEvent | None] = {}
    stacks: dict[int, list[RawEvent]] = {}
    thread: int | None = None
    stack: list[RawEvent] = []
    last_start, last_end = -1, 0
    for e in ops:
        if e.thread != thread:
            thread = e.thread
            stack = stacks.setdefault(thread, [])
            # The thread's last event is on top of its stack: every event is pushed.
            last_start, last_end = (stack[-1].start, stack[-1].end) if stack else (-1, 0)
        start, end = e.start, e.end
        if start < last_start or (start == last_start and end > last_end):
            return None
        last_start, last_end = start, end
        while stack and stack[-1].end < end:
            stack.pop()
        parents[e] = stack[-1] if stack else None
        stack.append(e)
    return parents


def op_forest(
    threads: Sequence[Sequence[RawEvent]],
    launched: Sequence[tuple[RawEvent, int, Kernel | None, int]],
    device_recorded: bool,
) -> tuple[list[str], Callable[[str], Op], Callable[[], tuple[OpTreeNode, ...]]]:
    """The op forest of one call, from its ops per thread in nesting order (``ops_by_thread``), with
    kernels and device time: its ops by name (the names, a function that makes one ``Op``) and a
    function that makes its op tree."""
    nodes_by_event: dict[RawEvent, _OpNode] = {}
    roots: list[_OpNode] = []
    ordered_nodes: list[_OpNode] = []
    for thread_events in threads:
        stack: list[_OpNode] = []
        open_names: dict[str, int] = {}  # how many of the stack's ops have each name: no scan per op
        for e in thread_events:
            node = _OpNode(e)
            nodes_by_event[e] = node
            while stack and stack[-1].end < e.end:
                open_names[stack.pop().name] -= 1
            if stack:
                stack[-1].children.append(node)
            else:
                roots.append(node)
            node.nested = open_names.get(node.name, 0) > 0
            open_names[node.name] = open_names.get(node.name, 0) + 1
            stack.append(node)
            ordered_nodes.append(node)
    ordered_nodes.sort(key=lambda n: n.start)
    for op_event, position, kernel, gpu_ns in launched:
        launcher = nodes_by_event.get(op_event)
        if launcher is not None:
            if kernel is not None:
                launcher.kernels.append((position, kernel))
            launcher.self_device_ns += gpu_ns
    for root in roots:
        _sum_subtree(root)
    names, make = _op_table(ordered_nodes, device_recorded)
    return names, make, lambda: _op_tree(sorted(roots, key=_START), device_recorded)


def _sum_subtree(root: _OpNode) -> None:
    """Device time and kernels of each node's subtree, computed once, bottom-up.

    Iterative post-order: op trees of compiled graphs can be deeper than the recursion limit.
    """
    stack: list[tuple[_OpNode, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if not done:
            stack.append((node, True))
            stack.extend((child, False) for child in node.children)
            continue
        device_ns = node.self_device_ns
        below: list[tuple[int, Kernel]] = []
        for child in node.children:
            device_ns += child.device_ns
            below.extend(child.subtree_kernels)
        node.device_ns = device_ns
        if below:
            node.subtree_kernels = sorted(node.kernels + below, key=lambda pair: pair[0])


def _occurrence_children(node: _OpNode) -> list[_OpNode]:
    """The children of one occurrence of an op by name: its child ops, each of its name (ATen's
    ``sum.dim_IntList`` calling ``sum.IntList_out``, both ``aten::sum``) replaced by its own
    children, being part of this occurrence and not another call of the op."""
    found: list[_OpNode] = []
    todo = list(reversed(node.children))
    while todo:
        child = todo.pop()
        if child.name == node.name:
            todo.extend(reversed(child.children))
        else:
            found.append(child)
    return found


def _op_table(nodes: Sequence[_OpNode], device_recorded: bool) -> tuple[list[str], Callable[[str], Op]]:
    # By name, an op's occurrences are its outermost ones: one inside an op of its name is part of
    # that one (aten::sum's kernel counted twice, its device time doubled, the op its own child).
    grouped: dict[str, list[_OpNode]] = {}
    for node in nodes:
        if not node.nested:
            grouped.setdefault(node.name, []).append(node)

    def make(name: str) -> Op:
        group = grouped[name]
        children = [_occurrence_children(n) for n in group]
        cpu_ns = sum(n.end - n.start for n in group)
        self_cpu_ns = cpu_ns - sum(c.end - c.start for found in children for c in found)
        kernels = [pair for n in group for pair in n.subtree_kernels]
        first_children = tuple(c.name for c in children[0])
        device_ns = sum(n.device_ns for n in group)
        self_device_ns = device_ns - sum(c.device_ns for found in children for c in found)
        return Op(
            name=name,
            count=len(group),
            cpu_time_us=cpu_ns / 1000.0,
            self_cpu_time_us=self_cpu_ns / 1000.0,
            child_names=first_children,
            children_vary=any(tuple(c.name for c in found) != first_children for found in children[1:]),
            kernels=KernelList(
                [k for _, k in kernels],
                unavailable=None if device_recorded else _UNRECORDED,
                positions=[position for position, _ in kernels],
            ),
            subtree_device_us=device_ns / 1000.0 if device_recorded else None,
            self_device_us=self_device_ns / 1000.0 if device_recorded else None,
        )

    return list(grouped), make


class _PathNode:
    """The occurrences of an op under one path of op names, while the tree is made."""

    __slots__ = ("children", "count", "cpu_ns", "device_ns", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0
        self.cpu_ns = 0
        self.device_ns = 0
        self.children: dict[str, _PathNode] = {}


def _op_tree(roots: Sequence[_OpNode], device_recorded: bool) -> tuple[OpTreeNode, ...]:
    """The op tree of one call: each occurrence added to the node of its path of names, so that
    each node's figures are those of its own occurrences (``show --ops`` repeated an op's totals
    over the call at every place it appeared: aten::fill_ 91.6us under an aten::zero_ of 84.3us).
    Loops, not recursion: op trees of compiled graphs nest deeper than the recursion limit."""
    top: dict[str, _PathNode] = {}
    todo: list[tuple[_OpNode, dict[str, _PathNode]]] = [(root, top) for root in reversed(roots)]
    while todo:
        node, siblings = todo.pop()
        path = siblings.get(node.name)
        if path is None:
            path = siblings[node.name] = _PathNode(node.name)
        path.count += 1
        path.cpu_ns += node.end - node.start
        path.device_ns += node.device_ns
        todo.extend((child, path.children) for child in reversed(_occurrence_children(node)))
    # Frozen nodes bottom-up: a post-order walk, each node made after its children.
    made: dict[int, OpTreeNode] = {}
    walk: list[tuple[_PathNode, bool]] = [(path, False) for path in top.values()]
    while walk:
        path, done = walk.pop()
        if not done:
            walk.append((path, True))
            walk.extend((child, False) for child in path.children.values())
            continue
        made[id(path)] = OpTreeNode(
            name=path.name,
            count=path.count,
            cpu_time_us=path.cpu_ns / 1000.0,
            device_time_us=path.device_ns / 1000.0 if device_recorded else None,
            children=tuple(made.pop(id(child)) for child in path.children.values()),
        )
    return tuple(made[id(path)] for path in top.values())


_UNRECORDED = "no GPU activity was recorded in this profile, so no op has kernels or device time"


class Chains:
    """The op chains of one call: each op's enclosing ranges, from one walk over all its ops.

    Made on first use: only kernels that Inductor launched need a chain at build time (for
    their ``op``), and ``Kernel.ops`` is read by few tests; walking every call's ops would
    otherwise add half to the build of a compiled training step. The call's kernels hold it
    (``Kernel.chains``, the model's ``OpChains``) and resolve their ``ops`` through it.
    """

    __slots__ = ("_chains", "_ops", "_parents")

    def __init__(self, ops: Sequence[RawEvent]) -> None:
        self._ops = ops
        self._parents: dict[RawEvent, RawEvent | None] | None = None
        self._chains: dict[RawEvent, tuple[str, ...]] = {}

    def of(self, launcher: RawEvent) -> tuple[str, ...]:
        """The launcher's chain, outermost first, ending with the launcher itself."""
        chain = self._chains.get(launcher)
        if chain is not None:
            return chain
        parents = self._parents
        if parents is None:
            parents = _parents(self._ops)
            if parents is None:
                parents = _parents([e for thread in ops_by_thread(self._ops) for e in thread]) or {}
            self._parents = parents
        # Up to the nearest op whose chain is known, then down, each op's chain made from its
        # parent's: an op's chain is made once, in at most MAX_CHAIN steps, however deep.
        # A launcher outside the call's ops (it began before the call's range) is its own chain.
        path = [launcher]
        parent = parents.get(launcher)
        while parent is not None and parent not in self._chains:
            path.append(parent)
            parent = parents[parent]
        known: tuple[str, ...] = self._chains[parent] if parent is not None else ()
        for op in reversed(path):
            known = self._chains[op] = (
                bounded_chain((*known, op.name)) if len(known) >= MAX_CHAIN else (*known, op.name)
            )
        return known

    def kernel_ops(self, launcher: RawEvent, kernel_name: str) -> tuple[str, ...]:
        """A kernel's ``ops``: its launcher's chain, without Inductor's range around its launch."""
        chain = self.of(launcher)
        return chain[:-1] if is_launch_range(launcher.name, kernel_name) else chain


def inductor_op(chain: tuple[str, ...]) -> str | None:
    """The op of a kernel Inductor launched, or a CUDA graph of its replayed: the innermost range
    around its launch range or graph call (``chain[-1]``) other than a graph call
    (``CompiledFunction``, ``Torch-Compiled Region: 0/0``)."""
    for name in reversed(chain[:-1]):
        if not is_graph_call(name):
            return name
    return None
