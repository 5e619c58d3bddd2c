"""What changed between two calls' op trees (``kernelprof diff --ops``): each op at its place,
the path of op names from a top-level op to it, as ``OpTable.tree()`` groups the occurrences
(``kernelprof show --ops`` shows the same rows), its occurrence count there on each side.

Counts only: an op's CPU time varies from run to run and from call to call, so a comparison of
times would flag noise; its count is what a change to the code changes. Traces recorded without
a GPU have op trees too: they have this to compare where the kernel diff has nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..health import REGION_PREFIX
from ..model import OpTreeNode

# Names that differ between two runs of the same code, matched without the part that does:
# Dynamo numbers its compiled regions in the order the process compiled them ("Torch-Compiled
# Region: 2/0" here, "0/0" in a run of this test alone), and Inductor's range around a compiled
# graph's call carries the graph's hash, which a torch or Triton upgrade changes.
_RUN_SPECIFIC = (
    (re.compile(rf"^{re.escape(REGION_PREFIX)}: \d+/\d+$"), REGION_PREFIX),
    (re.compile(r"^## Call CompiledFxGraph \w+ ##$"), "## Call CompiledFxGraph ##"),
)


def place_name(name: str) -> str:
    """The name an op is matched by at its place: its own, but for the parts that change from
    run to run (``_RUN_SPECIFIC``)."""
    for pattern, stable in _RUN_SPECIFIC:
        if pattern.match(name):
            return stable
    return name


@dataclass(frozen=True)
class OpCount:
    """An op at one place of the merged tree: ``depth`` ops above it; its count there in a and
    in b, None where that side has no such op at that place."""

    name: str
    depth: int
    count_a: int | None
    count_b: int | None

    @property
    def changed(self) -> bool:
        return self.count_a != self.count_b


@dataclass(frozen=True)
class OpTreeDiff:
    """``rows``: the places whose counts differ, each with the places above it (which may not
    differ) so that it reads at its place, in the order of the tree (a's order, then what only b
    has); ``compared``: how many places the two trees hold together."""

    rows: tuple[OpCount, ...]
    compared: int

    @property
    def changed(self) -> tuple[OpCount, ...]:
        return tuple(row for row in self.rows if row.changed)

    @property
    def same(self) -> bool:
        return not self.changed


def _merged(a: Sequence[OpTreeNode], b: Sequence[OpTreeNode]) -> list[tuple[str, OpTreeNode | None, OpTreeNode | None]]:
    """The children of one place on both sides, matched by name (``place_name``): a's in its
    order, named as a names them, then b's own. A tree holds one node per name under a place
    (``OpTable.tree()``), so a name matches once; two compiled regions of one place that differ
    only in their compile ids would match one (the first)."""
    in_b = {place_name(node.name): node for node in b}
    names_a = {place_name(node.name) for node in a}
    return [(node.name, node, in_b.get(place_name(node.name))) for node in a] + [
        (node.name, None, node) for node in b if place_name(node.name) not in names_a
    ]


def diff_op_trees(a: Sequence[OpTreeNode], b: Sequence[OpTreeNode]) -> OpTreeDiff:
    """The op trees ``a`` and ``b`` (each a call's ``ops.tree()``) compared place by place. An op
    that one side lacks at a place counts None there, and so does everything inside it. A loop,
    not a recursion: a trace nests ops thousands deep."""
    # Every place in depth-first order, with the index of the place above it (-1 at the top).
    places: list[tuple[OpCount, int]] = []
    stack = [(entry, 0, -1) for entry in reversed(_merged(a, b))]
    while stack:
        (name, node_a, node_b), depth, parent = stack.pop()
        here = len(places)
        places.append(
            (OpCount(name, depth, node_a.count if node_a else None, node_b.count if node_b else None), parent)
        )
        children = _merged(node_a.children if node_a else (), node_b.children if node_b else ())
        stack.extend((entry, depth + 1, here) for entry in reversed(children))
    shown = [False] * len(places)
    for index, (row, _) in enumerate(places):
        if not row.changed:
            continue
        # The place and those above it, up to the first already shown (its own are then too).
        while index >= 0 and not shown[index]:
            shown[index] = True
            index = places[index][1]
    return OpTreeDiff(
        rows=tuple(row for (row, _), keep in zip(places, shown, strict=True) if keep), compared=len(places)
    )
