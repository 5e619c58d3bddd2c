"""What changed between two kernel sequences: the view that explains a fusion regression.

A diff takes any ``KernelName``: a live ``Kernel`` or a stored ``BaselineKernel`` (both are
decoded names with more fields).
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..decode import KernelName
from ..tables import display_name, format_us

# A diff of live kernels or of stored ones; a key function takes what the sequences hold.
K = TypeVar("K", bound=KernelName)


@dataclass(frozen=True)
class Change:
    """One line of a kernel diff: ``=`` same, ``-`` removed, ``+`` added, ``~`` the same kind
    of kernel with another name or launching op."""

    mark: str
    before: KernelName | None
    after: KernelName | None


@dataclass(frozen=True)
class KernelDiff:
    changes: tuple[Change, ...]
    fusions: tuple[tuple[tuple[KernelName, ...], KernelName], ...]  # (removed kernels, the added kernel fusing them)

    @property
    def same(self) -> bool:
        return all(c.mark == "=" for c in self.changes)


def shape_key(kernel: KernelName) -> tuple[str, str, str | None, tuple[str, ...]]:
    """What a kernel is, without its name: kind, family, layout and fused ops.

    The one "same kernel, other name" test: ``diff --by shape`` aligns on it, renamed kernels
    pair up on it, and baselines compare it where they do not compare names.
    """
    return (kernel.kind, kernel.family, kernel.layout, tuple(kernel.fused_ops))


def diff_kernels(
    before: Sequence[K],
    after: Sequence[K],
    *,
    by: str | Callable[[K], Hashable] = "name",
) -> KernelDiff:
    """Align two sequences by name (``by="name"``), by kind/family/layout/fused ops (``"shape"``)
    or by any key function.

    In a replaced stretch, kernels of the same :func:`shape_key` pair up as changed
    (``~``: another cuBLAS tile, say); the rest are removed and added. An added kernel that
    computes the ops of more than one removed kernel is reported as fusing them: each removed
    kernel fuses into one added kernel at most, so a one-for-one replacement (64 ATen ``tanh``
    kernels by 64 ``triton_poi_fused_tanh_0``) is no fusion.
    """

    def token(k: K) -> Hashable:
        if callable(by):
            return by(k)
        return (k.name,) if by == "name" else shape_key(k)

    matcher = difflib.SequenceMatcher(a=[token(k) for k in before], b=[token(k) for k in after], autojunk=False)
    changes: list[Change] = []
    removed: list[KernelName] = []
    added: list[KernelName] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            changes.extend(Change("=", a, b) for a, b in zip(before[i1:i2], after[j1:j2], strict=True))
            continue
        olds, news = list(before[i1:i2]), list(after[j1:j2])
        for old in list(olds):
            twin = next((new for new in news if shape_key(new) == shape_key(old)), None)
            if twin is not None:
                changes.append(Change("~", old, twin))
                olds.remove(old)
                news.remove(twin)
        changes.extend(Change("-", old, None) for old in olds)
        changes.extend(Change("+", None, new) for new in news)
        removed.extend(olds)
        added.extend(news)
    return KernelDiff(tuple(changes), _fusions(removed, added))


def _fusions(
    removed: Sequence[KernelName], added: Sequence[KernelName]
) -> tuple[tuple[tuple[KernelName, ...], KernelName], ...]:
    """(removed kernels, the added kernel that fuses them), in launch order. Each added kernel
    takes the earliest removed kernels not yet taken that compute an op of it that the ones it
    took do not: one per op, so that the add, tanh and mul of each layer go to that layer's
    fused kernel, not all of them to every one."""
    taken: set[int] = set()
    fusions = []
    for new in added:
        ops = set(new.fused_ops)
        covered: list[tuple[int, KernelName]] = []
        done: set[str] = set()
        for index, old in enumerate(removed):
            if index not in taken and old.fused_ops and set(old.fused_ops) <= ops and not set(old.fused_ops) <= done:
                covered.append((index, old))
                done.update(old.fused_ops)
        if len(covered) > 1:
            taken.update(index for index, _ in covered)
            fusions.append((tuple(old for _, old in covered), new))
    return tuple(fusions)


def _describe(kernel: KernelName) -> str:
    layout = f" {kernel.layout}" if kernel.layout else ""
    ops = f" [{','.join(kernel.fused_ops)}]" if kernel.fused_ops else ""
    return f"{kernel.kind}/{kernel.family}{layout}{ops}  {display_name(kernel.name, 80)}"


def _differences(before: KernelName, after: KernelName, label_a: str, label_b: str) -> list[str]:
    """What tells two kernels of one shape apart: the name, the op that launched them (a
    ``Kernel``'s or a stored kernel's; a bare decoded name has none)."""
    lines = []
    if before.name != after.name:
        lines.append(f"renamed in {label_b}: {display_name(after.name, 80)}")
    op_a, op_b = getattr(before, "op", None), getattr(after, "op", None)
    if op_a != op_b:
        lines.append(f"op: {op_a or '-'} in {label_a}, {op_b or '-'} in {label_b}")
    return lines


def render_diff(diff: KernelDiff, label_a: str = "a", label_b: str = "b") -> list[str]:
    lines = []
    for change in diff.changes:
        if change.mark == "~":
            assert change.before is not None
            assert change.after is not None
            lines.append(f"~ {_describe(change.before)}")
            lines.extend(f"    {line}" for line in _differences(change.before, change.after, label_a, label_b))
        elif change.mark == "=" and change.before is not None and change.after is not None:
            # Aligned without names (by shape, or a baseline that ignores library names): the
            # name this run has is the one to read, the other one is told below it.
            lines.append(f"= {_describe(change.after)}")
            if change.before.name != change.after.name:
                lines.append(f"    named in {label_a}: {display_name(change.before.name, 80)}")
        else:
            kernel = change.before if change.before is not None else change.after
            assert kernel is not None
            lines.append(f"{change.mark} {_describe(kernel)}")
    for covered, fused in diff.fusions:
        shown = " + ".join(f"{','.join(k.fused_ops)} ({k.family} {k.kind})" for k in covered)
        lines.append(f"fused: {shown} -> {display_name(fused.name, 80)}")
    return lines


def count_changes(before: Sequence[KernelName], after: Sequence[KernelName]) -> list[str]:
    """``kind: 2 -> 1`` for each kind whose count changed."""
    a, b = Counter(k.kind for k in before), Counter(k.kind for k in after)
    return [f"{kind}: {a[kind]} -> {b[kind]}" for kind in sorted(set(a) | set(b)) if a[kind] != b[kind]]


def time_change(before_us: float, after_us: float) -> str:
    if before_us <= 0:
        return f"{format_us(before_us)}us -> {format_us(after_us)}us"
    return f"{format_us(before_us)}us -> {format_us(after_us)}us ({(after_us - before_us) / before_us:+.1%})"
