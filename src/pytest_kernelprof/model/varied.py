"""Why a profile of calls that varied has no one answer to ``prof.kernels``, ``prof.ops`` or
``prof.modules``: how the calls differ, in the words a ``VariedProfileError`` says it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..tables import display_name, plural

if TYPE_CHECKING:
    from .profiles import CallProfile


def _only_in(a: Sequence[str], b: Sequence[str]) -> str:
    """Up to three names of ``a`` that ``b`` lacks, as the outputs show them."""
    others = set(b)
    missing = [display_name(n) for n in dict.fromkeys(a) if n not in others]
    more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
    return ", ".join(missing[:3]) + more


def _how_they_differ(verb: str, a: int, a_names: Sequence[str], b: int, b_names: Sequence[str]) -> str:
    extra, lost = _only_in(b_names, a_names), _only_in(a_names, b_names)
    parts = [f"call {b} {verb} {extra}, which call {a} did not"] if extra else []
    parts += [f"call {a} {verb} {lost}, which call {b} did not"] if lost else []
    return "; ".join(parts) or f"call {b} {verb} the same ones in another order or number"


def varied_kernels(calls: Sequence[CallProfile]) -> str:
    first = calls[0]
    counts = ", ".join(f"call {c.index}: {plural(len(c.kernels), 'kernel')}" for c in calls[:8])
    counts += ", ..." if len(calls) > 8 else ""
    other = next((c for c in calls[1:] if c.kernels.names != first.kernels.names), calls[-1])
    how = _how_they_differ("launched", first.index, first.kernels.names, other.index, other.kernels.names)
    return (
        f"prof.kernels has no one answer: the profiled calls launched different kernel sequences ({counts}; "
        f"{how}), which allow_variation=True let through. Ask one call, prof.calls[{other.index}].kernels, "
        'or every call, such as all(c.kernels.count(kind="gemm") == 1 for c in prof.calls). '
        f"prof.table() shows call {first.index}'s kernels."
    )


def names_differ(calls: Sequence[CallProfile], what: str, keep: Callable[[str], bool]) -> str | None:
    """How the first call's op names that ``keep`` keeps differ from another call's (None where
    every call's are the same): ``what`` names them (``"ops"``, ``"modules"``)."""
    first = [n for n in calls[0].ops.names if keep(n)]
    for call in calls[1:]:
        names = [n for n in call.ops.names if keep(n)]
        if set(names) != set(first):
            how = _how_they_differ("ran", calls[0].index, first, call.index, names)
            example = f'all("{"aten::mm" if what == "ops" else "model.mlp"}" not in c.{what} for c in prof.calls)'
            return (
                f"prof.{what} has no one answer: the {len(calls)} profiled calls ran different {what} ({how}). Ask "
                f"one call, prof.calls[{call.index}].{what}, or every call, such as "
                f"{example}."
            )
    return None
