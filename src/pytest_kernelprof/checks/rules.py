"""Suite-wide rules (ini ``kernelprof_forbid``) that every profile a test takes must satisfy.

One rule a line::

    NAME: CONDITION [CONDITION ...] [| REASON]

    fp32-gemm: kind=gemm dtype=fp32,tf32 | bf16 models must not run fp32 GEMMs
    math-sdpa: op=aten::_scaled_dot_product_attention_math
    no-breaks: graph_breaks>0 | compile the model whole

A rule is one of three sorts, by its conditions:

- kernel: ``kind=``, ``family=``, ``dtype=``, ``layout=``, ``name=`` (a glob on the whole
  name), all of which a kernel must match, and optionally ``op=`` (a glob on the CPU op
  that launched it). Broken by any such kernel.
- op: ``op=`` alone. Broken when a CPU op of that name (a glob) ran.
- metric: one comparison such as ``graph_breaks>0`` or ``peak_bytes>2GiB`` (``> >= < <= ==
  !=``; sizes take KiB/MiB/GiB/KB/MB/GB). Broken when the comparison holds.

``field=a,b`` matches either value. Values hold no spaces (a ``*`` stands in, in globs).
Pure: parse errors are ``ValueError`` with the rule's text, which the plugin turns into a
usage error naming the ini line.
"""

from __future__ import annotations

import fnmatch
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ..decode import DTYPES, FAMILIES, KINDS, LAYOUTS
from ..errors import CannotTellError, ForbiddenError, NoDeviceActivityError
from ..health import format_bytes
from ..model import Kernel, KernelProfile, kernel_table
from ..model.unknowns import warn_undecided
from ..tables import format_us, name_matches, printable, render_table
from .metrics import METRICS, read_metric

KERNEL_FIELDS = ("kind", "family", "dtype", "layout", "name")
FIELDS = (*KERNEL_FIELDS, "op")
_CHOICES: dict[str, tuple[str, ...]] = {"kind": KINDS, "family": FAMILIES, "dtype": DTYPES, "layout": LAYOUTS}


_COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_METRIC = re.compile(r"^([a-z_]+)(>=|<=|==|!=|>|<)(.+)$")
_FIELD = re.compile(r"^([a-z_]+)=(.+)$")
# A condition: a word, or a field whose value is in double quotes, one value that may hold
# spaces and commas (a kernel name as the outputs show it: name="f<8, g<float> >").
_WORD = re.compile(r'[a-z_]+="[^"]*"|\S+')
# ASCII digits only: \d and float() take any script's digits, so "syncs>٣" would read as 3.
_NUMBER = re.compile(r"^(-?[0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)$", re.ASCII)


@dataclass(frozen=True)
class Rule:
    """One ``kernelprof_forbid`` rule; ``text`` is its line as written."""

    name: str
    text: str
    reason: str = ""
    fields: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (field, alternatives)
    metric: str | None = None
    comparison: str = ">"
    limit: float = 0
    # A rule of the suite's kernelprof_forbid, which a test's kernelprof_allow marker lifts; a
    # rule given to one profiler's forbid= is that profiler's, and the marker knows nothing of it.
    suite: bool = True

    @property
    def conditions(self) -> str:
        if self.metric is not None:
            return f"{self.metric}{self.comparison}{_number(self.limit)}"
        return " ".join(f"{f}={','.join(values)}" for f, values in self.fields)

    @property
    def sort(self) -> str:
        if self.metric is not None:
            return "metric"
        return "kernel" if any(f in KERNEL_FIELDS for f, _ in self.fields) else "op"

    def _values(self, field: str) -> tuple[str, ...] | None:
        return next((values for f, values in self.fields if f == field), None)

    def matches_kernel(self, kernel: Kernel) -> bool:
        for field, values in self.fields:
            if field == "kind":
                if not any(kernel.is_kind(v) for v in values):
                    return False
                continue
            if field == "op":
                if not _launched_under(kernel, values):
                    return False
                continue
            actual = getattr(kernel, field)
            if actual is None:
                return False
            if field == "name":
                if not any(_glob(field, actual, v) for v in values):
                    return False
            elif actual not in values:
                return False
        return True

    def could_match_kernel(self, kernel: Kernel) -> bool:
        """Whether ``kernel`` escapes the rule only because a fact it asks about is unknown: a
        kind no evidence placed, a dtype or layout none gave, a family no rule knows. Every
        known fact must match."""
        undecided = False
        for field, values in self.fields:
            if field == "op":
                if not _launched_under(kernel, values):
                    return False
                continue
            if field == "name":
                if not any(_glob(field, kernel.name, v) for v in values):
                    return False
                continue
            actual = getattr(kernel, field)
            if actual in values or (field == "kind" and any(kernel.is_kind(v) for v in values)):
                continue
            unknown = (
                (field == "kind" and kernel.unplaced)
                or (field == "family" and actual == "unknown")
                or (field in ("dtype", "layout") and actual is None)
            )
            if not unknown:
                return False
            undecided = True
        return undecided

    def matches_op(self, op_name: str) -> bool:
        values = self._values("op") or ()
        return any(fnmatch.fnmatchcase(op_name, v) for v in values)


def _launched_under(kernel: Kernel, patterns: Sequence[str]) -> bool:
    """Whether an op of ``kernel``'s launch chain (``Kernel.ops``: ``aten::linear`` above its
    ``aten::addmm``) matches one of ``patterns``: ``op=aten::linear`` holds the GEMM of a linear
    layer, whose launching op is the ``aten::addmm`` inside it."""
    chain = kernel.ops or ((kernel.op,) if kernel.op else ())
    return any(fnmatch.fnmatchcase(op, pattern) for op in chain for pattern in patterns)


def _glob(field: str, actual: str, pattern: str) -> bool:
    # Outputs show kernel names shortened, without a leading "void ": a name copied from one must match.
    return name_matches(actual, pattern) if field == "name" else fnmatch.fnmatchcase(actual, pattern)


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def parse_rule(line: str, families: Sequence[str] = ()) -> Rule:
    """One rule from its line; ``ValueError`` that says what is wrong with it. ``families``:
    the families users taught the decoder (``kernelprof_kernels``), accepted beside the built-in ones."""
    head, colon, rest = line.partition(":")
    name = head.strip()
    if not colon or not _NAME.match(name):
        raise ValueError("expected 'NAME: CONDITION ... | REASON', a rule name (letters, digits, - _ .) and a ':'")
    body, reason = _split_reason(rest)
    words = _WORD.findall(body)
    if not words:
        raise ValueError(f"rule {name!r} has no condition (such as kind=gemm, op=aten::*_math or syncs>0)")
    fields: list[tuple[str, tuple[str, ...]]] = []
    metrics: list[tuple[str, str, float]] = []
    for word in words:
        metric = _METRIC.match(word)
        field = _FIELD.match(word)
        if metric is not None and (field is None or metric.group(1) in METRICS):
            metrics.append(_parse_metric(name, *metric.groups()))
        elif field is not None:
            field_name, text = field.groups()
            fields.append(_parse_field(name, field_name, text, families))
        else:
            raise ValueError(f"rule {name!r}: {word!r} is not a condition (FIELD=VALUE or METRIC>NUMBER)")
    if metrics and (fields or len(metrics) > 1):
        raise ValueError(
            f"rule {name!r}: a metric rule has one comparison and nothing else; write one rule per condition"
        )
    if len({f for f, _ in fields}) != len(fields):
        raise ValueError(f"rule {name!r} names a field twice; list alternatives as field=a,b")
    if metrics:
        metric_name, comparison, limit = metrics[0]
        return Rule(name, line.strip(), reason.strip(), metric=metric_name, comparison=comparison, limit=limit)
    return Rule(name, line.strip(), reason.strip(), fields=tuple(fields))


def _split_reason(rest: str) -> tuple[str, str]:
    """The conditions and the reason: they part at the first ``|`` outside double quotes (a
    quoted name may hold one)."""
    quoted = False
    for i, char in enumerate(rest):
        if char == '"':
            quoted = not quoted
        elif char == "|" and not quoted:
            return rest[:i], rest[i + 1 :]
    return rest, ""


def _parse_field(rule: str, field: str, text: str, families: Sequence[str] = ()) -> tuple[str, tuple[str, ...]]:
    if field in METRICS:
        raise ValueError(f"rule {rule!r}: {field} is a metric, compared with > >= < <= == or != (such as {field}>0)")
    if field not in FIELDS:
        raise ValueError(f"rule {rule!r}: unknown field {field!r}; the fields are {', '.join(FIELDS)}")
    quoted = len(text) > 2 and text[0] == text[-1] == '"'
    if '"' in (text[1:-1] if quoted else text):  # a rule that matches nothing, silently: a typo
        raise ValueError(
            f'rule {rule!r}: {field}={text} has an unbalanced double quote; write {field}="..." with the '
            "value between two quotes"
        )
    values = (text[1:-1],) if quoted else tuple(v for v in text.split(",") if v)
    choices = _CHOICES.get(field, ())
    if field == "family" and families:
        choices = tuple(dict.fromkeys([*choices, *families]))
    for value in values:
        if choices and value not in choices:
            raise ValueError(f"rule {rule!r}: {field}={value} is not one of {', '.join(choices)}")
    return field, values


def _parse_metric(rule: str, metric: str, comparison: str, text: str) -> tuple[str, str, float]:
    if metric not in METRICS:
        raise ValueError(f"rule {rule!r}: unknown metric {metric!r}; the metrics are {', '.join(METRICS)}")
    number = _NUMBER.match(text.strip())
    unit = number.group(2).lower() if number is not None else ""
    if number is None or unit not in _UNITS or (unit and not METRICS[metric].size):
        units = " (a size may end in KiB, MiB, GiB, KB, MB or GB)" if METRICS[metric].size else ""
        raise ValueError(f"rule {rule!r}: {metric}{comparison} takes a number, got {text!r}{units}")
    exact = Fraction(number.group(1)) * _UNITS[unit]  # 0.1KB is 100 bytes, not 100.00000000000001
    limit = float(exact)
    # A rule that never or always breaks is a mistake: every metric counts or measures from 0.
    if limit < 0:
        raise ValueError(
            f"rule {rule!r}: {metric}{comparison}{text}: {metric} is never negative: compare it with 0 or more"
        )
    if limit == 0 and comparison in ("<", ">="):
        never = comparison == "<"
        raise ValueError(
            f"rule {rule!r}: {metric}{comparison}{text} {'never breaks' if never else 'breaks on every profile'} "
            f"({metric} is never negative); did you mean {metric}>0, which any at all breaks?"
        )
    # Every metric is a whole number (a count, or bytes): syncs==0.5 would never break and
    # syncs!=0.5 always; a size in units (1.5GiB) may be fractional where it is a bound.
    if exact.denominator != 1 and (not METRICS[metric].size or comparison in ("==", "!=")):
        what = "a number of bytes" if METRICS[metric].size else "a count"
        raise ValueError(
            f"rule {rule!r}: {metric}{comparison}{text}: {metric} is {what}, always a whole number; "
            f"compare it with a whole number (such as {metric}{comparison}{int(limit)})"
        )
    return metric, comparison, limit


def parse_rules(lines: Sequence[str], families: Sequence[str] = ()) -> tuple[Rule, ...]:
    """Every rule of the ini value; ``ValueError`` naming the 1-based line that is wrong.
    Blank lines and lines starting with ``#`` are skipped."""
    rules: list[Rule] = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            rule = parse_rule(text, families)
        except ValueError as exc:
            raise ValueError(f"line {number} {text!r}: {exc}") from None
        if any(r.name == rule.name for r in rules):
            raise ValueError(f"line {number} {text!r}: a second rule named {rule.name!r}")
        rules.append(rule)
    return tuple(rules)


# -- checking -----------------------------------------------------------------------------


def violation(prof: KernelProfile, rule: Rule) -> str | None:
    """Why ``prof`` breaks ``rule`` (what broke it, as a table), or None.

    A rule that the profile cannot be checked against (kernel rules without GPU activity,
    memory on the CPU, graph breaks a profile cannot tell) does not apply to it: suite-wide
    rules must not fail every CPU test.
    """
    __tracebackhide__ = True
    try:
        if rule.sort == "kernel":
            return _kernel_violation(prof, rule)
        if rule.sort == "op":
            return _op_violation(prof, rule)
        return _metric_violation(prof, rule)
    except (NoDeviceActivityError, CannotTellError):
        return None


def _kernel_violation(prof: KernelProfile, rule: Rule) -> str | None:
    __tracebackhide__ = True
    if not prof.has_device_activity:
        return None
    undecided: list[Kernel] = []
    for call in prof.calls if prof.varied else (prof.call,):
        found = [(i, k) for i, k in enumerate(call.kernels) if rule.matches_kernel(k)]
        if found:
            where = f" in call {call.index}" if prof.varied else " per call"
            table = kernel_table([k for _, k in found], [i for i, _ in found], medians=call.kernels.times is not None)
            return f"{len(found)} of {len(call.kernels)} kernels{where} match:\n{table}"
        undecided.extend(k for k in call.kernels if rule.could_match_kernel(k))
    # Unbroken, but kernels of unknown kind or dtype could break it: a rule never passes
    # silently on them (an error under --kernelprof-strict-decode).
    warn_undecided(printable(f"kernelprof_forbid rule {rule.name!r} ({rule.conditions})"), undecided)
    return None


def _op_violation(prof: KernelProfile, rule: Rule) -> str | None:
    for call in prof.calls:
        names = [n for n in call.ops.names if rule.matches_op(n)]
        if names:
            rows = []
            for op in (call.ops[n] for n in names):
                kernels = str(len(op.kernels)) if op.kernels.measured else "-"
                rows.append((op.name, str(op.count), format_us(op.cpu_time_us), kernels, ", ".join(op.children) or "-"))
            table = render_table(("op", "count", "cpu us", "kernels", "children"), rows, right=(1, 2, 3))
            return f"ran in call {call.index}:\n{table}"
    return None


def _metric_violation(prof: KernelProfile, rule: Rule) -> str | None:
    assert rule.metric is not None
    metric = METRICS[rule.metric]
    value = read_metric(prof, rule.metric)
    if value is None or not _COMPARISONS[rule.comparison](value, rule.limit):
        return None
    shown = f"{value:,} ({format_bytes(value)})" if metric.size else str(value)
    detail = metric.detail(prof)
    return f"{rule.metric} = {shown}" + (f":\n{detail}" if detail else "")


def check_rules(prof: KernelProfile, rules: Sequence[Rule]) -> None:
    """Raise :class:`ForbiddenError` naming every rule ``prof`` breaks."""
    __tracebackhide__ = True
    broken = []
    for rule in rules:  # a loop, not a comprehension: its frame would show in a failure
        found = violation(prof, rule)
        if found is not None:
            broken.append((rule, found))
    if not broken:
        return
    parts = []
    for rule, found in broken:
        reason = f": {rule.reason}" if rule.reason else ""
        parts.append(f"kernelprof_forbid rule {rule.name!r} ({rule.conditions}) is broken{reason}\n{found}")
    suite = ", ".join(repr(rule.name) for rule, _ in broken if rule.suite)
    if suite:
        parts.append(f"(a test that may break it: @pytest.mark.kernelprof_allow({suite}))")
    own = ", ".join(repr(rule.name) for rule, _ in broken if not rule.suite)
    if own:
        parts.append(f"({own}: given to this profiler's forbid=, which a test that may break it leaves out)")
    error = ForbiddenError("\n\n".join(parts))
    error.metrics = tuple(rule.metric for rule, _ in broken if rule.metric is not None)
    raise error
