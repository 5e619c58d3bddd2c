"""``KernelBaseline``, the ``kernel_baseline`` fixture's value: a test's check of a profile
against its stored entry, and what the test's report carries of it (notes.py's typed notes).
"""

from __future__ import annotations

from pathlib import Path

from ...errors import BaselineMismatchError
from ...model import KernelProfile
from ...model.explain import Explanation
from ...model.unknowns import warn_undecided
from ...options import DEFAULT_MEMORY_TOLERANCE
from ...tables import plural
from .files import read_baseline, record
from .notes import BaselineNote, Checked, Improved, ReadUnderOldName, Recorded, Renamed
from .signature import Signature, compare, compare_metrics


class KernelBaseline:
    """``kernel_baseline.check(prof)``, or ``assert prof == kernel_baseline``.

    Compares a profile's kernel signature with the one stored for this test and the
    profile's GPU architecture in ``__kernelprof__/<module>/<test>.json`` beside the test
    module. With ``--kernelprof-update`` it records the signature instead. ``legacy_path``
    is the file's name under pytest-kernelprof 0.1's naming: read where the file is missing,
    moved to ``path`` by an update. ``notes`` collects what it did (notes.py), for the
    test's report.
    """

    def __init__(
        self,
        path: Path,
        nodeid: str,
        *,
        update: bool,
        names: str,
        notes: list[BaselineNote],
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
            raise BaselineMismatchError("\n".join([*failure.head[1:], *failure.body]))

    def _note(self, note: BaselineNote) -> None:
        if note not in self._notes:
            self._notes.append(note)

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
            self._note(Checked(str(self.path), arch, name))
            self._note(Recorded(outcome, str(self.path), arch, name))
            if moving:
                self._note(Renamed(str(self.legacy_path), str(self.path)))
            return None
        path = self.path
        if self._legacy_only():
            assert self.legacy_path is not None
            path = self.legacy_path
            self._note(ReadUnderOldName(str(path), str(self.path)))
        self._note(Checked(str(path), arch, name))
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
                self._note(Improved(self._nodeid, name, change.name, change.stored, change.current))
            warn_undecided(f"kernel_baseline {arch}/{name} (kinds compared)", unplaced)
            return None
        head, body = [summary], []
        if unplaced:
            head.append(f"({plural(len(unplaced), 'kernel')} of unknown kind in this run: their kinds say nothing)")
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
