"""What a baseline stores of a profile and how two are compared: ``Signature`` (the kernel
sequence as ``BaselineKernel`` records, the memory operations, the metrics), the checks of
each stored value, and ``compare``/``compare_metrics`` for each ``--kernelprof-baseline-names``
mode.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...decode import (
    DTYPES,
    FAMILIES,
    KINDS,
    LAYOUTS,
    TRITON_FAMILIES,
    KernelName,
    bias_in_epilogues,
    fused_ops_read_now,
    parse_kernel_name,
)
from ...health import REGION_PREFIX
from ...model import Kernel, KernelProfile
from ...model.kernel_text import kind_text
from ...tables import display_name
from ..diff import diff_kernels, dtype_moved, render_diff, shape_key, summary_lines, unknown_dtype_note
from ..metrics import METRICS, read_metric

# The built-in families of libraries whose kernel names change with the library's version and
# between cards of one architecture (cuBLAS's nvjet tiles, cuDNN's engines): the ``stable`` mode
# compares them by kind, family, layout and dtype. Every other family keeps its names compared:
# Triton kernels keep theirs from run to run (a Python function's, or Inductor's for its code),
# an unknown kernel is an extension's, and a family the user taught (``family=acme``) names
# kernels of their own. Decided by the stored family alone, not by how the decoder came to it:
# a baseline is read where no session's decoder applies (the run's end, the xdist controller).
DRIFTING_NAME_FAMILIES = frozenset(FAMILIES) - {*TRITON_FAMILIES, "unknown"}


def name_compared(family: str, mode: str) -> bool:
    """Whether the names mode ``mode`` compares the names of kernels of ``family``."""
    return mode == "exact" or (mode == "stable" and family not in DRIFTING_NAME_FAMILIES)


FORMAT_VERSION = 1


# Metrics an entry keeps (names of metrics.METRICS), each better lower; those with a
# relative tolerance (--kernelprof-memory-tolerance, default DEFAULT_MEMORY_TOLERANCE).
BASELINE_METRICS = ("syncs", "dtoh_copies", "launches", "graph_breaks", "recompiles", "peak_bytes")
TOLERANT_METRICS = frozenset(("peak_bytes",))

# The kernel fields a baseline file stores. A fixed list, not every KernelName field: a
# field added to the decoder must not change every stored baseline.
STORED_FIELDS = ("name", "kind", "family", "layout", "fused_ops", "op", "dtype")
# The keys of an entry of one profile (Signature.to_json).
ENTRY_KEYS = ("device", "kernels", "memcpy", "memset", "metrics")


# Dynamo numbers its compiled regions in the order it compiles them in the process
# ("Torch-Compiled Region: 2/0"), so the numbers depend on which tests ran before.
_COMPILE_IDS = re.compile(rf"^({re.escape(REGION_PREFIX)}): \d+/\d+$")
# Baselines written before the kernels a CUDA graph replays had their compiled region as op
# store Inductor's range around the graph's call, which launches them, as their op (without
# its hash, ``## Call CompiledFxGraph ##``): read as the region around it in inference.
_GRAPH_CALL = re.compile(r"^## Call CompiledFxGraph( \w+)? ##$")


def stable_op(op: str | None) -> str | None:
    """A kernel's op as baselines store and compare it: a compiled region without its compile
    ids; a compiled graph's call, which older baselines store, as the compiled region."""
    if op is None:
        return None
    return REGION_PREFIX if _GRAPH_CALL.match(op) else _COMPILE_IDS.sub(r"\1", op)


@dataclass(frozen=True, kw_only=True)
class BaselineKernel(KernelName):
    """One kernel of a stored signature: a decoded name (the stored fields of it) and its op."""

    op: str | None = None
    # Not stored, nor compared: the work a helper kernel belongs to, this run's decoder's for a
    # stored kernel (from its name), so that a baseline's lines tell ``scal_kernel`` as ``part of
    # gemm`` on both sides, as the kernel tables do.
    part_of: str | None = field(default=None, compare=False)

    @classmethod
    def of(cls, kernel: Kernel) -> BaselineKernel:
        fields = {f: getattr(kernel, f) for f in STORED_FIELDS}
        fields["op"] = stable_op(kernel.op)
        return cls(**fields, part_of=kernel.part_of)

    def to_json(self) -> dict[str, Any]:
        data = {f: getattr(self, f) for f in STORED_FIELDS}
        data["fused_ops"] = list(self.fused_ops)
        return data

    @classmethod
    def from_json(cls, data: object, where: str) -> BaselineKernel:
        """The kernel stored as ``data``; a ValueError naming the field (``where`` is the
        kernel's own, ``kernels[3]``) that holds a value no kernel can have."""
        if not isinstance(data, Mapping):
            raise bad_value(where, data, "an object")
        # A misspelt field ("dtpye") would otherwise be ignored and the field it meant read as
        # missing, which an older file's kernels are, so compared as nothing: the check passes.
        known_keys(data, STORED_FIELDS, where, "a baseline kernel field")
        fields = {f: data.get(f, MISSING) for f in STORED_FIELDS}
        name, op, fused_ops = fields["name"], fields["op"], fields["fused_ops"]
        if not isinstance(name, str):
            raise bad_value(f"{where}.name", name, "a string")
        if op is not None and not isinstance(op, str):
            raise bad_value(f"{where}.op", op, "a string or null")
        if fused_ops is MISSING:
            fused_ops = []
        if not isinstance(fused_ops, list) or not all(isinstance(o, str) for o in fused_ops):
            raise bad_value(f"{where}.fused_ops", fused_ops, "a list of op names")
        layout, dtype = fields["layout"], fields["dtype"]
        if layout is not None and layout is not MISSING:
            layout = _choice(layout, LAYOUTS, f"{where}.layout", "null")
        if dtype is not None and dtype is not MISSING:  # a file written before dtypes were kept has none
            dtype = _choice(dtype, DTYPES, f"{where}.dtype", "null")
        kind, family = _choice(fields["kind"], KINDS, f"{where}.kind"), _family(fields["family"], f"{where}.family")
        op = None if op is MISSING else stable_op(op)
        return cls(
            name=name,
            kind=kind,
            family=family,
            layout=None if layout is MISSING else layout,
            dtype=None if dtype is MISSING else dtype,
            # An older file may hold fused ops an older decoder gave (a view, no bias) and a
            # graph's hash: each compares as it would be written now.
            fused_ops=fused_ops_read_now(tuple(fused_ops), name, op, kind, family),
            op=op,
            part_of=parse_kernel_name(name).part_of,
        )


def _with_fused_ops(kernel: BaselineKernel, fused_ops: tuple[str, ...]) -> BaselineKernel:
    return replace(kernel, fused_ops=fused_ops)


# Stands for a field a hand-edited entry lacks, where null is a value.
MISSING: Any = object()


def bad_value(where: str, value: object, expected: str) -> ValueError:
    """The error for the field ``where`` that holds ``value`` (its repr, cut short) or lacks one."""
    if value is MISSING:
        return ValueError(f"{where} is missing")
    text = repr(value)
    return ValueError(f"{where} is {text if len(text) <= 60 else text[:57] + '...'}, not {expected}")


def known_keys(data: Mapping[str, Any], known: Sequence[str], where: str, what: str) -> None:
    """A ValueError for the first key of ``data`` (the object at ``where``, "" for an entry's
    own keys) that is not one of ``known``, in the words of an unknown metric's."""
    for key in data:
        if key not in known:
            field = f"{where}.{key}" if where else str(key)
            raise ValueError(f"{field} is not {what}; they are {', '.join(known)}")


def _choice(value: object, choices: Sequence[str], where: str, other: str = "") -> str:
    if not isinstance(value, str) or value not in choices:
        listed = ", ".join(choices[:-1]) + (f", {choices[-1]} or {other}" if other else f" or {choices[-1]}")
        raise bad_value(where, value, f"one of {listed}")
    return value


# A family is any name a user may teach (decode/teach.py takes the same, which
# tests/unit/checks/baseline/test_signature.py holds it to), not only the built-in ones: the
# tool writes taught families into baselines, and a file is read where no session's decoder
# applies (the run's end, the xdist controller, CI outputs). A family that this run's decoder
# does not give (taught no more, or a typo) is a change of the kernels' family, which the
# comparison shows, not a corrupt file.
_FAMILY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _family(value: object, where: str) -> str:
    if not isinstance(value, str) or not _FAMILY.fullmatch(value):
        raise bad_value(where, value, "a family name (letters, digits, '_', '-' or '.'), e.g. cublas")
    return value


# The largest values an entry may hold. A count per call above a billion, or a size above a
# PiB, is no profile this plugin could have read (a trace of that many events would be
# terabytes): it is a hand edit gone wrong, and comparing against it would call any run an
# improvement.
MAX_COUNT = 10**9
MAX_BYTES = 2**50


def stored_count(value: object, where: str, *, size: bool = False) -> int:
    limit = MAX_BYTES if size else MAX_COUNT
    # bool is an int to Python, never a count to a reader of the file.
    if type(value) is not int or not 0 <= value <= limit:
        bound = "a size from 0 to 1 PiB" if size else f"a count from 0 to {MAX_COUNT:,}"
        raise bad_value(where, value, bound)
    return value


@dataclass(frozen=True)
class Signature:
    """What should stay stable about one call of a profile."""

    kernels: tuple[BaselineKernel, ...]
    memcpy: int
    memset: int
    metrics: Mapping[str, int] = field(default_factory=dict)  # of BASELINE_METRICS, those known

    @classmethod
    def of(cls, prof: KernelProfile) -> Signature:
        kernels = tuple(BaselineKernel.of(k) for k in prof.kernels)
        memory = prof.memory_ops
        metrics = {name: value for name in BASELINE_METRICS if (value := read_metric(prof, name)) is not None}
        return cls(kernels, sum(m.kind == "memcpy" for m in memory), sum(m.kind == "memset" for m in memory), metrics)

    def to_json(self, prof: KernelProfile) -> dict[str, Any]:
        return {
            "device": prof.device,
            "kernels": [k.to_json() for k in self.kernels],
            "memcpy": self.memcpy,
            "memset": self.memset,
            "metrics": dict(self.metrics),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Signature:
        """The stored entry ``data``; a ValueError naming the field that holds an impossible value."""
        known_keys(data, ENTRY_KEYS, "", "a key of a baseline entry")
        stored = data.get("kernels", MISSING)
        if not isinstance(stored, list):
            raise bad_value("kernels", stored, "a list")
        read = [BaselineKernel.from_json(k, f"kernels[{i}]") for i, k in enumerate(stored)]
        # Where an older decoder gave the op's bias to a GEMM its epilogue kernel adds for it.
        kernels = tuple(bias_in_epilogues(read, [k.op for k in read], _with_fused_ops))
        metrics = data.get("metrics", {})
        if not isinstance(metrics, dict):
            raise bad_value("metrics", metrics, "an object")
        for name, value in metrics.items():
            if name not in BASELINE_METRICS:
                raise ValueError(f"metrics.{name} is not a baseline metric; they are {', '.join(BASELINE_METRICS)}")
            stored_count(value, f"metrics.{name}", size=METRICS[name].size)
        return cls(
            kernels,
            stored_count(data.get("memcpy", 0), "memcpy"),
            stored_count(data.get("memset", 0), "memset"),
            metrics,
        )


def comparison_key(mode: str) -> Callable[[BaselineKernel], Hashable]:
    def key(kernel: BaselineKernel) -> Hashable:
        shape = (*shape_key(kernel), kernel.op)
        if name_compared(kernel.family, mode):
            return (*shape, kernel.name)
        return shape

    return key


def compare(stored: Signature, current: Signature, mode: str) -> list[str] | None:
    """None when the kernels of ``current`` match ``stored`` under ``mode``; else the diff lines.
    Memory operations are compared by :func:`compare_metrics`: they have a direction."""
    key = comparison_key(mode)
    diff = diff_kernels(stored.kernels, current.kernels, by=key)
    if diff.same:
        return None
    if list(map(key, stored.kernels)) == list(map(key, current.kernels)):
        # Only dtypes moved (the diff's ``~`` of aligned kernels): each told on one line.
        return _dtype_moves(stored.kernels, current.kernels)
    return [
        *per_call_lines(stored, current),
        *summary_lines(stored.kernels, current.kernels),
        "--- baseline",
        "+++ this run",
        *render_diff(diff, "the baseline", "this run"),
        *unknown_dtype_note(stored.kernels, current.kernels, "the baseline", "this run"),
    ]


def launches_follow_kernels(stored: Signature, current: Signature) -> bool:
    """Whether the ``launches`` metric moved by exactly as many as the kernels per call: a
    launch per kernel, so one change (a lost fusion), which the kernels-per-call line tells
    once. A launches change of another size (CUDA graphs, several launches a kernel) is its own."""
    old, new = stored.metrics.get("launches"), current.metrics.get("launches")
    moved = len(current.kernels) - len(stored.kernels)
    return old is not None and new is not None and moved != 0 and new - old == moved


def per_call_lines(stored: Signature, current: Signature) -> list[str]:
    """The failure's headline where the kernels per call changed (``kernels per call: 4 -> 5
    (launches too)``), which the timeline page's baseline section leads with too."""
    # Left out when unchanged, as an unchanged count or metric is: "kernels per call: 1", with
    # no arrow, read as a line cut short.
    a, b = len(stored.kernels), len(current.kernels)
    if a == b:
        return []
    line = f"kernels per call: {a} -> {b}"
    if launches_follow_kernels(stored, current):
        # Told again among the worse metrics, `launches: 4 -> 5` read as a second regression.
        old, new = stored.metrics["launches"], current.metrics["launches"]
        line += " (launches too)" if (old, new) == (a, b) else f" (launches {old:,} -> {new:,} with them)"
    return [line]


def _dtype_moves(stored: Sequence[BaselineKernel], current: Sequence[BaselineKernel]) -> list[str]:
    """The kernels of a matching sequence whose dtype moved, where both sides know it
    (:func:`dtype_moved`): a GELU that runs in fp32 where it ran in bf16 is the same kernel
    shape, another kernel. A dtype one side does not know (a file written before dtypes were
    kept, a Triton kernel read from a trace without its IR) is not compared."""
    moved = [(i, old, new) for i, (old, new) in enumerate(zip(stored, current, strict=True)) if dtype_moved(old, new)]
    return [  # of one length (the kernels matched but for dtypes): no kernels-per-call line
        *summary_lines(stored, current),
        "--- baseline",
        "+++ this run",
        *(
            f"#{i} {kind_text(new)}: {old.dtype} in the baseline, {new.dtype} in this run  " + display_name(new.name)
            for i, old, new in moved
        ),
        *unknown_dtype_note(stored, current, "the baseline", "this run"),
    ]


# The memory operations each names mode compares, as (the MetricChange name, the Signature field).
MEMORY_COUNTS = {
    "exact": (("memcpys", "memcpy"), ("memsets", "memset")),
    "stable": (("memcpys", "memcpy"),),
    "loose": (),
}


@dataclass(frozen=True)
class MetricChange:
    name: str
    stored: int
    current: int
    tolerance: float = 0.0  # relative, for TOLERANT_METRICS

    def __str__(self) -> str:
        text = f"{self.name}: {self.stored:,} -> {self.current:,}"
        if self.name in TOLERANT_METRICS and self.stored:
            text += f" ({(self.current - self.stored) / self.stored:+.1%}; tolerance {self.tolerance:.0%})"
        return text


def compare_metrics(
    stored: Signature, current: Signature, tolerance: float, mode: str = "stable"
) -> tuple[list[MetricChange], list[MetricChange]]:
    """(worse, better): the metrics both signatures have that went up or down, a tolerant
    metric only beyond ``tolerance`` of the stored value; then the memory operations that
    ``mode`` compares (``MEMORY_COUNTS``), which are better lower too: a removed ``.item()``
    takes a memcpy with its sync and its DtoH copy, and all three read as improved."""
    worse: list[MetricChange] = []
    better: list[MetricChange] = []
    counts = [
        (name, stored.metrics[name], current.metrics[name])
        for name in BASELINE_METRICS
        if name in stored.metrics and name in current.metrics
    ]
    counts.extend((name, getattr(stored, field), getattr(current, field)) for name, field in MEMORY_COUNTS[mode])
    for name, old, new in counts:
        slack = tolerance * old if name in TOLERANT_METRICS else 0
        change = MetricChange(name, old, new, tolerance)
        if new > old + slack:
            worse.append(change)
        elif new < old - slack:
            better.append(change)
    return worse, better


def differences(
    recorded: Signature, current: Signature, mode: str, tolerance: float
) -> tuple[list[str] | None, list[MetricChange], list[MetricChange]]:
    """What a check compares: the signature's diff lines (None where it matches), then the worse
    and the better metrics."""
    lines = compare(recorded, current, mode)
    worse, better = compare_metrics(recorded, current, tolerance, mode)
    if lines is not None and launches_follow_kernels(recorded, current):
        # A launch per kernel: the kernels-per-call line tells the launches with the kernels, once.
        worse = [change for change in worse if change.name != "launches"]
        better = [change for change in better if change.name != "launches"]
    return lines, worse, better
