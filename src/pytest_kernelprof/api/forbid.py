"""What a profiler's ``forbid`` takes: rule lines as ``kernelprof_forbid`` writes them, or rules."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..checks.rules import Rule, parse_rules
from ..decode import Decoder


def forbid_rules(value: object, decoder: Decoder) -> tuple[Rule, ...]:
    """``forbid``'s rules: lines as ``kernelprof_forbid`` writes them (``"no-mm: op=aten::mm |
    why"``; one string may hold several lines), ``Rule`` values, or a sequence of either; a
    ``TypeError`` for anything else and a ``ValueError`` for a line that is no rule, when set,
    rather than when a profile is checked against them."""
    items = [value] if isinstance(value, str | Rule) else value
    if not isinstance(items, Sequence) or not all(isinstance(item, str | Rule) for item in items):
        got = (
            type(value).__name__
            if not isinstance(items, Sequence)
            else ", ".join(sorted({type(item).__name__ for item in items if not isinstance(item, str | Rule)}))
        )
        raise TypeError(
            "forbid takes rule lines as kernelprof_forbid writes them (forbid=['no-mm: op=aten::mm | why']) "
            f"or a list of Rules, got {got}"
        )
    rules: list[Rule] = []
    for item in items:
        try:
            parsed = (
                (item,)
                if isinstance(item, Rule)
                else tuple(replace(rule, suite=False) for rule in parse_rules(item.splitlines(), decoder.families()))
            )
        except ValueError as exc:
            raise ValueError(f"forbid {exc}") from None
        for rule in parsed:
            if any(r.name == rule.name for r in rules):
                raise ValueError(f"forbid has two rules named {rule.name!r}")
            rules.append(rule)
    return tuple(rules)
