"""The cases of a sweep: each the keyword arguments that build one, as given or as a product;
how failures name them and a test pins them; which is smallest, and which are near."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from ..tables import printable

Cases = Mapping[str, Iterable[Any]] | Iterable[Mapping[str, Any]]


def case_list(cases: Cases) -> tuple[dict[str, Any], ...]:
    """The cases of ``cases``: a list of mappings (each the keyword arguments of one case), or a
    mapping of each argument to its values (their product, the last argument varying fastest)."""
    __tracebackhide__ = True
    if isinstance(cases, Mapping):
        names = list(cases)
        for name in names:
            if isinstance(cases[name], str | bytes) or not isinstance(cases[name], Iterable):
                raise TypeError(
                    f"cases={{...}} maps each argument to its values (a list); {name!r} maps to "
                    f"{type(cases[name]).__name__}: write {name}=[{cases[name]!r}]"
                )
        listed = [dict(zip(names, values, strict=True)) for values in itertools.product(*cases.values())]
    elif isinstance(cases, str | bytes) or not isinstance(cases, Iterable):
        raise TypeError(
            "cases is a list of cases, each a dict of keyword arguments ([dict(batch=1), dict(batch=8)]), "
            f"or a dict of each argument to its values (dict(batch=[1, 8])); got {type(cases).__name__}"
        )
    else:
        listed = []
        for case in cases:
            if not isinstance(case, Mapping):
                raise TypeError(f"each case is a dict of keyword arguments (dict(batch=8)), got {case!r}")
            listed.append(dict(case))
    seen: set[tuple[tuple[str, str], ...]] = set()
    for case in listed:
        bad = [name for name in case if not isinstance(name, str)]
        if bad:
            raise TypeError(f"a case's keys are argument names (strings), got {bad[0]!r} in {case!r}")
        # By the raw names: two names that only show alike ("a\n", "a\\n") are two cases.
        key = tuple((name, value_repr(value)) for name, value in case.items())
        if key in seen:
            raise ValueError(f"the case {case_label(case)} is listed twice: each case is profiled once")
        seen.add(key)
    if not listed:
        raise ValueError("a sweep needs at least one case")
    return tuple(listed)


def value_repr(value: Any) -> str:
    """``repr(value)``; for an int past Python's int-to-text limit (4,300 digits: repr raises) its
    hex literal, which has no limit and pins the same value in a test."""
    try:
        return repr(value)
    except ValueError:
        if isinstance(value, int):
            return hex(value)
        raise


def case_label(params: Mapping[str, Any]) -> str:
    """``batch=17, hidden=4096``: a case as failures and tables name it; a name (a key of a loaded
    sweep's index is anyone's) or a value's repr that holds a control character shows it escaped."""
    return ", ".join(printable(f"{name}={value_repr(value)}") for name, value in params.items()) or "(no arguments)"


def case_code(params: Mapping[str, Any]) -> str:
    """``dict(batch=17, hidden=4096)``: a case as a test pins it."""
    if all(name.isidentifier() for name in params):
        return f"dict({case_label(params)})" if params else "dict()"
    return "{" + ", ".join(f"{name!r}: {value_repr(value)}" for name, value in params.items()) + "}"


def _exact(value: Any) -> Fraction | None:
    # Exactly, as a fraction: an int of any size (JSON allows 10**400) has no float, and a sum
    # or difference of floats would round. None for what is no finite number (a bool is none).
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return Fraction(value)


def case_size(params: Mapping[str, Any]) -> Fraction:
    """What "smallest" means for the cases of a list: the sum of the case's (finite) numbers."""
    return sum((abs(v) for v in map(_exact, params.values()) if v is not None), Fraction(0))


def case_distance(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[int, float]:
    """How far apart two cases are: the arguments that differ, then how far their numbers are,
    each relative to the larger (so 16 is nearer to 17 than 64 is)."""
    differ = 0
    spread = 0.0
    for name in {*a, *b}:
        x, y = a.get(name), b.get(name)
        if x == y:
            continue
        differ += 1
        p, q = _exact(x), _exact(y)
        if p is not None and q is not None:
            spread += float(min(abs(p - q) / max(abs(p), abs(q), Fraction(1)), Fraction(1)))
        else:
            spread += 1.0
    return differ, spread
