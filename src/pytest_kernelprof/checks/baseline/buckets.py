"""Baselines of a sweep, per shape bucket, in a range form.

A sweep's cases fall into buckets (the caller says how: "M < 64" and "M >= 64" run different
GEMMs), and each bucket is one entry of the test's baseline file, ``sweep[M<64]``, that covers
all its cases: not a kernel sequence, which differs from shape to shape within a bucket (another
cuBLAS tile, a split-K reduce for one aspect), but ranges:

- ``counts``: kernels in all and of each kind, as ``[fewest, most]`` over the bucket's cases; a
  case outside a range, either way, is a change;
- ``names``: the kernel names the names mode compares (``stable``: Inductor's and your own,
  which say what was fused; ``exact``: all; ``loose``: none), of all the bucket's cases; a name
  that no stored case ran, or a stored one that no case runs now, is a change;
- ``metrics``: the most of each baseline metric over the cases; a case above it is worse
  (``peak_bytes`` with its tolerance), as in an entry of one profile.

So one entry per bucket covers a sweep of any number of cases, and a fusion that breaks for some
shapes fails naming its bucket and the cases in it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...decode import KINDS
from ...model import KernelProfile
from ...tables import display_name
from ..metrics import METRICS, read_metric
from .signature import BASELINE_METRICS, MISSING, TOLERANT_METRICS, bad_value, name_compared, stored_count

BUCKET_KEY = "bucket"  # an entry holding this key is a bucket's ranges, not one profile's signature
TOTAL = "kernels"


def compared_names(prof: KernelProfile, mode: str) -> set[str]:
    """The names of ``prof``'s kernels that the names mode ``mode`` compares."""
    return {k.name for k in prof.kernels if name_compared(k.family, mode)}


def kind_counts(prof: KernelProfile) -> dict[str, int]:
    """Kernels in all (``kernels``) and of each kind that ran."""
    counts = {TOTAL: len(prof.kernels)}
    for kernel in prof.kernels:
        counts[kernel.kind] = counts.get(kernel.kind, 0) + 1
    return counts


@dataclass(frozen=True)
class BucketRanges:
    """What an entry stores of a bucket of a sweep's cases (see the module's docstring)."""

    cases: tuple[str, ...]
    counts: Mapping[str, tuple[int, int]]
    names: tuple[str, ...]
    metrics: Mapping[str, int]

    @classmethod
    def of(cls, cases: Sequence[tuple[str, KernelProfile]], mode: str) -> BucketRanges:
        counts: dict[str, tuple[int, int]] = {}
        per_case = [kind_counts(prof) for _, prof in cases]
        for name in dict.fromkeys(n for counted in per_case for n in counted):
            values = [counted.get(name, 0) for counted in per_case]
            counts[name] = (min(values), max(values))
        names = sorted(set().union(*(compared_names(prof, mode) for _, prof in cases)))
        metrics: dict[str, int] = {}
        for metric in BASELINE_METRICS:
            values = [v for _, prof in cases if (v := read_metric(prof, metric)) is not None]
            if len(values) == len(cases):
                metrics[metric] = max(values)
        return cls(tuple(label for label, _ in cases), counts, tuple(names), metrics)

    def to_json(self) -> dict[str, Any]:
        return {
            "cases": list(self.cases),
            "counts": {name: list(span) for name, span in self.counts.items()},
            "names": list(self.names),
            "metrics": dict(self.metrics),
        }

    @classmethod
    def from_json(cls, data: object) -> BucketRanges:
        """The stored ranges ``data``; a ValueError naming the field that holds an impossible value."""
        if not isinstance(data, Mapping):
            raise bad_value(BUCKET_KEY, data, "an object")
        cases, counts, names, metrics = (data.get(k, MISSING) for k in ("cases", "counts", "names", "metrics"))
        if not isinstance(cases, list) or not all(isinstance(c, str) for c in cases):
            raise bad_value(f"{BUCKET_KEY}.cases", cases, "a list of case labels")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise bad_value(f"{BUCKET_KEY}.names", names, "a list of kernel names")
        if not isinstance(counts, Mapping):
            raise bad_value(f"{BUCKET_KEY}.counts", counts, "an object")
        spans: dict[str, tuple[int, int]] = {}
        for name, span in counts.items():
            where = f"{BUCKET_KEY}.counts.{name}"
            if name != TOTAL and name not in KINDS:
                raise ValueError(f"{where} is no count a bucket keeps: {TOTAL} or a kind ({', '.join(KINDS)})")
            if not isinstance(span, list) or len(span) != 2:
                raise bad_value(where, span, "[fewest, most]")
            low, high = stored_count(span[0], f"{where}[0]"), stored_count(span[1], f"{where}[1]")
            if low > high:
                raise bad_value(where, span, "[fewest, most] with fewest <= most")
            spans[name] = (low, high)
        if not isinstance(metrics, Mapping):
            raise bad_value(f"{BUCKET_KEY}.metrics", metrics, "an object")
        for name, value in metrics.items():
            if name not in BASELINE_METRICS:
                raise ValueError(
                    f"{BUCKET_KEY}.metrics.{name} is not a baseline metric; they are {', '.join(BASELINE_METRICS)}"
                )
            stored_count(value, f"{BUCKET_KEY}.metrics.{name}", size=METRICS[name].size)
        return cls(tuple(cases), spans, tuple(names), dict(metrics))


# The fields a file's bucket may hold: those ``to_json`` writes, in its order.
BUCKET_FIELDS = tuple(BucketRanges(cases=(), counts={}, names=(), metrics={}).to_json())


def compare_bucket(
    stored: BucketRanges, cases: Sequence[tuple[str, KernelProfile]], mode: str, tolerance: float
) -> list[str]:
    """What of ``cases`` falls outside the stored ranges, a line each; none where all is within."""
    lines = []
    for label, prof in cases:
        counts = kind_counts(prof)
        for name in dict.fromkeys([*stored.counts, *counts]):
            low, high = stored.counts.get(name, (0, 0))
            count = counts.get(name, 0)
            if not low <= count <= high:
                held = f"{low}" if low == high else f"{low} to {high}"
                what = "kernels in all" if name == TOTAL else f"{name} kernel" if count == 1 else f"{name} kernels"
                lines.append(f"{label}: {count} {what} per call, the baseline's cases ran {held}")
        for metric, most in stored.metrics.items():
            value = read_metric(prof, metric)
            slack = tolerance * most if metric in TOLERANT_METRICS else 0
            if value is not None and value > most + slack:
                lines.append(f"{label}: {metric} {value:,}, above the baseline's most {most:,} (lower is better)")
    ran: dict[str, list[str]] = {}
    for label, prof in cases:
        for name in sorted(compared_names(prof, mode)):
            ran.setdefault(name, []).append(label)
    known = set(stored.names)  # a set: a bucket's names run to thousands, each looked up
    new = [name for name in ran if name not in known]
    gone = [name for name in stored.names if name not in ran]
    for name in new:
        lines.append(f"a kernel the baseline's cases did not run: {display_name(name)} (in {'; '.join(ran[name])})")
    for name in gone:
        lines.append(f"a kernel of the baseline that no case ran: {display_name(name)}")
    return lines
