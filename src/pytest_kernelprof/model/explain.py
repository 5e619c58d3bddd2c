"""What a failed ``assert`` on a profile value says: lines for pytest's assertion report.

``explain(op, left, right)`` gives a short head (the comparison, what was counted and
matched) and a body (the kernel table, a diff of names), or None for values that are not
ours. The plugin shows both where pytest would show them whole, and otherwise the head
with the body in a report section, since pytest cuts a long explanation short unless run
with ``-vv``. ``restore(message, shown, whole)`` puts the whole explanation back into the
message pytest made of what it was shown, for the CI outputs. ``subject(*values)`` says what
values are about, by their types (``"syncs"`` for host syncs and copies, ``"kernels"``,
``"ops"``, ...), None for values that are not ours.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from ..health import CompileReport, GraphBreak, MemoryReading, MemoryReport
from ..tables import display_name, name_is, plural
from . import (
    CallProfile,
    CopyList,
    Count,
    Kernel,
    KernelCount,
    KernelList,
    KernelProfile,
    MemoryOp,
    ModuleTable,
    ModuleView,
    Op,
    OpTable,
    RuntimeCalls,
    Sync,
    SyncList,
)
from .kernel_matching import nearest_lines, undecided_lines
from .kernel_text import KernelNames, rows_text

# The most lines and characters a line an explanation holds (kernel tables of large models
# included: a table of more rows than this is not read line by line).
MAX_BODY_LINES = 2000
MAX_LINE_CHARS = 2000


@dataclass(frozen=True)
class Explanation:
    head: list[str]  # the first line is the comparison, as pytest writes it ("0 == 1")
    body: list[str]
    # The kernels whose whole table the body is, or holds: a report that shows the explanation
    # need not show that table again.
    table_of: KernelList | None = None

    def __post_init__(self) -> None:
        # An explanation is text for a person, and goes whole into report sections, JUnit XML and
        # CI logs: `names == ["x"] * 10**6` made 5 MB of them. Past the cap it says what it left.
        if len(self.body) > MAX_BODY_LINES:
            left = len(self.body) - MAX_BODY_LINES
            cut = [
                *self.body[:MAX_BODY_LINES],
                f"... {left:,} more lines left out (an explanation shows {MAX_BODY_LINES:,})",
            ]
            object.__setattr__(self, "body", cut)
        if any(len(line) > MAX_LINE_CHARS for line in self.body):
            object.__setattr__(self, "body", [_clip(line) for line in self.body])

    def fits(self, max_lines: int, max_chars: int) -> bool:
        """Whether pytest shows head and body whole under its limits (0: no limit)."""
        lines = [*self.head, *self.body]
        return (max_lines <= 0 or len(lines) <= max_lines) and (max_chars <= 0 or sum(map(len, lines)) <= max_chars)

    def shown(self, max_lines: int, max_chars: int) -> tuple[list[str], list[str]]:
        """(the lines for pytest, the lines for a report section: none when the body fits)."""
        if not self.body or self.fits(max_lines, max_chars):
            return [*self.head, *self.body], []
        pointer = (
            f"(the rest, {len(self.body)} lines, is in the 'kernelprof assertion' section below; -vv shows it here)"
        )
        return [*self.head, pointer], [*self.head[1:], *self.body]


def _clip(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[: MAX_LINE_CHARS - 40]}... ({len(line) - MAX_LINE_CHARS + 40:,} more characters)"


# difflib aligns in time about the product of the two lengths: past this, the names between the
# lists' common start and end are shown as one changed block (20,000 names each, half changed,
# took 28 s to align).
MAX_ALIGNED = 4_000_000
# Unchanged names kept on each side of a change; a longer run of them is told by its length.
CONTEXT = 3


def _name_diff(a: Sequence[str], b: Sequence[str]) -> list[str]:
    """The lines of a diff of two name lists (``- a``, ``+ b``, ``  both``), in time linear in
    their lengths past :data:`MAX_ALIGNED`, with long unchanged runs told by their length.

    The whole names are compared, each shown as tables show it (:func:`display_name`) unless
    another name of the two lists is shown alike: then whole, or the diff would say two names
    differ and show the same line twice (``f(int)`` and ``f``, both ``f``)."""
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    middle_a, middle_b = a[start : len(a) - end], b[start : len(b) - end]
    if len(middle_a) * len(middle_b) <= MAX_ALIGNED:
        middle = [line for line in difflib.ndiff(middle_a, middle_b) if not line.startswith("?")]
    else:
        middle = [f"- {name}" for name in middle_a] + [f"+ {name}" for name in middle_b]
    lines = [f"  {name}" for name in a[:start]] + middle + [f"  {name}" for name in a[len(a) - end :]]
    shown = _shown_names({*a, *b})
    return _runs(_fold_unchanged([line[:2] + shown[line[2:]] for line in lines]))


def _shown_names(names: set[str]) -> dict[str, str]:
    """Each name as a diff line shows it: its display name, or itself where that is another's too."""
    alike: dict[str, list[str]] = {}
    for name in names:
        alike.setdefault(display_name(name), []).append(name)
    return {name: name if len(group) > 1 else shown for shown, group in alike.items() for name in group}


def _fold_unchanged(lines: list[str]) -> list[str]:
    out: list[str] = []
    for unchanged, run in itertools.groupby(lines, key=lambda line: line.startswith("  ")):
        group = list(run)
        if unchanged and len(group) > 2 * CONTEXT + 1:
            group = [*group[:CONTEXT], f"  ... {len(group) - 2 * CONTEXT:,} names alike ...", *group[-CONTEXT:]]
        out.extend(group)
    return out


def _runs(lines: Sequence[str]) -> list[str]:
    """Each run of equal lines as one line with its length: a diff against ``["x"] * 10**5``
    says ``+ x  (100,000 times in a row)``, not the line 100,000 times."""
    out: list[str] = []
    for line, run in itertools.groupby(lines):
        count = sum(1 for _ in run)
        out.append(line if count == 1 else f"{line}  ({count:,} times in a row)")
    return out


# How deep pytest indents an explanation's lines after its first: two spaces at the top of an
# assertion's message, more inside a "where" clause (``assert f(x == y)``).
_INDENTS = tuple("  " * depth for depth in range(1, 6))


def restore(message: str, shown: Sequence[str], whole: Sequence[str]) -> str | None:
    """``message``, a failed assertion's as pytest made it from the lines ``shown`` (and cut
    for the terminal), with the explanation ``whole`` in their place; None where the message
    does not hold them (another assertion's).

    pytest writes the first line inside the assertion's own (``assert 0 == 1``), each next one
    on a line of its own, indented, and what followed the comparison after the last one
    (``) or 5 == 4)``). Where it cut them, its cut lines and its footer go, and so does what
    followed them, which the cut took apart."""
    lines = message.splitlines()
    if len(shown) == 1:  # a head alone: shown() gives pytest the whole of it
        return message if any(shown[0] in line for line in lines) else None
    for first, line in enumerate(lines):
        if shown[0] not in line:
            continue
        after = lines[first + 1 :]
        for indent in _INDENTS:
            found = _block(after, [indent + text for text in shown[1:]])
            if found is not None:
                end, rest = found
                kept = [*lines[: first + 1], *(indent + text for text in whole[1:])]
                return "\n".join([*kept[:-1], kept[-1] + rest, *after[end:]])
        for indent in _INDENTS:  # cut by pytest: its first lines stand, the rest goes
            head = after[0].removesuffix("...") if after else ""
            if head.startswith(indent) and len(head) > len(indent) and (indent + shown[1]).startswith(head):
                return "\n".join([*lines[: first + 1], *(indent + text for text in whole[1:])])
    return None


def _block(lines: Sequence[str], expected: Sequence[str]) -> tuple[int, str] | None:
    """(how many lines, what followed the last) where ``lines`` start with ``expected``."""
    if len(lines) < len(expected) or [*lines[: len(expected) - 1]] != [*expected[:-1]]:
        return None
    last = lines[len(expected) - 1]
    return (len(expected), last[len(expected[-1]) :]) if last.startswith(expected[-1]) else None


def explain(op: str, left: object, right: object) -> Explanation | None:
    """The explanation of ``left op right`` failing, where either side is a profile value."""
    if isinstance(left, KernelCount) and isinstance(right, KernelCount):
        return _counts(op, left, right)
    for count, other, flipped in ((left, right, False), (right, left, True)):
        if isinstance(count, KernelCount):
            return _count(op, count, other, flipped)
    # The first line is the comparison as pytest would write it, shortened; the next says what
    # was counted or compared, as a kernel count's does.
    compared = f"{_records_short(left)} {op} {_records_short(right)}"
    for side in (left, right):
        if isinstance(side, Count):
            lines = side.explain()
            return Explanation([f"{left!r} {op} {right!r}", lines[0]], lines[1:])
        if isinstance(side, SyncList | CopyList):
            times = f" (times: {side.times})" if isinstance(side, CopyList) and side.times and side.measured else ""
            # The table, and what would remove the records: said here, where the failure is read
            # (the profile's section under it leaves out what this said).
            body = [*side.table().splitlines(), *side.fix_lines()] if side.measured else []
            return Explanation([compared, side.headline() + times], body)
        if isinstance(side, list) and side and all(isinstance(item, GraphBreak) for item in side):
            return Explanation([compared, "the graph breaks:"], [str(item) for item in side])
    if op == "==" and any(isinstance(side, KernelNames) for side in (left, right)):
        return _name_lists(left, right)
    if isinstance(left, KernelList) and isinstance(right, list | tuple) and op == "==":
        return _names(left, right)
    if isinstance(right, KernelList) and isinstance(left, list | tuple) and op == "==":
        return _names(right, left)
    if isinstance(right, KernelList) and isinstance(left, str) and op in ("in", "not in"):
        return _name_in(op, left, right)
    if isinstance(right, OpTable) and isinstance(left, str) and op in ("in", "not in"):
        return Explanation([f"{left!r} {op} {right!r}", f"{right.heading}:"], right.table().splitlines())
    for side in (left, right):
        if isinstance(side, KernelProfile | KernelList):
            kernels = side.kernels if isinstance(side, KernelProfile) else side
            head = [f"{_short(left)} {op} {_short(right)}"]
            if not kernels.measured:
                return Explanation([*head, f"no GPU activity was recorded: {side!r}"], [])
            return Explanation([*head, "the kernels:"], kernels.table().splitlines(), kernels)
    return None


def _records_short(value: object) -> str:
    """A side of a comparison in a few words: ``SyncList of 1`` for records (their headline
    follows on a line of its own), ``[]``, a graph-break list by its length."""
    if isinstance(value, SyncList | CopyList) and value.measured:
        return f"{type(value).__name__} of {len(value)}"
    if isinstance(value, list) and value and all(isinstance(item, GraphBreak) for item in value):
        return f"[{plural(len(value), 'graph break')}]"
    return _short(value)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _count(op: str, count: KernelCount, other: object, flipped: bool) -> Explanation:
    head_line = f"{_short(other)} {op} {count!r}" if flipped else f"{count!r} {op} {_short(other)}"
    kernels = count.kernels
    marked = frozenset(count.matched)
    return Explanation([head_line, *_count_lines(count)], kernels.table(marked=marked).splitlines(), kernels)


def _count_lines(count: KernelCount, side: str = "") -> list[str]:
    """What ``count`` counted and matched (``side``: which side of the comparison it is), and
    the kernels that could answer it or nearly did."""
    kernels = count.kernels
    which = f": {rows_text(count.matched)}" if count.matched else ""  # the table marks each match
    times = f" (times: {kernels.times})" if kernels.times else ""
    lines = [f"{side}kernels.{count.query} matched {int(count)} of {len(kernels)} kernels{which}{times}"]
    if not count.matched:
        lines.extend(nearest_lines(kernels, count.pattern, kind=count.kind, dtype=count.dtype, family=count.family))
    lines.extend(undecided_lines(kernels, count.pattern, count.kind, count.dtype, count.family))
    return lines


def _counts(op: str, left: KernelCount, right: KernelCount) -> Explanation:
    """Two kernel counts compared (``count(kind='gemm') == count(kind='gemm', dtype='bf16')``):
    what each counted; of one call's kernels, one table, its ``*`` on the kernels that one count
    matched and the other did not (what parts them), else each call's table, marked as its own."""
    head = [f"{left!r} {op} {right!r}", *_count_lines(left, "left: "), *_count_lines(right, "right: ")]
    same = left.kernels is right.kernels or (
        left.kernels.measured
        and right.kernels.measured
        and left.kernels == right.kernels
        and left.kernels._positions() == right.kernels._positions()  # the matches' numbers mean the same kernels
    )
    if same:
        apart = frozenset(left.matched).symmetric_difference(right.matched)
        rows = rows_text(sorted(apart))
        if apart:
            head.append(f"* marks the kernels one count matched and the other did not: {rows}")
        return Explanation(head, left.kernels.table(marked=apart).splitlines(), left.kernels)
    body = [
        *("the left's kernels (* marks its matches):", *left.kernels.table(frozenset(left.matched)).splitlines()),
        *("the right's kernels (* marks its matches):", *right.kernels.table(frozenset(right.matched)).splitlines()),
    ]
    return Explanation(head, body, left.kernels)


def _names(kernels: KernelList, expected: Sequence[object]) -> Explanation:
    if not kernels.measured or not all(isinstance(name, str) for name in expected):
        head = [f"{kernels!r} == {_short(list(expected))}"]
        if not kernels.measured:
            return Explanation([*head, "the kernels:"], [])
        return Explanation([*head, "the kernels:"], kernels.table().splitlines(), kernels)
    names = list(kernels.names)
    wanted = _as_ran([str(n) for n in expected], names)
    head = [
        f"{kernels!r} == {_short(list(expected))}",
        f"the kernel names differ: {len(wanted)} expected, {len(names)} ran (- expected, + this run)",
    ]
    diff = _name_diff(wanted, names)
    return Explanation(head, [*diff, "the kernels:", *kernels.table().splitlines()], kernels)


def _as_ran(expected: Sequence[str], names: Sequence[str]) -> list[str]:
    """Each expected name as the whole name of the kernel it names (:func:`name_is`: whole, or as
    shown), that the diff of whole names pairs them: the one at its place, else the only one."""
    named: dict[str, set[str]] = {}
    for name in names:
        for text in (name, name.removeprefix("void "), display_name(name)):
            named.setdefault(text, set()).add(name)
    out = []
    for i, text in enumerate(expected):
        if i < len(names) and name_is(names[i], text):
            out.append(names[i])
        else:
            found = named.get(text, set())
            out.append(next(iter(found)) if len(found) == 1 else text)
    return out


def _name_lists(left: object, right: object) -> Explanation | None:
    """``a.kernels.names == b.kernels.names`` (or a list of names): where the lists part and
    what each has that the other has not, by the names the kernel table shows, whole: pytest's
    own diff shows whole demangled names and, below -v, points at -v, which a job summary lacks."""
    sides = [side for side in (left, right) if isinstance(side, list | tuple)]
    if len(sides) != 2 or not all(isinstance(name, str) for side in sides for name in side):
        return None
    a, b = ([str(name) for name in side] for side in sides)

    def said(side: object, names: Sequence[str]) -> str:
        return f"[{plural(len(names), 'kernel name')}]" if isinstance(side, KernelNames) else _short(side)

    parted = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    head = [
        f"{said(left, a)} == {said(right, b)}",
        f"the kernel names differ from #{parted}: {len(a)} on the left, {len(b)} on the right (- left, + right)",
    ]
    diff = _name_diff(a, b)
    return Explanation(head, diff)


def _name_in(op: str, name: str, kernels: KernelList) -> Explanation:
    head = [f"{name!r} {op} {kernels!r}"]
    if not kernels.measured:
        return Explanation([*head, "no GPU activity was recorded"], [])
    if op == "in":
        head.append("no kernel has that exact name (prof.kernels.count('glob*') matches patterns)")
        head.extend(nearest_lines(kernels, name, exact=True))
    marked = frozenset(n for n, k in zip(kernels._positions(), kernels, strict=True) if name_is(k.name, name))
    return Explanation(head, kernels.table(marked=marked).splitlines(), kernels)


# What a value is about, the most telling first: host syncs, copies (a Count and a memcpy are
# told apart in _about), the kernels, the ops, the modules, compile and memory facts, then the
# profile's own numbers.
_SUBJECTS: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("syncs", (SyncList, Sync)),
    ("copies", (CopyList,)),
    ("kernels", (KernelList, KernelNames, Kernel, KernelCount)),
    ("ops", (OpTable, Op)),
    ("modules", (ModuleTable, ModuleView)),
    ("compile", (CompileReport, GraphBreak)),
    ("memory", (MemoryReport, MemoryReading, MemoryOp)),  # a memset (a memcpy is a copy)
    ("profile", (KernelProfile, CallProfile, RuntimeCalls)),
)
_RANKS = {name: rank for rank, (name, _) in enumerate(_SUBJECTS)}


def subject(*values: object) -> str | None:
    """What ``values`` are about, the most telling of them: ``"syncs"``, ``"copies"``,
    ``"kernels"``, ``"ops"``, ``"modules"``, ``"compile"``, ``"memory"``, else ``"profile"``
    (a profile's own numbers: ``assert prof.launches == 0`` names the profile and an int), or
    None for values that are not ours; a list or tuple is about what its items are."""
    ranks = [
        _RANKS[about]
        for value in values
        for item in (value if isinstance(value, list | tuple) and not isinstance(value, KernelNames) else (value,))
        if (about := _about(item)) is not None
    ]
    return _SUBJECTS[min(ranks)][0] if ranks else None


def _about(item: object) -> str | None:
    if isinstance(item, Count):  # what SyncList.count and CopyList.count give
        return "syncs" if item.noun == "host syncs" else "copies"
    if isinstance(item, MemoryOp) and item.kind == "memcpy":  # a copy; a memset is memory
        return "copies"
    return next((name for name, types in _SUBJECTS if isinstance(item, types)), None)
