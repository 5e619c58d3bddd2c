"""The cases of a sweep: each the keyword arguments that build one, as given or as a product;
how failures name them and a test pins them; which is smallest, and which are near."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from typing import Any

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
    seen: dict[str, int] = {}
    for case in listed:
        bad = [name for name in case if not isinstance(name, str)]
        if bad:
            raise TypeError(f"a case's keys are argument names (strings), got {bad[0]!r} in {case!r}")
        label = case_label(case)
        if label in seen:
            raise ValueError(f"the case {label} is listed twice: each case is profiled once")
        seen[label] = len(seen)
    if not listed:
        raise ValueError("a sweep needs at least one case")
    return tuple(listed)


def case_label(params: Mapping[str, Any]) -> str:
    """``batch=17, hidden=4096``: a case as failures and tables name it."""
    return ", ".join(f"{name}={value!r}" for name, value in params.items()) or "(no arguments)"


def case_code(params: Mapping[str, Any]) -> str:
    """``dict(batch=17, hidden=4096)``: a case as a test pins it."""
    if all(name.isidentifier() for name in params):
        return f"dict({case_label(params)})" if params else "dict()"
    return "{" + ", ".join(f"{name!r}: {value!r}" for name, value in params.items()) + "}"


def _numbers(params: Mapping[str, Any]) -> list[float]:
    return [float(v) for v in params.values() if isinstance(v, int | float) and not isinstance(v, bool)]


def case_size(params: Mapping[str, Any]) -> float:
    """What "smallest" means for the cases of a list: the sum of the case's numbers."""
    return sum(abs(v) for v in _numbers(params) if math.isfinite(v))


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
        if isinstance(x, int | float) and isinstance(y, int | float) and not isinstance(x, bool):
            scale = max(abs(float(x)), abs(float(y)), 1.0)
            spread += min(abs(float(x) - float(y)) / scale, 1.0)
        else:
            spread += 1.0
    return differ, spread
