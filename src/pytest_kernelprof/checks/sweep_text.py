"""What a sweep shows: the table of the facts that differ between its cases, two cases' kernels
side by side, and the message of a property that broke."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..decode import KINDS
from ..errors import CannotTellError
from ..model import Kernel, KernelProfile
from ..tables import display_name, plural, printable, render_table
from .diff import diff_kernels
from .sweep_cases import case_code, case_distance, case_size, value_repr

if TYPE_CHECKING:
    from .sweep import ProfileSweep, SweepCase

# Names in the side-by-side tables are cut to this: two of them share a line.
SIDE_NAME_WIDTH = 56
UNKNOWN = "?"


@dataclass(frozen=True)
class Outcome:
    """Whether a check held in one case, and what it said where it did not."""

    held: bool
    said: str


def case_facts(case: SweepCase) -> dict[str, str]:
    """The facts of one case that a sweep compares, as shown: kernels in all and by kind (as
    ``count(kind=...)`` counts them),
    launches and syncs (where GPU activity was recorded); the distinct CPU ops of a call (which a
    sweep without GPU activity compares too); compiled regions entered per call (``regions``),
    frames compiled during its profile, warm-up included (``compiled``), and recompiles during
    its profiled calls."""
    prof = case.profile
    facts: dict[str, str] = {}
    if prof.has_device_activity:
        kernels = list(prof.call.kernels)
        facts["kernels"] = str(len(kernels))
        # As ``count(kind=...)`` counts: a persistent reduction is a reduction too, a kernel made
        # from a template counts under ``template`` and under what it computes.
        for kind in KINDS:
            facts[kind] = str(sum(k.is_kind(kind) for k in kernels))
        facts["launches"] = str(prof.launches)
        facts["syncs"] = str(len(prof.syncs))
    facts["ops"] = str(len(prof.call.ops.names))
    facts["regions"] = str(prof.compile.regions)
    facts["compiled"] = UNKNOWN if case.compiled is None else str(case.compiled)
    try:
        facts["recompiles"] = str(prof.compile.recompiles)
    except CannotTellError:
        facts["recompiles"] = UNKNOWN
    return facts


def family_names(prof: KernelProfile) -> dict[str, tuple[str, ...]]:
    """Each family's distinct kernel names, as shown, in launch order."""
    names: dict[str, dict[str, None]] = {}
    for kernel in prof.call.kernels:
        names.setdefault(kernel.family, {})[display_name(kernel.name, SIDE_NAME_WIDTH)] = None
    return {family: tuple(shown) for family, shown in names.items()}


def sweep_table(sweep: ProfileSweep, marked: frozenset[int] = frozenset()) -> str:
    """The head line, a row per case with its arguments and the facts that differ between the
    cases, the facts the same in every case, and the names of each family that differ."""
    cases = sweep.cases
    facts = [case_facts(case) for case in cases]
    measured = [case.profile.has_device_activity for case in cases]
    order = list(dict.fromkeys(name for row in facts for name in row))
    differ: list[str] = []
    same: list[str] = []
    for name in order:
        values = {row.get(name, "-") for row in facts}
        if values == {UNKNOWN} or (name in KINDS and values == {"0"}):
            continue
        (differ if len(values) > 1 else same).append(name)
    params = list(dict.fromkeys(name for case in cases for name in case.params))
    rows = [
        (
            f"*{i}" if i in marked else str(i),
            *(printable(value_repr(case.params[p])) if p in case.params else "-" for p in params),
            *(row.get(name, "-") for name in differ),
        )
        for i, (case, row) in enumerate(zip(cases, facts, strict=True))
    ]
    lines = [_head(sweep, facts)]
    lines.append(
        render_table(
            ("#", *map(printable, params), *differ), rows, right=range(len(params) + 1, len(params) + 1 + len(differ))
        )
    )
    if same:
        lines.append("the same in every case: " + ", ".join(f"{name} {facts[0][name]}" for name in same))
    if not any(measured):
        reason = cases[0].profile.call._unavailable or "no GPU activity was recorded"
        lines.append(f"no GPU activity in any case, so no kernels, launches or syncs: {reason}")
    elif not all(measured):
        idle = [str(i) for i, m in enumerate(measured) if not m]
        lines.append(f"no GPU activity in case{'' if len(idle) == 1 else 's'} " + ", ".join(idle))
    lines.extend(_names_that_differ([case.profile for case in cases], measured))
    return "\n".join(lines)


def _head(sweep: ProfileSweep, facts: Sequence[dict[str, str]]) -> str:
    devices = sorted({c.profile.device_label for c in sweep.cases if c.profile.device_label})
    where = " on " + ", ".join(devices) if devices else " (no GPU)"
    head = f"ProfileSweep of {plural(len(sweep.cases), 'case')} from {printable(sweep.source)}{where}"
    compiled = [int(row["compiled"]) for row in facts if row["compiled"] != UNKNOWN]
    if any(compiled):
        head += (
            f"; torch.compile compiled {plural(sum(compiled), 'frame')} in "
            f"{plural(sum(c > 0 for c in compiled), 'case')}, "
            "each in the case's warm-up (compiled)"
        )
    recompiled = sum(row["recompiles"] not in ("0", UNKNOWN) for row in facts)
    if recompiled:
        head += f"; {plural(recompiled, 'case')} recompiled during their profiled calls (recompiles)"
    return head


def _names_that_differ(profiles: Sequence[KernelProfile], measured: Sequence[bool]) -> list[str]:
    names = [family_names(prof) if ok else None for prof, ok in zip(profiles, measured, strict=True)]
    families = list(dict.fromkeys(f for shown in names if shown is not None for f in shown))
    lines = []
    for family in families:
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, shown in enumerate(names):
            if shown is not None:
                groups.setdefault(shown.get(family, ()), []).append(i)
        if len(groups) < 2:
            continue
        lines.append(f"  {family}:")
        for shown_names, members in groups.items():
            which = ("case " if len(members) == 1 else "cases ") + ", ".join(map(str, members))
            lines.append(f"    {which}: {', '.join(shown_names) or '(none)'}")
    return ["kernel names that differ, by family:", *lines] if lines else []


def side_by_side(left: SweepCase, right: SweepCase) -> list[str]:
    """Two cases' kernels in one table, aligned by kind, family, layout and fused ops: ``=`` the
    same kernel, ``~`` the same kind of kernel under another name, ``-`` only on the left, ``+``
    only on the right. Cases without GPU activity: their CPU ops and counts instead."""
    a, b = left.profile, right.profile
    if not (a.has_device_activity and b.has_device_activity):
        return _ops_side_by_side(a, b)
    before, after = list(a.call.kernels), list(b.call.kernels)
    at_a = {id(k): i for i, k in enumerate(before)}
    at_b = {id(k): i for i, k in enumerate(after)}
    rows = []
    for change in diff_kernels(before, after, by="shape").changes:
        mark = change.mark
        if mark == "=" and change.before is not None and change.after is not None:
            mark = "=" if change.before.name == change.after.name else "~"
        rows.append(
            (
                *_cells(change.before, at_a),
                mark,
                *_cells(change.after, at_b),
            )
        )
    headers = ("#", "kind", "family", "fused ops", "name", "", "#", "kind", "family", "fused ops", "name")
    return render_table(headers, rows, right=(0, 6)).splitlines()


def _cells(kernel: object, positions: dict[int, int]) -> tuple[str, str, str, str, str]:
    if not isinstance(kernel, Kernel):
        return ("", "", "", "", "")
    return (
        str(positions[id(kernel)]),
        kernel.kind,
        kernel.family,
        ",".join(kernel.fused_ops) or "-",
        display_name(kernel.name, SIDE_NAME_WIDTH),
    )


def _ops_side_by_side(a: KernelProfile, b: KernelProfile) -> list[str]:
    names = list(dict.fromkeys([*a.ops.names, *b.ops.names]))
    rows = []
    for name in names:
        left = a.ops[name].count if name in a.ops else None
        right = b.ops[name].count if name in b.ops else None
        mark = "-" if right is None else "+" if left is None else "=" if left == right else "~"
        shown = name if len(name) <= SIDE_NAME_WIDTH else name[: SIDE_NAME_WIDTH - 3] + "..."
        rows.append((shown, "" if left is None else str(left), mark, "" if right is None else str(right)))
    table = render_table(("op", "left", "", "right"), rows, right=(1, 3))
    return ["no GPU activity in one of them: their CPU ops, by count per call", *table.splitlines()]


def nearest_other(sweep: ProfileSweep, index: int, candidates: Sequence[int]) -> int | None:
    """Of ``candidates``, the case nearest to case ``index`` (fewest differing arguments, then
    the closest numbers); None where there is none."""
    target = sweep.cases[index].params
    best = min(candidates, key=lambda i: (case_distance(target, sweep.cases[i].params), i), default=None)
    return best


def smallest(sweep: ProfileSweep, indices: Sequence[int]) -> int:
    """Of the cases ``indices``, the smallest: the least sum of its numbers, then the first listed."""
    return min(indices, key=lambda i: (case_size(sweep.cases[i].params), i))


def failure_message(
    sweep: ProfileSweep,
    outcomes: Sequence[Outcome],
    what: str,
    *,
    expected: bool,
    pinned: int | None = None,
    head: Sequence[str] = (),
) -> str:
    """The message of ``what`` (``sweep.every(fuses)``) failing: the cases whose outcome is not
    ``expected``, the smallest of them (``pinned`` where the caller found it, as Hypothesis
    does) as a case to pin with what the check said there, the cases' table, and the kernels
    of that case beside those of the nearest case that passed."""
    broke = [i for i, outcome in enumerate(outcomes) if outcome.held != expected]
    passed = [i for i, outcome in enumerate(outcomes) if outcome.held == expected]
    worst = smallest(sweep, broke) if pinned is None else pinned
    case = sweep.cases[worst]
    verb = "broke" if expected else "held"
    lines = list(head) or [
        f"{what} failed: the check {verb} in {len(broke)} of {plural(len(sweep.cases), 'case')}: "
        + "; ".join(sweep.cases[i].label for i in broke)
    ]
    lines.append(f"the smallest: {case.label}; pin it: cases=[{case_code(case.params)}]")
    said = outcomes[worst].said or "the check held"
    lines.append("the check there: " + said.splitlines()[0])
    lines.extend("  " + line for line in said.splitlines()[1:])
    lines.append(f"the cases (* the check {verb}):")
    lines.append(sweep.table(frozenset(broke)))
    near = nearest_other(sweep, worst, passed)
    if near is None:
        lines.append(f"no case passed; the kernels of {case.label}:")
        lines.append(
            case.profile.call.kernels.table() if case.profile.has_device_activity else case.profile.call.ops.table()
        )
    else:
        other = sweep.cases[near]
        lines.append(f"left: {other.label} (the nearest case that passed); right: {case.label}")
        lines.extend(side_by_side(other, case))
    return "\n".join(lines)
