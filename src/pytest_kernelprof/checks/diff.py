"""What changed between two kernel sequences: the view that explains a fusion regression.

A diff takes any ``KernelName``: a live ``Kernel`` or a stored ``BaselineKernel`` (both are
decoded names with more fields).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..decode import KernelName
from ..model.counts import query_text
from ..model.kernel_text import kind_text
from ..tables import changed_parts, display_name, plural
from .alignment import align

# A diff of live kernels or of stored ones; a key function takes what the sequences hold.
K = TypeVar("K", bound=KernelName)


@dataclass(frozen=True)
class Change:
    """One line of a kernel diff: ``=`` same, ``-`` removed, ``+`` added, ``~`` changed: a
    kernel of the same :func:`shape_key` with another name, or one whose dtype moved (both
    known), a launching op that changed told under it. An unplaced kernel (no evidence said
    what it is) is never ``~`` for another name: its shape says nothing, so another name is
    another kernel."""

    mark: str
    before: KernelName | None
    after: KernelName | None


@dataclass(frozen=True)
class KernelDiff:
    changes: tuple[Change, ...]
    fusions: tuple[tuple[tuple[KernelName, ...], KernelName], ...]  # (removed kernels, the added kernel fusing them)
    # The reverse: (added kernels, the removed kernel that fused them), a fusion lost.
    splits: tuple[tuple[tuple[KernelName, ...], KernelName], ...] = ()

    @property
    def same(self) -> bool:
        return all(c.mark == "=" for c in self.changes)


def shape_key(kernel: KernelName) -> tuple[str, str, str | None, tuple[str, ...]]:
    """What a kernel is, without its name: kind, family, layout and fused ops.

    The one "same kernel, other name" test: ``diff --by shape`` aligns on it, renamed kernels
    pair up on it, and baselines compare it where they do not compare names. Not for unplaced
    kernels (``KernelName.unplaced``), whose shape says nothing: a diff pairs those by name.
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
    (``~``: another cuBLAS tile, say), unplaced kernels never; the rest are removed and added.
    An aligned kernel whose dtype moved (:func:`dtype_moved`) is changed too. An added kernel that
    computes the ops of more than one removed kernel is reported as fusing them: each removed
    kernel fuses into one added kernel at most, so a one-for-one replacement (64 ATen ``tanh``
    kernels by 64 ``triton_poi_fused_tanh_0``) is no fusion. The reverse, a removed kernel whose
    ops added kernels compute apart, is a split (a fusion lost: compiled before, eager after).
    """

    def token(k: K) -> Hashable:
        if callable(by):
            return by(k)
        if by == "name" or k.unplaced:
            return (k.name,)
        return shape_key(k)

    changes: list[Change] = []
    removed: list[KernelName] = []
    added: list[KernelName] = []
    for tag, i1, i2, j1, j2 in align([token(k) for k in before], [token(k) for k in after]):
        if tag == "equal":
            pairs = zip(before[i1:i2], after[j1:j2], strict=True)
            changes.extend(Change("~" if dtype_moved(a, b) else "=", a, b) for a, b in pairs)
            continue
        stretch_old, stretch_new = list(before[i1:i2]), list(after[j1:j2])
        renamed: list[Change] = []
        olds, news = _paired(stretch_old, stretch_new, renamed)
        changes.extend(_in_launch_order(stretch_old, stretch_new, renamed))
        removed.extend(olds)
        added.extend(news)
    return KernelDiff(tuple(changes), _fusions(removed, added), _fusions(added, removed))


def dtype_moved(before: KernelName, after: KernelName) -> bool:
    """Whether a kernel's dtype moved: known on both sides, and another. A kernel of one name
    that runs in fp32 where it ran in bf16 (an Inductor kernel recompiled) is no kernel kept."""
    return before.dtype is not None and after.dtype is not None and before.dtype != after.dtype


def _paired(olds: list[K], news: list[K], changes: list[Change]) -> tuple[list[K], list[K]]:
    """Pair each old kernel of a replaced stretch, in order, with the first new one of its shape
    not yet paired (a ``~`` change each); the olds and news left unpaired, in order. The news
    are kept by shape, so a long stretch costs one pass over each side. An unplaced kernel pairs
    with none: every one is ``other/unknown``, and a user kernel swapped for another is no rename."""
    waiting: dict[Hashable, deque[int]] = {}
    for position, new in enumerate(news):
        if not new.unplaced:
            waiting.setdefault(shape_key(new), deque()).append(position)
    paired: set[int] = set()
    left: list[K] = []
    for old in olds:
        twins = None if old.unplaced else waiting.get(shape_key(old))
        if twins:
            position = twins.popleft()
            paired.add(position)
            changes.append(Change("~", old, news[position]))
        else:
            left.append(old)
    return left, [new for position, new in enumerate(news) if position not in paired]


def _in_launch_order(olds: list[K], news: list[K], renamed: list[Change]) -> list[Change]:
    """A replaced stretch's changes in the order its kernels ran: ``renamed`` (the ``~`` pairs,
    in the order of their old kernels), the other olds removed and the other news added, each
    where it ran on its side. A ``~`` comes after the news added before its new kernel, so that a
    Triton kernel third on both sides is not printed first (a trial read the diff as launch order)."""
    new_positions: dict[int, deque[int]] = {}
    for index, new in enumerate(news):
        new_positions.setdefault(id(new), deque()).append(index)
    pairs = deque(renamed)
    paired_news: set[int] = set()
    order: list[tuple[Change, int | None]] = []  # a change, and its new kernel's position where it has one
    for old in olds:
        if pairs and pairs[0].before is old:
            change = pairs.popleft()
            paired = new_positions[id(change.after)].popleft()
            paired_news.add(paired)
            order.append((change, paired))
        else:
            order.append((Change("-", old, None), None))
    added = deque(index for index in range(len(news)) if index not in paired_news)
    changes: list[Change] = []
    for change, position in order:
        while position is not None and added and added[0] < position:
            changes.append(Change("+", None, news[added.popleft()]))
        changes.append(change)
    changes.extend(Change("+", None, news[rest]) for rest in added)
    return changes


def _fusions(
    removed: Sequence[KernelName], added: Sequence[KernelName]
) -> tuple[tuple[tuple[KernelName, ...], KernelName], ...]:
    """(removed kernels, the added kernel that fuses them), in launch order. Each added kernel
    takes the earliest removed kernels not yet taken that compute an op of it that the ones it
    took do not: one per op, so that the add, tanh and mul of each layer go to that layer's
    fused kernel, not all of them to every one.

    Of the removed kernels that compute the same ops, only the earliest not yet taken can be
    taken (once it is looked at, its ops are done): so each added kernel looks at that one of
    each set of ops within its own, not at every removed kernel."""
    untaken: dict[frozenset[str], deque[int]] = {}  # a set of ops -> the removed computing it, in order
    for index, old in enumerate(removed):
        mine = _ops(old)
        if mine:
            untaken.setdefault(mine, deque()).append(index)
    holding: dict[str, list[frozenset[str]]] = {}  # an op -> the sets of ops that hold it
    for ops in untaken:
        for op in ops:
            holding.setdefault(op, []).append(ops)
    fusions = []
    for new in added:
        ops = _ops(new)
        within = {mine for op in ops for mine in holding.get(op, ()) if mine <= ops and untaken[mine]}
        covered: list[frozenset[str]] = []
        done: set[str] = set()
        for _, mine in sorted((untaken[mine][0], mine) for mine in within):
            if not mine <= done:
                covered.append(mine)
                done.update(mine)
        if len(covered) > 1:
            taken = [untaken[mine].popleft() for mine in covered]
            fusions.append((tuple(removed[index] for index in taken), new))
    return tuple(fusions)


# What a GEMM's epilogue computes, as the op of the kernel it takes over: a bias epilogue is
# the add that a separate kernel did before.
_EPILOGUE_OPS = {"bias": "add"}
# The work a GEMM kernel does besides its epilogue, as an op no kernel name holds: a GEMM with a
# bias epilogue takes over a plain GEMM and an add kernel, and fuses them.
_GEMM_WORK = "<gemm>"


def _ops(kernel: KernelName) -> frozenset[str]:
    """A kernel's ops as fusion compares them: Inductor names its kernels after the ATen ops it
    lowered (``_softmax``, ``_unsafe_view``), eager kernels after the public op (``softmax``);
    a GEMM computes the GEMM itself and what its epilogue does (``bias``: an add)."""
    ops = frozenset(op.lstrip("_") for op in kernel.fused_ops)
    if kernel.kind != "gemm":
        return ops
    return frozenset({_GEMM_WORK, *(_EPILOGUE_OPS.get(op, op) for op in ops)})


def describe_kernel(kernel: KernelName) -> str:
    """One kernel as the text diff shows it (the timeline page's side-by-side rows too):
    ``pointwise/cublas (part of gemm) fp32  scal_kernel`` (:func:`kind_text`), then its dtype,
    layout, fused ops and name."""
    # An unknown dtype is "?", as the kernel tables print it: left out, a kernel of unknown dtype
    # reads like one of no dtype, and a line beside it with one reads as the only typed kernel.
    dtype = f" {kernel.dtype or '?'}"
    layout = f" {kernel.layout}" if kernel.layout else ""
    ops = f" [{','.join(kernel.fused_ops)}]" if kernel.fused_ops else ""
    return f"{kind_text(kernel)}{dtype}{layout}{ops}  {display_name(kernel.name)}"


def _fused_part(kernel: KernelName) -> str:
    """A kernel a fusion took over, in its ``fused:`` line: ``gelu (aten pointwise)``, and a
    kernel of no named op by what it is (``nvjet gemm``)."""
    what = f"{kernel.family} {kernel.kind}"
    return f"{','.join(kernel.fused_ops)} ({what})" if kernel.fused_ops else what


def _differences(
    before: KernelName, after: KernelName, label_a: str, label_b: str, ops_compared: bool = True
) -> list[str]:
    """What tells two kernels of one shape apart: the name, the dtype, the op that launched them
    (a ``Kernel``'s or a stored kernel's; a bare decoded name has none). ``ops_compared``: whether
    the diff aligned on the launching op too (a baseline's does); where not (``kernelprof diff``),
    the op line says it is told, not compared: a trial read it as the reason for the ``~``."""
    lines = []
    if before.name != after.name:
        # The line above shows b's kernel, as a `=` line does; a's name is told here, in the words
        # of a `=` line's (a trial read a's attributes on `~` lines and b's on `=` lines).
        shown = display_name(before.name)
        if shown == display_name(after.name):  # the shortening hid the very change: show where it is
            changed = changed_parts(before.name, after.name)
            lines.append(f"named otherwise in {label_a}, in a part the shown names leave out: {changed}")
        else:
            lines.append(f"named in {label_a}: {shown}")
    if before.dtype != after.dtype:
        # A dtype one side does not know moves nothing (dtype_moved): told, not compared.
        told = "dtype" if before.dtype and after.dtype else "dtype (? unknown, not compared)"
        lines.append(f"{told}: {before.dtype or '?'} in {label_a}, {after.dtype or '?'} in {label_b}")
    op_a, op_b = getattr(before, "op", None), getattr(after, "op", None)
    if op_a != op_b:
        told = "op" if ops_compared else "op (told, not compared)"
        lines.append(f"{told}: {op_a or '-'} in {label_a}, {op_b or '-'} in {label_b}")
    return lines


def render_diff(diff: KernelDiff, label_a: str = "a", label_b: str = "b", *, ops_compared: bool = True) -> list[str]:
    """The diff as lines: a stretch that repeats (one block per layer) once, with its count;
    then what each fused kernel took over, once per distinct fusion with its count, the kernels
    each lost fusion split into, likewise, and the
    removed kernels no added kernel took over, so that every removed kernel is told once."""
    lines = _repeats_folded([_change_lines(change, label_a, label_b, ops_compared) for change in diff.changes])
    fusions = Counter(
        (" + ".join(_fused_part(k) for k in covered), display_name(fused.name)) for covered, fused in diff.fusions
    )
    lines.extend(f"fused: {shown} -> {name}{_times(count)}" for (shown, name), count in fusions.items())
    splits = Counter(
        (display_name(fused.name), " + ".join(_fused_part(k) for k in parts)) for parts, fused in diff.splits
    )
    lines.extend(f"split: {name} -> {shown}{_times(count)}" for (name, shown), count in splits.items())
    fused_away = {id(kernel) for covered, _ in diff.fusions for kernel in covered}
    unfused = Counter(
        describe_kernel(change.before)
        for change in diff.changes
        if change.mark == "-" and change.before is not None and id(change.before) not in fused_away
    )
    if fusions and unfused:
        if len(unfused) <= UNFUSED_NAMED:
            lines.extend(f"removed, taken over by no added kernel: {shown}{_times(n)}" for shown, n in unfused.items())
        else:  # each is a - line above already: named again, they doubled a long diff (a trial)
            others = plural(sum(unfused.values()), "removed kernel")
            lines.append(f"removed, taken over by no added kernel: the other {others} (their - lines above)")
    return lines


UNFUSED_NAMED = 3  # removed kernels no fusion took over, named one by one up to this many kinds


def change_details(change: Change, label_a: str = "a", label_b: str = "b") -> list[str]:
    """What the text diff tells under one change's line (``dtype: bf16 in a, fp32 in b``, ``op: ...``,
    ``named in a: ...``), unindented: the timeline page puts them under the change's row."""
    return [line.strip() for line in _change_lines(change, label_a, label_b)[1:]]


def _times(count: int) -> str:
    return f"  x{count}" if count > 1 else ""


def _change_lines(change: Change, label_a: str, label_b: str, ops_compared: bool = True) -> tuple[str, ...]:
    if change.mark == "~":
        assert change.before is not None
        assert change.after is not None
        told = _differences(change.before, change.after, label_a, label_b, ops_compared)
        return (f"~ {describe_kernel(change.after)}", *(f"    {line}" for line in told))
    if change.mark == "=" and change.before is not None and change.after is not None:
        # Aligned without names (by shape, or a baseline that ignores library names): the
        # name this run has is the one to read, the other one is told below it.
        if change.before.name != change.after.name:
            return (f"= {describe_kernel(change.after)}", f"    named in {label_a}: {display_name(change.before.name)}")
        return (f"= {describe_kernel(change.after)}",)
    kernel = change.before if change.before is not None else change.after
    assert kernel is not None
    return (f"{change.mark} {describe_kernel(kernel)}",)


def _repeats_folded(entries: Sequence[tuple[str, ...]]) -> list[str]:
    """Each stretch of entries that repeats back to back (``period`` entries, ``count`` times)
    shown once under ``N times, back to back:``, the period chosen that folds the most entries;
    shown as it is where folding would not make it shorter (one line twice)."""
    lines: list[str] = []
    index = 0
    while index < len(entries):
        period, count = _longest_repeat(entries, index)
        block = sum(len(entry) for entry in entries[index : index + period])
        # Folded where that saves lines: one line twice read as a heading over a single line (a trial).
        if count * block > block + 1:
            lines.append(f"{count} times, back to back:")
            lines.extend(f"  {line}" for entry in entries[index : index + period] for line in entry)
            index += period * count
        else:
            lines.extend(entries[index])
            index += 1
    return lines


# The longest block a repeat is looked for in (a transformer layer's kernels, forward and
# backward, fit): longer ones are shown unfolded, and the search stays linear in the diff.
MAX_PERIOD = 64


def _longest_repeat(entries: Sequence[tuple[str, ...]], start: int) -> tuple[int, int]:
    """(period, count) of the repeat starting at ``start`` that covers the most entries."""
    best = (1, 1)
    for period in range(1, min(MAX_PERIOD, (len(entries) - start) // 2) + 1):
        if entries[start + period] != entries[start]:
            continue
        block = entries[start : start + period]
        count = 1
        while entries[start + count * period : start + (count + 1) * period] == block:
            count += 1
        if count > 1 and period * count > best[0] * best[1]:
            best = (period, count)
    return best


def count_changes(before: Sequence[KernelName], after: Sequence[KernelName]) -> list[str]:
    """``kind: 2 -> 1`` for each kind whose count changed. Where reductions or persistent ones
    changed and there are persistent ones, the last of their entries also says what
    ``count(kind='reduction')`` answers, which counts both (``KernelName.is_kind``): a compiled
    softmax's ``persistent_reduction: 0 -> 1; reduction: 1 -> 0`` is one reduction on either
    side to a test, which the entries alone read as one removed."""
    a, b = Counter(k.kind for k in before), Counter(k.kind for k in after)
    entries = {kind: f"{kind}: {a[kind]} -> {b[kind]}" for kind in sorted(set(a) | set(b)) if a[kind] != b[kind]}
    both = ("reduction", "persistent_reduction")
    last = next((kind for kind in both if kind in entries), None)
    if last is not None and (a["persistent_reduction"] or b["persistent_reduction"]):
        counted = " -> ".join(str(sum(1 for k in side if k.is_kind("reduction"))) for side in (before, after))
        entries[last] += f" ({query_text('count', None, 'reduction')}, persistent ones included: {counted})"
    return list(entries.values())


def dtype_changes(before: Sequence[KernelName], after: Sequence[KernelName]) -> list[str]:
    """``gemm: bf16 1 -> 0, fp32 0 -> 1`` for each kind whose kernels moved between dtypes: the
    dtypes known on both sides differ, or more than one dtype's count changed (a count that
    changed alone is a count change). Only known dtypes: a kernel whose dtype is unknown moved
    to no dtype (35 fp32 ATen kernels fused into 11 Triton ones of unknown dtype are a count
    change, not a move); ``unknown_dtypes`` counts those."""
    lines = []
    for kind in sorted({k.kind for k in (*before, *after)}):
        a = Counter(k.dtype for k in before if k.kind == kind and k.dtype)
        b = Counter(k.dtype for k in after if k.kind == kind and k.dtype)
        changed = [d for d in sorted(set(a) | set(b)) if a[d] != b[d]]
        if not a or not b or (set(a) == set(b) and len(changed) < 2):
            continue
        lines.append(f"{kind}: " + ", ".join(f"{d} {a[d]} -> {b[d]}" for d in changed))
    return lines


def unknown_dtypes(before: Sequence[KernelName], after: Sequence[KernelName]) -> list[tuple[str, int, int]]:
    """``("pointwise", 0, 11)`` for each kind whose count of kernels of unknown dtype (``?`` in
    the tables) changed: kernels that ``dtype_changes`` cannot compare."""
    a = Counter(k.kind for k in before if not k.dtype)
    b = Counter(k.kind for k in after if not k.dtype)
    return [(kind, a[kind], b[kind]) for kind in sorted(set(a) | set(b)) if a[kind] != b[kind]]


def summary_lines(before: Sequence[KernelName], after: Sequence[KernelName]) -> list[str]:
    """The lines a diff tells above its kernels, for the text diff, a baseline failure and the
    timeline page alike: the count changes by kind, the dtype changes."""
    lines = []
    if counts := count_changes(before, after):
        lines.append("count changes: " + "; ".join(counts))
    if dtypes := dtype_changes(before, after):
        lines.append("dtype changes: " + "; ".join(dtypes))
    return lines


def unknown_dtype_note(
    before: Sequence[KernelName], after: Sequence[KernelName], label_a: str = "a", label_b: str = "b"
) -> list[str]:
    """The note after a diff's kernels on the kernels of unknown dtype whose count by kind
    changed (``unknown_dtypes``), each side named (``label_a``, ``label_b``). Told above the
    kernels, as ``kernels of unknown dtype (dtype not compared): pointwise 1 -> 0``, a lost
    fusion's baseline failure read as a third regression; told after them as ``pointwise 0 -> 1``
    beside ``count changes: gemm: 2 -> 3``, it still read as a count change (a trial): each side's
    count is named by its side, no arrow, and the note says it is a limit of what is compared."""
    if not (unknown := unknown_dtypes(before, after)):
        return []
    counts = "; ".join(f"{n} in {label_a}, {m} in {label_b}" for _, n, m in unknown)
    if len(unknown) == 1:
        what = f"{unknown[0][0]} kernels of unknown dtype (?): {counts}"
    else:
        what = "kernels of unknown dtype (?): " + "; ".join(
            f"{kind} {n} in {label_a}, {m} in {label_b}" for kind, n, m in unknown
        )
    return [f"note: {what}; left out of the dtype comparison (a limit of what is compared, not a change)"]


def unplaced_lines(
    before: Sequence[KernelName], after: Sequence[KernelName], label_a: str, label_b: str, teach: str
) -> list[str]:
    """The line that counts the unplaced kernels of each side (kind ``other`` on both sides
    whatever they are, so the counts by kind cannot show them change), for the text diff and a
    baseline failure alike; ``teach``: where the user teaches the decoder."""
    a, b = sum(k.unplaced for k in before), sum(k.unplaced for k in after)
    if not a and not b:
        return []
    return [
        f"({plural(a, 'kernel')} of unknown kind in {label_a}, {b} in {label_b}: the counts by kind may not hold; "
        f"teach them with {teach})"
    ]


def time_figures(before_us: float, after_us: float) -> tuple[str, str, str]:
    """``("2.7us", "2.6us", "-3.6%")``: a time before and after, and the change (empty where the
    time before is 0), the figures with as many digits (one to three) as make them give the change
    shown to within half a point: where two round to one figure and yet differ (``2.68us``,
    ``2.71us``: ``2.7us -> 2.7us (+1.2%)`` read as a contradiction), and where the rounded figures
    give another change (``2.72us -> 2.59us (-4.7%)``: ``2.7us -> 2.6us`` is -3.7%, a trial)."""
    ratio = (after_us - before_us) / before_us if before_us > 0 else None

    def agrees(digits: int) -> bool:
        a, b = round(before_us, digits), round(after_us, digits)
        if before_us != after_us and a == b:
            return False
        # Within half a point, or 1% of a change as large as +3734.9% (5.8us -> 222.1us).
        return ratio is None or (a > 0 and abs((b - a) / a - ratio) <= max(0.005, 0.01 * abs(ratio)))

    digits = next((n for n in range(1, 3) if agrees(n)), 3)
    change = f"{ratio:+.1%}" if ratio is not None else ""
    return f"{before_us:.{digits}f}us", f"{after_us:.{digits}f}us", change


def time_change(before_us: float, after_us: float) -> str:
    """``before -> after (+x.x%)``, the figures of :func:`time_figures`."""
    before, after, change = time_figures(before_us, after_us)
    return f"{before} -> {after}" + (f" ({change})" if change else "")
