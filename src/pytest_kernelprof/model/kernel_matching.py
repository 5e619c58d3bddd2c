"""Which kernels a query matches, and what its failure says of those it did not: the kernels of
unknown kind, family or dtype that could answer it (``undecided_lines``), and for a name that matched
nothing, the kernels its other terms ruled out or the nearest names (``nearest_lines``).
``KernelList``'s queries and its methods of those names call them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..tables import display_name, name_matches, nearest, plural
from .kernel_text import rows_text
from .query_args import family_lines
from .unknowns import could_match, missing

if TYPE_CHECKING:
    from .kernels import Kernel, KernelList

Pattern = str | re.Pattern[str]


def pattern_matches(kernel: Kernel, pattern: Pattern | None) -> bool:
    """A glob matches the whole name, without its leading ``void `` or as every output shows it
    (a name copied from a table, a failure or a diff matches its kernel); a regex is searched."""
    if pattern is None:
        return True
    if isinstance(pattern, re.Pattern):
        return pattern.search(kernel.name) is not None
    return name_matches(kernel.name, pattern)


def query_matches(
    kernel: Kernel, pattern: Pattern | None, kind: str | None, dtype: str | None = None, family: str | None = None
) -> bool:
    if kind is not None and not kernel.is_kind(kind):
        return False
    # The family whole, as a kernelprof_forbid rule's family= matches it.
    if family is not None and kernel.family != family:
        return False
    if dtype is not None and kernel.dtype != dtype:
        return False
    return pattern_matches(kernel, pattern)


def undecided(
    kernels: KernelList, pattern: Pattern | None, kind: str | None, dtype: str | None = None, family: str | None = None
) -> list[int]:
    """Positions of the kernels whose unknown kind, family or dtype could make them ``kind``,
    ``family`` and ``dtype`` ones. Whether a kernel is generated from a template its name always
    says, and ``other`` is what an unplaced kernel is: no kernel's kind is undecided there."""
    kinds = None if kind is None or kind in ("other", "template") else (kind,)
    dtypes = None if dtype is None else (dtype,)
    families = None if family is None else (family,)
    if kinds is None and dtypes is None and families is None:
        return []
    __tracebackhide__ = True
    items = kernels._items()  # before the comprehension, a frame of its own (see KernelList._numbered)
    return [
        i
        for i, k in enumerate(items)
        if pattern_matches(k, pattern)
        and (kinds is not None or kind is None or k.is_kind(kind))
        and could_match(k, kinds=kinds, dtypes=dtypes, families=families)
    ]


def undecided_lines(
    kernels: KernelList, pattern: Pattern | None, kind: str | None, dtype: str | None = None, family: str | None = None
) -> list[str]:
    """A line for a failed query, naming the kernels of unknown kind, family or dtype that could answer it."""
    found = undecided(kernels, pattern, kind, dtype, family)
    if not found:
        return []
    positions = kernels._positions()
    rows = rows_text([positions[i] for i in found])
    asked = {"kind": kind, "family": family, "dtype": dtype}
    unknown = [missing(kernels._loaded()[i]) for i in found]
    # The unknown facts the query asked about (a family question: "of unknown family").
    facts = " or ".join(sorted({next((f for f in m if asked[f] is not None), m[0]) for m in unknown}))
    open_kernels = [kernels._loaded()[i] for i in found]
    if facts == "dtype" and all(k.family == "inductor" for k in open_kernels):
        # Inductor's, from a trace recorded without their dtype: teaching one by name would pin it.
        remedy = "record the trace with the plugin"
    else:
        remedy = "teach the decoder"
    return [f"{plural(len(found), 'kernel')} of unknown {facts} ({rows}) could be it: {remedy}"]


def nearest_lines(
    kernels: KernelList,
    pattern: Pattern | None,
    *,
    exact: bool = False,
    kind: str | None = None,
    dtype: str | None = None,
    family: str | None = None,
) -> list[str]:
    """For a glob (``exact``: a name, as ``in`` asks) that matched nothing: the nearest names,
    as every output shows them, none of which the query itself matches; where the glob
    matches kernels by name and ``kind`` or ``dtype`` ruled them out, which kernels those
    are, less those of unknown kind or dtype (``undecided_lines`` names them: not ruled out).
    A ``family`` no kernel has: the families they have, first."""
    items = kernels._items()
    families = family_lines(family, (k.family for k in items))
    if not isinstance(pattern, str):
        return families
    if not exact:
        open_ = set(undecided(kernels, pattern, kind, dtype, family))
        by_name = [i for i, k in enumerate(items) if name_matches(k.name, pattern)]
        out = [i for i in by_name if i not in open_]
        if by_name and not out:
            return families
        if out:
            positions = kernels._positions()
            named = [f"#{positions[i]}" for i in out]
            ruled = [items[i] for i in out]
            facts = [
                fact
                for fact, out in (
                    ("kind", kind is not None and any(not k.is_kind(kind) for k in ruled)),
                    ("family", family is not None and any(k.family != family for k in ruled)),
                    ("dtype", dtype is not None and any(k.dtype != dtype for k in ruled)),
                )
                if out
            ]
            its = ("its", "it") if len(named) == 1 else ("their", "them")
            return [
                *families,
                f"{pattern!r} matches {', '.join(named)} by name: "
                f"{its[0]} {' or '.join(facts) or 'kind or dtype'} ruled {its[1]} out",
            ]
    # Near the whole name or the shown one; none is the query's own: it would have matched.
    shown = {form: display_name(k.name) for k in items for form in (k.name, display_name(k.name))}
    close = list(dict.fromkeys(shown[name] for name in nearest(pattern, shown, n=6)))[:3]
    return [
        *families,
        *(["nearest names: " + ", ".join(map(repr, close))] if close else []),
    ]  # quoted: names hold ", "
