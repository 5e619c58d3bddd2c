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

Files are JSON with sorted keys, two-space indent and a trailing newline, written to a
temporary file and renamed, so a reader never sees half a file and review diffs stay small.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .compare import count_changes, diff_kernels, render_diff, shape_key
from .errors import BaselineError
from .model import Kernel, KernelProfile
from .names import KernelName
from .paths import atomic_path, baseline_file_name

NAME_MODES = ("stable", "exact", "loose")
STABLE_NAME_FAMILIES = frozenset(("inductor", "unknown"))
FORMAT_VERSION = 1


# The kernel fields a baseline file stores. A fixed list, not every KernelName field: a
# field added to the decoder must not change every stored baseline.
STORED_FIELDS = ("name", "kind", "family", "layout", "fused_ops", "op")


@dataclass(frozen=True, kw_only=True)
class BaselineKernel(KernelName):
    """One kernel of a stored signature: a decoded name (the stored fields of it) and its op."""

    op: str | None = None

    @classmethod
    def of(cls, kernel: Kernel) -> BaselineKernel:
        return cls(**{f: getattr(kernel, f) for f in STORED_FIELDS})

    def to_json(self) -> dict[str, Any]:
        data = {f: getattr(self, f) for f in STORED_FIELDS}
        data["fused_ops"] = list(self.fused_ops)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BaselineKernel:
        return cls(
            name=str(data["name"]),
            kind=str(data["kind"]),
            family=str(data["family"]),
            layout=data.get("layout"),
            fused_ops=tuple(data.get("fused_ops") or ()),
            op=data.get("op"),
        )


@dataclass(frozen=True)
class Signature:
    """What should stay stable about one call of a profile."""

    kernels: tuple[BaselineKernel, ...]
    memcpy: int
    memset: int

    @classmethod
    def of(cls, prof: KernelProfile) -> Signature:
        kernels = tuple(BaselineKernel.of(k) for k in prof.kernels)
        memory = prof.memory_ops
        return cls(kernels, sum(m.kind == "memcpy" for m in memory), sum(m.kind == "memset" for m in memory))

    def to_json(self, prof: KernelProfile) -> dict[str, Any]:
        return {
            "device": prof.device,
            "kernels": [k.to_json() for k in self.kernels],
            "memcpy": self.memcpy,
            "memset": self.memset,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Signature:
        kernels = tuple(BaselineKernel.from_json(k) for k in data["kernels"])
        return cls(kernels, int(data.get("memcpy", 0)), int(data.get("memset", 0)))


def comparison_key(mode: str) -> Callable[[BaselineKernel], Hashable]:
    def key(kernel: BaselineKernel) -> Hashable:
        shape = (*shape_key(kernel), kernel.op)
        if mode == "exact" or (mode == "stable" and kernel.family in STABLE_NAME_FAMILIES):
            return (*shape, kernel.name)
        return shape

    return key


def compare(stored: Signature, current: Signature, mode: str) -> list[str] | None:
    """None when ``current`` matches ``stored`` under ``mode``; else the diff lines."""
    diff = diff_kernels(stored.kernels, current.kernels, by=comparison_key(mode))
    memory_counts = {"exact": ("memcpy", "memset"), "stable": ("memcpy",), "loose": ()}[mode]
    memory_changed = [
        f"{kind}s per call: {getattr(stored, kind)} -> {getattr(current, kind)}"
        for kind in memory_counts
        if getattr(stored, kind) != getattr(current, kind)
    ]
    if diff.same and not memory_changed:
        return None
    lines = [
        f"kernels per call: {len(stored.kernels)} -> {len(current.kernels)}",
        *(f"count change: {c}" for c in count_changes(stored.kernels, current.kernels)),
        *memory_changed,
        "--- baseline",
        "+++ this run",
        *render_diff(diff, "baseline", "this run"),
    ]
    return lines


def read_baseline(path: Path) -> dict[str, Any]:
    """The parsed file ({} when absent); a BaselineError when it exists but is not a baseline."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read the baseline ({exc.strerror or exc})") from None
    fix = "fix it from version control, or delete it and run with --kernelprof-update to record it again"
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BaselineError(f"{path}: not valid JSON ({exc}); {fix}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION or not isinstance(data.get("archs"), dict):
        raise BaselineError(f"{path}: not a pytest-kernelprof baseline (format {FORMAT_VERSION}); {fix}")
    for arch, entries in data["archs"].items():
        if not isinstance(entries, dict):
            raise BaselineError(f"{path}: entry {arch!r} is not an object; {fix}")
        for name, entry in entries.items():
            try:
                Signature.from_json(entry)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise BaselineError(f"{path}: entry {arch}/{name} is malformed ({exc!r}); {fix}") from None
    return data


def write_baseline(path: Path, data: Mapping[str, Any]) -> None:
    """Write atomically: a temporary file in the same folder, then a rename."""
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)


def record(path: Path, arch: str, name: str, prof: KernelProfile) -> None:
    """Write or replace the entry ``arch/name``, keeping every other entry of the file."""
    data = read_baseline(path) or {"format": FORMAT_VERSION, "archs": {}}
    data["archs"].setdefault(arch, {})[name] = Signature.of(prof).to_json(prof)
    write_baseline(path, data)


def entries(data: Mapping[str, Any]) -> Sequence[tuple[str, str]]:
    """Every (arch, name) entry of a parsed baseline file."""
    return [(arch, name) for arch, named in data.get("archs", {}).items() for name in named]


class KernelBaseline:
    """``kernel_baseline.check(prof)``, or ``assert prof == kernel_baseline``.

    Compares a profile's kernel signature with the one stored for this test and the
    profile's GPU architecture in ``__kernelprof__/<module>/<test>.json`` beside the test
    module. With ``--kernelprof-update`` it records the signature instead.
    """

    def __init__(self, path: Path, nodeid: str, *, update: bool, names: str, used: list[str]) -> None:
        self.path = path
        self._nodeid = nodeid
        self._update = update
        self._names = names
        self._used = used
        self._last_failure: list[str] = []

    def check(self, prof: KernelProfile, name: str = "default") -> None:
        """Pass, record (under --kernelprof-update), or fail with a diff and the update command."""
        failure = self._compare(prof, name)
        if failure:
            raise AssertionError("\n".join(failure))

    def _compare(self, prof: KernelProfile, name: str) -> list[str]:
        if not isinstance(prof, KernelProfile):
            raise TypeError(f"kernel_baseline.check() takes a KernelProfile, got {type(prof).__name__}")
        prof.require_device_activity()
        arch = prof.arch or "unknown_arch"
        self._used.append(f"{self.path}|{arch}|{name}")
        if self._update:
            record(self.path, arch, name, prof)
            return []
        stored = read_baseline(self.path).get("archs", {}).get(arch, {}).get(name)
        update = f"pytest --kernelprof-update '{self._nodeid}'"
        if stored is None:
            return [
                f"no kernel baseline {arch}/{name} in {self.path}",
                f"record it with: {update}",
                prof.kernels.table(),
            ]
        lines = compare(Signature.from_json(stored), Signature.of(prof), self._names)
        if lines is None:
            return []
        return [
            f"kernel signature differs from the baseline {arch}/{name} in {self.path} (names compared: {self._names})",
            *lines,
            f"if the change is intended: {update}",
        ]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KernelProfile):
            return NotImplemented
        self._last_failure = self._compare(other, "default")
        return not self._last_failure

    __hash__ = None  # type: ignore[assignment]

    def explain(self) -> list[str]:
        """Why the last ``==`` failed (used by the assertion report)."""
        return self._last_failure

    def __repr__(self) -> str:
        return f"<kernel_baseline {self.path}>"


# The user property that carries each check a test made ("path|arch|name") from the test's
# report to the session, through xdist's controller too.
BASELINE_PROPERTY = "kernelprof_baseline"


class BaselineSession:
    """What a test session saw of baselines, gathered from test reports, so that it works in
    the xdist controller too (where the items never are); says which entries went unused."""

    def __init__(self) -> None:
        self.used: set[str] = set()  # "path|arch|name"
        self.ran: set[str] = set()  # node ids

    def add_report(self, nodeid: str, user_properties: Iterable[tuple[str, object]]) -> None:
        self.ran.add(nodeid)
        self.used.update(str(value) for key, value in user_properties if key == BASELINE_PROPERTY)

    def summary(self, rootpath: Path, *, narrowed: bool) -> list[str]:
        """The terminal summary's lines, title first; none when every entry was used."""
        unused = unused_entries(self.used, self.ran, rootpath, look_for_orphans=not narrowed)
        if not unused:
            return []
        return [
            f"kernelprof: {len(unused)} unused baseline entr{'y' if len(unused) == 1 else 'ies'}",
            *unused,
            "delete them, or the files, once the tests they belonged to are gone",
        ]


def unused_entries(used: Iterable[str], ran: Iterable[str], rootpath: Path, *, look_for_orphans: bool) -> list[str]:
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
    lines: list[str] = []
    for path, seen in sorted(checked.items()):
        archs = {arch for arch, _ in seen}
        try:
            stored = entries(read_baseline(Path(path)))
        except BaselineError:
            continue
        lines.extend(f"{path}: {arch}/{name}" for arch, name in stored if arch in archs and (arch, name) not in seen)
    if look_for_orphans:
        lines.extend(_orphan_files(ran, rootpath))
    return lines


def _orphan_files(ran: Iterable[str], rootpath: Path) -> list[str]:
    expected: dict[Path, set[str]] = {}
    for nodeid in ran:
        module, _, rest = nodeid.partition("::")
        if rest:
            module_path = rootpath / module
            folder = module_path.parent / "__kernelprof__" / module_path.stem
            expected.setdefault(folder, set()).add(baseline_file_name(rest.rsplit("::", 1)[-1]))
    lines: list[str] = []
    for folder, names in sorted(expected.items()):
        if folder.is_dir():
            lines.extend(
                f"{f} (no test of that name ran)" for f in sorted(folder.glob("*.json")) if f.name not in names
            )
    return lines
