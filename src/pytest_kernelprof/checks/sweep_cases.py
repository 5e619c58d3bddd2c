"""The cases of a sweep: each the keyword arguments that build one, as given or as a product;
how failures name them and a test pins them; which is smallest, and which are near."""

from __future__ import annotations

import itertools
import math
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence, Sized
from fractions import Fraction
from typing import Any

from ..options import MAX_CALLS
from ..tables import printable

Cases = Mapping[str, Iterable[Any]] | Iterable[Mapping[str, Any]]


# The most cases a sweep profiles, as the most cases explore() may: each case is a profile,
# compiled in its warm-up and held until the sweep ends. Counted before any is listed: a product
# of two ranges of 20,000 filled 2.5 GB before it ended in a MemoryError, an endless one never ended.
MAX_CASES = MAX_CALLS
TOO_MANY = (
    "a sweep profiles at most {cap} cases (each a profile, compiled in its warm-up and held until the sweep "
    "ends): sweep fewer, or let explore(fn, strategies, check, max_cases=...) search a space this big"
)


def case_list(cases: Cases) -> tuple[dict[str, Any], ...]:
    """The cases of ``cases``: a list of mappings (each the keyword arguments of one case), or a
    mapping of each argument to its values (their product, the last argument varying fastest);
    at most ``MAX_CASES``, each listed once."""
    __tracebackhide__ = True
    too_many = TOO_MANY.format(cap=MAX_CASES)
    values: list[Iterable[Any]] = []
    if isinstance(cases, Mapping):
        names = list(cases)
        sizes: list[int] = []
        for name in names:
            given = cases[name]
            if isinstance(given, str | bytes) or not isinstance(given, Iterable):
                raise TypeError(
                    f"cases={{...}} maps each argument to its values (a list); {name!r} maps to "
                    f"{type(given).__name__}: write {name}=[{given!r}]"
                )
            if not isinstance(given, Sized):  # an iterator, perhaps endless: counted as far as the cap
                given = list(itertools.islice(given, MAX_CASES + 1))
                if len(given) > MAX_CASES:
                    raise ValueError(f"cases={{...}}: {name!r} has more than {MAX_CASES} values; {too_many}")
            sizes.append(len(given))
            values.append(given)
        count = math.prod(sizes)
        if count > MAX_CASES:
            shown = " x ".join(f"{printable(name)}: {size:,} values" for name, size in zip(names, sizes, strict=True))
            raise ValueError(f"cases={{...}} makes {count:,} cases ({shown}); {too_many}")
        listed = [dict(zip(names, combo, strict=True)) for combo in itertools.product(*values)]
    elif isinstance(cases, str | bytes) or not isinstance(cases, Iterable):
        raise TypeError(
            "cases is a list of cases, each a dict of keyword arguments ([dict(batch=1), dict(batch=8)]), "
            f"or a dict of each argument to its values (dict(batch=[1, 8])); got {type(cases).__name__}"
        )
    else:
        listed = []
        for case in itertools.islice(cases, MAX_CASES + 1):
            if not isinstance(case, Mapping):
                raise TypeError(f"each case is a dict of keyword arguments (dict(batch=8)), got {case!r}")
            listed.append(dict(case))
        if len(listed) > MAX_CASES:
            raise ValueError(f"cases lists more than {MAX_CASES} cases; {too_many}")
    seen: set[tuple[tuple[str, str, _Same], ...]] = set()
    for case in listed:
        bad = [name for name in case if not isinstance(name, str)]
        if bad:
            raise TypeError(f"a case's keys are argument names (strings), got {bad[0]!r} in {case!r}")
        # By the raw names: two names that only show alike ("a\n", "a\\n") are two cases.
        key = tuple((name, value_repr(value), _Same(value)) for name, value in case.items())
        if key in seen:
            raise ValueError(f"the case {case_label(case)} is listed twice: each case is profiled once")
        seen.add(key)
    if not listed:
        raise ValueError("a sweep needs at least one case")
    return tuple(listed)


class _Same:
    """A case's value, beside its repr in a case's key: the same value where the reprs are equal and
    it is the very object, or one of its type that ``==`` calls equal. So two ``nn.Linear(4, 4)``,
    or two big tensors whose reprs show the same ends, are two cases; ``[1, 2]`` twice is one, and
    ``1``, ``1.0`` and ``True`` (equal in Python, shown apart) are three."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __hash__(self) -> int:
        return 0  # the repr beside it in the key spreads the cases

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Same):
            return NotImplemented
        if self.value is other.value:
            return True
        if type(self.value) is not type(other.value):
            return False
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # numpy's "elementwise comparison failed"
                same = self.value == other.value
        except Exception:  # noqa: BLE001 - a value that cannot be compared is itself only
            return False
        return same if type(same) is bool else False  # a tensor's == is a tensor: itself only


def same_value(x: Any, y: Any) -> bool:
    """Whether two case values are the same value, as a sweep's cases are told apart (a tensor
    is the same as itself only: its ``==`` is elementwise, or raises for other shapes)."""
    return _Same(x) == _Same(y)


def clashing_labels(cases: Sequence[Mapping[str, Any]]) -> set[int]:
    """The positions of the cases whose labels are another's: each is named with its position too."""
    labels = [case_label(case) for case in cases]
    counts = Counter(labels)
    return {i for i, label in enumerate(labels) if counts[label] > 1}


def value_repr(value: Any) -> str:
    """``repr(value)``; for an int past Python's int-to-text limit (4,300 digits: repr raises) its
    hex literal, which has no limit and pins the same value in a test."""
    try:
        return repr(value)
    except ValueError:
        if isinstance(value, int):
            return hex(value)
        raise


def case_label(params: Mapping[str, Any], position: int | None = None) -> str:
    """``batch=17, hidden=4096``: a case as failures and tables name it; a name (a key of a loaded
    sweep's index is anyone's) or a value's repr that holds a control character shows it escaped.
    ``position``: the case's place in its sweep, for cases shown alike (``m=Linear(...) #1``)."""
    label = ", ".join(printable(f"{name}={value_repr(value)}") for name, value in params.items()) or "(no arguments)"
    return label if position is None else f"{label} #{position}"


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
        if (name in a) == (name in b) and same_value(x, y):
            continue
        differ += 1
        p, q = _exact(x), _exact(y)
        if p is not None and q is not None:
            spread += float(min(abs(p - q) / max(abs(p), abs(q), Fraction(1)), Fraction(1)))
        else:
            spread += 1.0
    return differ, spread
