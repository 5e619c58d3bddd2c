"""Stored kernel signatures per GPU architecture: record once, compare on every run.

A baseline file holds, per architecture (``sm80``, ``sm90``, ...), one entry per checked
profile: the kernel sequence of one call as kind, family, layout, fused ops, launching op
and name, plus the memory operations. cuBLAS picks other kernels on other GPUs, hence one
entry per architecture.

How names are compared (``names``):

- ``stable`` (default): names of Inductor kernels and of user kernels (Triton, CUDA
  extensions) are compared, library names are not. Inductor names encode the fusion
  (``triton_poi_fused__unsafe_view_gelu_mul_0``) and user kernels are yours; cuBLAS and
  ATen names change with the library version and with the card within one architecture
  (H100 and H200 pick different nvjet tiles), which is not a regression. Memcpys count,
  memsets do not: cuBLAS workspace memsets vary with shape and card.
- ``exact``: every name, and every memory operation.
- ``loose``: no names, no memory operations: only kind, family, layout, fused ops and op.

Beside the signature an entry keeps metrics, each better lower (``BASELINE_METRICS``): a
higher value fails with the change, a lower one passes and is reported as an improvement to
lock in. ``peak_bytes`` has a relative tolerance; the others are counts and have none. A
metric that a profile cannot tell, or that an older file lacks, is not compared. The memory
operations a mode counts are better lower in the same way (decided: a memcpy removed with an
``.item()`` is the improvement that its sync and its DtoH copy are).

Files are JSON with sorted keys, two-space indent and a trailing newline, written to a
temporary file and renamed, so a reader never sees half a file and review diffs stay small.
Reading one checks every stored value, since people edit these files by hand: a kind, family
or layout the decoder never gives, a count that is negative, not an integer or above
``MAX_COUNT`` (a billion per call), a size above ``MAX_BYTES`` (1 PiB) is a BaselineError
naming the file, the entry and the field.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .compare import count_changes, diff_kernels, render_diff, shape_key
from .defaults import DEFAULT_MEMORY_TOLERANCE
from .errors import BaselineError
from .explain import Explanation
from .health import REGION_PREFIX
from .metrics import METRICS, read_metric
from .model import Kernel, KernelProfile
from .names import KINDS, LAYOUTS, KernelName
from .paths import atomic_path, baseline_file_name, legacy_baseline_file_name, name_in_module
from .rules import FAMILIES
from .unknowns import warn_undecided

STABLE_NAME_FAMILIES = frozenset(("inductor", "triton", "unknown"))
FORMAT_VERSION = 1


# Metrics an entry keeps (names of metrics.METRICS), each better lower; those with a
# relative tolerance (--kernelprof-memory-tolerance, default DEFAULT_MEMORY_TOLERANCE).
BASELINE_METRICS = ("syncs", "dtoh_copies", "launches", "graph_breaks", "recompiles", "peak_bytes")
TOLERANT_METRICS = frozenset(("peak_bytes",))

# The kernel fields a baseline file stores. A fixed list, not every KernelName field: a
# field added to the decoder must not change every stored baseline.
STORED_FIELDS = ("name", "kind", "family", "layout", "fused_ops", "op")


# Dynamo numbers its compiled regions in the order it compiles them in the process
# ("Torch-Compiled Region: 2/0"), so the numbers depend on which tests ran before.
_COMPILE_IDS = re.compile(rf"^({re.escape(REGION_PREFIX)}): \d+/\d+$")
# Inductor names the range around a compiled graph's call, which is what kernels replayed by
# a CUDA graph are launched by, after the graph's hash: it changes from process to process.
_GRAPH_HASH = re.compile(r"^## (Call CompiledFxGraph) \w+ ##$")


def stable_op(op: str | None) -> str | None:
    """A kernel's op as baselines store and compare it: a compiled region without its compile
    ids, a compiled graph's call without its hash (``## Call CompiledFxGraph ##``)."""
    if op is None:
        return None
    return _GRAPH_HASH.sub(r"## \1 ##", _COMPILE_IDS.sub(r"\1", op))


@dataclass(frozen=True, kw_only=True)
class BaselineKernel(KernelName):
    """One kernel of a stored signature: a decoded name (the stored fields of it) and its op."""

    op: str | None = None

    @classmethod
    def of(cls, kernel: Kernel) -> BaselineKernel:
        fields = {f: getattr(kernel, f) for f in STORED_FIELDS}
        fields["op"] = stable_op(kernel.op)
        return cls(**fields)

    def to_json(self) -> dict[str, Any]:
        data = {f: getattr(self, f) for f in STORED_FIELDS}
        data["fused_ops"] = list(self.fused_ops)
        return data

    @classmethod
    def from_json(cls, data: object, where: str) -> BaselineKernel:
        """The kernel stored as ``data``; a ValueError naming the field (``where`` is the
        kernel's own, ``kernels[3]``) that holds a value no kernel can have."""
        if not isinstance(data, Mapping):
            raise _bad(where, data, "an object")
        fields = {f: data.get(f, _MISSING) for f in STORED_FIELDS}
        name, op, fused_ops = fields["name"], fields["op"], fields["fused_ops"]
        if not isinstance(name, str):
            raise _bad(f"{where}.name", name, "a string")
        if op is not None and not isinstance(op, str):
            raise _bad(f"{where}.op", op, "a string or null")
        if fused_ops is _MISSING:
            fused_ops = []
        if not isinstance(fused_ops, list) or not all(isinstance(o, str) for o in fused_ops):
            raise _bad(f"{where}.fused_ops", fused_ops, "a list of op names")
        layout = fields["layout"]
        if layout is not None and layout is not _MISSING:
            layout = _choice(layout, LAYOUTS, f"{where}.layout", "null")
        return cls(
            name=name,
            kind=_choice(fields["kind"], KINDS, f"{where}.kind"),
            family=_choice(fields["family"], FAMILIES, f"{where}.family"),
            layout=None if layout is _MISSING else layout,
            fused_ops=tuple(fused_ops),
            # An older file may hold a graph's hash: it compares as it would be written now.
            op=None if op is _MISSING else stable_op(op),
        )


# Stands for a field a hand-edited entry lacks, where null is a value.
_MISSING: Any = object()


def _bad(where: str, value: object, expected: str) -> ValueError:
    """The error for the field ``where`` that holds ``value`` (its repr, cut short) or lacks one."""
    if value is _MISSING:
        return ValueError(f"{where} is missing")
    text = repr(value)
    return ValueError(f"{where} is {text if len(text) <= 60 else text[:57] + '...'}, not {expected}")


def _choice(value: object, choices: Sequence[str], where: str, other: str = "") -> str:
    if not isinstance(value, str) or value not in choices:
        listed = ", ".join(choices[:-1]) + (f", {choices[-1]} or {other}" if other else f" or {choices[-1]}")
        raise _bad(where, value, f"one of {listed}")
    return value


# The largest values an entry may hold. A count per call above a billion, or a size above a
# PiB, is no profile this plugin could have read (a trace of that many events would be
# terabytes): it is a hand edit gone wrong, and comparing against it would call any run an
# improvement.
MAX_COUNT = 10**9
MAX_BYTES = 2**50


def _count(value: object, where: str, *, size: bool = False) -> int:
    limit = MAX_BYTES if size else MAX_COUNT
    # bool is an int to Python, never a count to a reader of the file.
    if type(value) is not int or not 0 <= value <= limit:
        bound = "a size from 0 to 1 PiB" if size else f"a count from 0 to {MAX_COUNT:,}"
        raise _bad(where, value, bound)
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
        stored = data.get("kernels", _MISSING)
        if not isinstance(stored, list):
            raise _bad("kernels", stored, "a list")
        kernels = tuple(BaselineKernel.from_json(k, f"kernels[{i}]") for i, k in enumerate(stored))
        metrics = data.get("metrics", {})
        if not isinstance(metrics, dict):
            raise _bad("metrics", metrics, "an object")
        for name, value in metrics.items():
            if name not in BASELINE_METRICS:
                raise ValueError(f"metrics.{name} is not a baseline metric; they are {', '.join(BASELINE_METRICS)}")
            _count(value, f"metrics.{name}", size=METRICS[name].size)
        return cls(kernels, _count(data.get("memcpy", 0), "memcpy"), _count(data.get("memset", 0), "memset"), metrics)


def comparison_key(mode: str) -> Callable[[BaselineKernel], Hashable]:
    def key(kernel: BaselineKernel) -> Hashable:
        shape = (*shape_key(kernel), kernel.op)
        if mode == "exact" or (mode == "stable" and kernel.family in STABLE_NAME_FAMILIES):
            return (*shape, kernel.name)
        return shape

    return key


def compare(stored: Signature, current: Signature, mode: str) -> list[str] | None:
    """None when the kernels of ``current`` match ``stored`` under ``mode``; else the diff lines.
    Memory operations are compared by :func:`compare_metrics`: they have a direction."""
    diff = diff_kernels(stored.kernels, current.kernels, by=comparison_key(mode))
    if diff.same:
        return None
    return [
        f"kernels per call: {len(stored.kernels)} -> {len(current.kernels)}",
        *(f"count change: {c}" for c in count_changes(stored.kernels, current.kernels)),
        "--- baseline",
        "+++ this run",
        *render_diff(diff, "baseline", "this run"),
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


def read_baseline(path: Path) -> dict[str, Any]:
    """The parsed file ({} when absent); a BaselineError when it exists but is not a baseline."""
    __tracebackhide__ = True
    fix = "fix it from version control, or delete it and run with --kernelprof-update to record it again"
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except UnicodeDecodeError as exc:
        raise BaselineError(
            f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); {fix}"
        ) from None
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read the baseline ({exc.strerror or exc})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BaselineError(f"{path}: not valid JSON ({exc}); {fix}") from None
    except RecursionError:
        raise BaselineError(f"{path}: not a pytest-kernelprof baseline (nested too deeply); {fix}") from None
    if not isinstance(data, dict) or "format" not in data:
        raise BaselineError(
            f"{path}: not a pytest-kernelprof baseline (a JSON object with 'format' and 'archs' keys); {fix}"
        )
    version = data["format"]
    if type(version) is int and version > FORMAT_VERSION:  # not "fix it": the file is good, the reader old
        raise BaselineError(
            f"{path}: baseline format {version} is newer than this pytest-kernelprof reads (format "
            f"{FORMAT_VERSION}): upgrade pytest-kernelprof to compare against it"
        )
    if type(version) is not int or version != FORMAT_VERSION:
        raise BaselineError(
            f"{path}: unknown baseline format {version!r} (this pytest-kernelprof reads format {FORMAT_VERSION}); {fix}"
        )
    if not isinstance(data.get("archs"), dict):
        raise BaselineError(f"{path}: {_bad('archs', data.get('archs', _MISSING), 'an object')}; {fix}")
    for arch, entries in data["archs"].items():
        if not isinstance(entries, dict):
            raise BaselineError(f"{path}: entry {arch!r} is not an object; {fix}")
        for name, entry in entries.items():
            if not isinstance(entry, dict):
                raise BaselineError(f"{path}: entry {arch}/{name} is not an object; {fix}")
            try:
                Signature.from_json(entry)
            except ValueError as exc:
                raise BaselineError(f"{path}: entry {arch}/{name}: {exc}; {fix}") from None
    return data


def write_baseline(path: Path, data: Mapping[str, Any]) -> None:
    """Write atomically: a temporary file in the same folder, then a rename."""
    __tracebackhide__ = True
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    try:
        with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise BaselineError(f"cannot write the baseline {path}: {exc}") from None


# What --kernelprof-update did to one entry.
WRITTEN, UPDATED, UNCHANGED = "written", "updated", "unchanged"


def record(path: Path, arch: str, name: str, prof: KernelProfile, *, legacy: Path | None = None) -> str:
    """Write or replace the entry ``arch/name``, keeping every other entry of the file;
    ``written`` (a new entry), ``updated`` or ``unchanged`` (the file is left as it was).

    Where ``path`` does not exist yet and ``legacy`` (the file under the old naming) does,
    its entries move into ``path`` and ``legacy`` is removed."""
    __tracebackhide__ = True
    data = read_baseline(path)
    moved = False
    if not data and legacy is not None and legacy != path:
        data = read_baseline(legacy)
        moved = bool(data)
    data = data or {"format": FORMAT_VERSION, "archs": {}}
    entry = Signature.of(prof).to_json(prof)
    before = data["archs"].get(arch, {}).get(name)
    outcome = WRITTEN if before is None else UNCHANGED if before == entry else UPDATED
    if outcome != UNCHANGED or moved:
        data["archs"].setdefault(arch, {})[name] = entry
        write_baseline(path, data)
    if moved and legacy is not None:
        with contextlib.suppress(FileNotFoundError):  # another xdist worker moved it first
            os.remove(legacy)
    return outcome


def entries(data: Mapping[str, Any]) -> Sequence[tuple[str, str]]:
    """Every (arch, name) entry of a parsed baseline file."""
    return [(arch, name) for arch, named in data.get("archs", {}).items() for name in named]


def baseline_paths(module: Path, nodeid: str) -> tuple[Path, Path]:
    """The baseline file of the test ``nodeid`` of ``module``, and its name under the old naming."""
    folder = module.parent / "__kernelprof__" / module.stem
    test = name_in_module(nodeid)
    return folder / baseline_file_name(test), folder / legacy_baseline_file_name(_function_name(test))


def _function_name(test: str) -> str:
    """``TestX::test_k[a::b]`` -> ``test_k[a::b]``: the name without its classes (pytest's ``item.name``)."""
    head, bracket, params = test.partition("[")
    return head.rsplit("::", 1)[-1] + bracket + params


# User properties that carry what a test did with baselines from its report to the session,
# through xdist's controller too: each check ("path|arch|name"), each update
# ("outcome|path|arch|name", "renamed|old|new"), each read of a file under its old name ("old|new").
BASELINE_PROPERTY = "kernelprof_baseline"
UPDATE_PROPERTY = "kernelprof_baseline_update"
LEGACY_PROPERTY = "kernelprof_baseline_legacy"
IMPROVED_PROPERTY = "kernelprof_baseline_improved"  # "nodeid|check name|metric|stored|current"
RENAMED = "renamed"


class KernelBaseline:
    """``kernel_baseline.check(prof)``, or ``assert prof == kernel_baseline``.

    Compares a profile's kernel signature with the one stored for this test and the
    profile's GPU architecture in ``__kernelprof__/<module>/<test>.json`` beside the test
    module. With ``--kernelprof-update`` it records the signature instead. ``legacy_path``
    is the file's name under pytest-kernelprof 0.1's naming: read where the file is missing,
    moved to ``path`` by an update. ``notes`` collects the (user property, value) pairs of
    what it did, for the test's report.
    """

    def __init__(
        self,
        path: Path,
        nodeid: str,
        *,
        update: bool,
        names: str,
        notes: list[tuple[str, str]],
        legacy_path: Path | None = None,
        memory_tolerance: float = DEFAULT_MEMORY_TOLERANCE,
    ) -> None:
        self.path = path
        self.legacy_path = legacy_path
        self._nodeid = nodeid
        self._update = update
        self._names = names
        self._tolerance = memory_tolerance
        self._notes = notes
        self._last_failure: Explanation | None = None

    def check(self, prof: KernelProfile, name: str = "default") -> None:
        """Pass, record (under --kernelprof-update), or fail with a diff and the update command."""
        __tracebackhide__ = True
        failure = self._compare(prof, name)
        if failure is not None:
            raise AssertionError("\n".join([*failure.head[1:], *failure.body]))

    def _note(self, key: str, value: str) -> None:
        if (key, value) not in self._notes:
            self._notes.append((key, value))

    def _legacy_only(self) -> bool:
        """Whether only the file under the old name exists."""
        legacy = self.legacy_path
        return legacy is not None and legacy != self.path and not self.path.exists() and legacy.exists()

    def _compare(self, prof: KernelProfile, name: str) -> Explanation | None:
        """None where ``prof`` matches (or was recorded); else what failed, as a short head
        (after the comparison line) and the diff or table as the body."""
        __tracebackhide__ = True
        if not isinstance(prof, KernelProfile):
            raise TypeError(f"kernel_baseline.check() takes a KernelProfile, got {type(prof).__name__}")
        prof.require_device_activity()
        arch = prof.arch or "unknown_arch"
        if self._update:
            moving = self._legacy_only()
            outcome = record(self.path, arch, name, prof, legacy=self.legacy_path)
            self._note(BASELINE_PROPERTY, f"{self.path}|{arch}|{name}")
            self._note(UPDATE_PROPERTY, f"{outcome}|{self.path}|{arch}|{name}")
            if moving:
                self._note(UPDATE_PROPERTY, f"{RENAMED}|{self.legacy_path}|{self.path}")
            return None
        path = self.path
        if self._legacy_only():
            assert self.legacy_path is not None
            path = self.legacy_path
            self._note(LEGACY_PROPERTY, f"{path}|{self.path}")
        self._note(BASELINE_PROPERTY, f"{path}|{arch}|{name}")
        stored = read_baseline(path).get("archs", {}).get(arch, {}).get(name)
        update = f"pytest --kernelprof-update '{self._nodeid}'"
        summary = "KernelProfile == kernel_baseline failed:"
        if stored is None:
            head = [summary, f"no kernel baseline {arch}/{name} in {path}", f"record it with: {update}"]
            return Explanation(head, prof.kernels.table().splitlines())
        recorded, current = Signature.from_json(stored), Signature.of(prof)
        lines = compare(recorded, current, self._names)
        worse, better = compare_metrics(recorded, current, self._tolerance, self._names)
        # Kernels no evidence placed are "other" on both sides whatever they are: the kinds
        # compared for them cannot show a change, so the comparison says so.
        unplaced = [k for k in prof.kernels if k.unplaced]
        if lines is None and not worse:
            for change in better:
                self._note(IMPROVED_PROPERTY, f"{self._nodeid}|{name}|{change.name}|{change.stored}|{change.current}")
            warn_undecided(f"kernel_baseline {arch}/{name} (kinds compared)", unplaced)
            return None
        head, body = [summary], []
        if unplaced:
            head.append(f"({len(unplaced)} kernel(s) of unknown kind in this run: their kinds say nothing)")
        if lines is not None:
            at = lines.index("--- baseline")
            head.append(
                f"kernel signature differs from the baseline {arch}/{name} in {path} (names compared: {self._names})"
            )
            head.extend(lines[:at])
            body.extend(lines[at:])
        if worse:
            head.append(f"worse than the baseline {arch}/{name} in {path} (lower is better):")
            head.extend(f"  {change}" for change in worse)
        body.append(f"if the change is intended: {update}")
        return Explanation(head, body)

    def __eq__(self, other: object) -> bool:
        __tracebackhide__ = True
        if not isinstance(other, KernelProfile):
            return NotImplemented
        self._last_failure = self._compare(other, "default")
        return self._last_failure is None

    __hash__ = None  # type: ignore[assignment]

    def explanation(self) -> Explanation | None:
        """Why the last ``==`` failed (for the assertion report)."""
        return self._last_failure

    def __repr__(self) -> str:
        return f"<kernel_baseline {self.path}>"


@dataclass(frozen=True)
class Unused:
    """A stored entry no test checked (``arch``/``name``), or a whole file (``arch`` None)."""

    path: str
    arch: str | None = None
    name: str | None = None
    note: str = ""

    def __str__(self) -> str:
        return f"{self.path}: {self.arch}/{self.name}" if self.arch is not None else f"{self.path} ({self.note})"


class BaselineSession:
    """What a test session saw of baselines, gathered from test reports, so that it works in
    the xdist controller too (where the items never are): which entries went unused, what
    ``--kernelprof-update`` wrote, which files were read under their old names."""

    def __init__(self) -> None:
        self.used: set[str] = set()  # "path|arch|name"
        self.users: dict[str, set[str]] = {}  # path -> node ids that checked it
        self.ran: set[str] = set()  # node ids
        self.not_passed: set[str] = set()  # node ids with a failed or skipped phase
        self.updates: set[str] = set()  # UPDATE_PROPERTY values
        self.legacy: dict[str, set[str]] = {}  # old path -> the new paths that read it
        self.improved: set[str] = set()  # IMPROVED_PROPERTY values

    def add_report(self, nodeid: str, user_properties: Iterable[tuple[str, object]], *, passed: bool = True) -> None:
        self.ran.add(nodeid)
        if not passed:
            self.not_passed.add(nodeid)
        for key, value in user_properties:
            text = str(value)
            if key == BASELINE_PROPERTY:
                self.used.add(text)
                self.users.setdefault(text.split("|", 1)[0], set()).add(nodeid)
            elif key == UPDATE_PROPERTY:
                self.updates.add(text)
            elif key == LEGACY_PROPERTY:
                old, new = text.split("|", 1)
                self.legacy.setdefault(old, set()).add(new)
            elif key == IMPROVED_PROPERTY:
                self.improved.add(text)

    def unused(self, rootpath: Path, *, narrowed: bool) -> list[Unused]:
        return unused_entries(self.used, self.ran, rootpath, look_for_orphans=not narrowed)

    def summary(self, rootpath: Path, *, narrowed: bool, prune: bool = False, blocked: str = "") -> list[list[str]]:
        """The terminal summary's sections, each a title and its lines.

        ``prune`` deletes the unused entries, except those of files that a failed or skipped
        test read (it may not have reached its other checks); ``blocked`` says why entries
        asked to be pruned are not (a narrowed or failing run)."""
        sections = [s for s in (self._update_section(), self._legacy_section(), self._improved_section()) if s]
        unused = self.unused(rootpath, narrowed=narrowed)
        kept: list[str] = []
        if prune and not blocked:
            unfinished = [u for u in unused if self.users.get(u.path, set()) & self.not_passed]
            deleted, errors = prune_entries([u for u in unused if u not in unfinished])
            if deleted:
                sections.append([f"kernelprof: deleted {_entries(len(deleted))}", *map(str, deleted)])
            unused = unfinished + [u for u in unused if u.path in errors]
            kept = [*errors.values(), *(["kept: their tests failed or skipped"] if unfinished else [])]
        elif prune:
            kept = [f"not deleted: {blocked}"]
        if unused:
            tail = kept or [
                "delete them with --kernelprof-prune on a complete, passing run, or by hand once the tests "
                "they belonged to are gone"
            ]
            title = f"kernelprof: {len(unused)} unused baseline entr{'y' if len(unused) == 1 else 'ies'}"
            sections.append([title, *map(str, unused), *tail])
        return sections

    def _update_section(self) -> list[str]:
        counts: dict[str, int] = {}
        changed = []
        for value in sorted(self.updates):
            outcome, rest = value.split("|", 1)
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome == RENAMED:
                changed.append(f"renamed {rest.replace('|', ' -> ')}")
            elif outcome != UNCHANGED:
                path, arch, name = rest.split("|", 2)
                changed.append(f"{outcome} {path}: {arch}/{name}")
        if not counts:
            return []
        said = [(counts[o], o) for o in (WRITTEN, UPDATED, UNCHANGED) if counts.get(o)]
        parts = [f"{n} {o}" if i else f"{_plural(n, 'baseline')} {o}" for i, (n, o) in enumerate(said)]
        title = f"kernelprof: {', '.join(parts) or 'no baseline recorded'}"
        if counts.get(RENAMED):
            title += f"; {_plural(counts[RENAMED], 'file')} renamed to the new naming"
        return [title, *changed]

    def _improved_section(self) -> list[str]:
        if not self.improved:
            return []
        lines = [f"kernelprof: {_plural(len(self.improved), 'baseline metric')} improved"]
        for value in sorted(self.improved):
            nodeid, check, metric, stored, current = value.split("|")
            test = name_in_module(nodeid) + ("" if check == "default" else f" ({check})")
            lines.append(
                f"improved: {test} {metric} {int(stored):,} -> {int(current):,}; "
                f"lock it in with --kernelprof-update '{nodeid}'"
            )
        return lines

    def _legacy_section(self) -> list[str]:
        if not self.legacy:
            return []
        lines = [f"kernelprof: {_plural(len(self.legacy), 'baseline file')} read under the old naming"]
        for old, new in sorted(self.legacy.items()):
            if len(new) == 1:
                lines.append(f"mv '{old}' '{next(iter(new))}'")
            else:
                lines.append(f"{old} is shared by {len(new)} tests, so it holds one of their signatures: record each")
                lines.extend(f"  into {path}" for path in sorted(new))
        lines.append("or run pytest --kernelprof-update, which moves each file as it records it")
        return lines


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _entries(count: int) -> str:
    return f"{count} baseline entr{'y' if count == 1 else 'ies'}"


def unused_entries(used: Iterable[str], ran: Iterable[str], rootpath: Path, *, look_for_orphans: bool) -> list[Unused]:
    """Stored entries no test checked in a run.

    ``used`` holds ``"path|arch|name"`` of each check made, ``ran`` the node ids of every test
    that reported. An entry counts as unused when its file was checked in the run, for its
    architecture, under another name; a whole file when its module ran but no test of its
    name did (only asked for when the run was not narrowed by -k, -m or node ids).
    """
    checked: dict[str, set[tuple[str, str]]] = {}
    for item in used:
        path, arch, name = item.split("|", 2)
        checked.setdefault(path, set()).add((arch, name))
    found: list[Unused] = []
    for path, seen in sorted(checked.items()):
        archs = {arch for arch, _ in seen}
        try:
            stored = entries(read_baseline(Path(path)))
        except BaselineError:
            continue
        found.extend(Unused(path, arch, name) for arch, name in stored if arch in archs and (arch, name) not in seen)
    if look_for_orphans:
        found.extend(_orphan_files(ran, rootpath, set(checked)))
    return found


def _orphan_files(ran: Iterable[str], rootpath: Path, read: set[str]) -> list[Unused]:
    expected: dict[Path, set[str]] = {}
    old_names: dict[Path, dict[str, list[str]]] = {}  # folder -> old name -> the new names it stands for
    for nodeid in ran:
        if "::" in nodeid:
            new, old = baseline_paths(rootpath / nodeid.split("::", 1)[0], nodeid)
            expected.setdefault(new.parent, set()).add(new.name)
            old_names.setdefault(new.parent, {}).setdefault(old.name, []).append(new.name)
    found: list[Unused] = []
    for folder, names in sorted(expected.items()):
        if not folder.is_dir():
            continue
        for file in sorted(folder.glob("*.json")):
            if file.name in names or str(file) in read:
                continue
            news = old_names[folder].get(file.name)
            if news is None:
                found.append(Unused(str(file), note="no test of that name ran"))
            elif all((folder / new).exists() for new in news):
                found.append(Unused(str(file), note=f"the old name of {', '.join(sorted(set(news)))}"))
    return found


def prune_entries(unused: Sequence[Unused]) -> tuple[list[Unused], dict[str, str]]:
    """Delete unused entries from their files (a file left without entries, and a whole
    unused file, is removed): the entries deleted, and per path that could not be changed why."""
    by_path: dict[str, list[Unused]] = {}
    for item in unused:
        by_path.setdefault(item.path, []).append(item)
    deleted: list[Unused] = []
    errors: dict[str, str] = {}
    for path, items in sorted(by_path.items()):
        target = Path(path)
        try:
            if any(item.arch is None for item in items):
                target.unlink(missing_ok=True)
                deleted.extend(items)
                continue
            data = read_baseline(target)
            for item in items:
                named = data["archs"].get(item.arch, {})
                if named.pop(item.name, None) is not None:
                    deleted.append(item)
                if not named:
                    data["archs"].pop(item.arch, None)
            if data["archs"]:
                write_baseline(target, data)
            else:
                target.unlink()
        except (BaselineError, OSError) as exc:
            errors[path] = f"not deleted: {exc}"
            deleted = [d for d in deleted if d.path != path]
    return deleted, errors
