"""``KernelBaseline``, the ``kernel_baseline`` fixture's value: a test's check of a profile
against its stored entry, and what the test's report carries of it (notes.py's typed notes).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

from ...errors import BaselineError, BaselineMismatchError, BaselineMissingError, KernelSequenceMismatchError
from ...model import KernelProfile
from ...model.explain import Explanation
from ...model.unknowns import warn_undecided
from ...options import DEFAULT_MEMORY_TOLERANCE
from ...tables import plural, printable
from ..diff import unplaced_lines
from ..sweep import ProfileSweep, SweepCase
from .buckets import BUCKET_KEY, BucketRanges, compare_bucket
from .files import UNCHANGED, UPDATED, accepted_lines, read_baseline, record, record_entry, unguarded_lines
from .notes import BaselineNote, Checked, Improved, ReadUnderOldName, Recorded, Renamed
from .signature import Signature, differences


class KernelBaseline:
    """The ``kernel_baseline`` fixture's value: ``kernel_baseline.check(prof)``, or
    ``assert prof == kernel_baseline``.

    Compares a profile's kernel signature (each kernel's kind, family, layout, fused ops,
    launching op, dtype and, as ``kernelprof_baseline_names`` says, name; the memory operations; the
    metrics, each better lower) with the one stored for this test and the profile's GPU
    architecture in ``__kernelprof__/<module>/<test>.json`` beside the test module. With
    ``--kernelprof-update`` it records the signature instead, and passes.

    ``assert prof == kernel_baseline`` checks the entry ``default``, as ``check(prof)`` does; a
    failed comparison's assertion report shows the diff. ``check`` raises instead:
    ``BaselineMismatchError`` with the diff and the command that updates the entry, or
    ``BaselineMissingError`` where the entry was never recorded.

    :vartype path: Path
    :ivar path: The baseline file of this test.
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
        command_id: str | None = None,
        shown: Callable[[Path], str] = str,
    ) -> None:
        """Made by the ``kernel_baseline`` fixture. ``legacy_path`` is the file's name under
        pytest-kernelprof 0.1's naming: read where the file is missing, moved to ``path`` by an
        update. ``notes`` collects what it did (notes.py), for the test's report. ``shown`` names a
        baseline file in messages and the repr (the fixture's: relative to the rootdir where the file
        is under it, as the job summary names it)."""
        self.path = path
        self.legacy_path = legacy_path
        self._nodeid = nodeid
        # The test as a command typed where pytest runs names it (a node id is the rootdir's).
        self._command_id = command_id or nodeid
        # How a message names a baseline file: the fixture's, relative to the rootdir under it.
        self._shown = shown
        self._update = update
        self._names = names
        self._tolerance = memory_tolerance
        self._notes = notes
        self._last_failure: Explanation | None = None
        self._checked: set[str] = set()  # the entries check() and check_sweep() wrote or read in this test

    def check(self, prof: KernelProfile, name: str = "default") -> None:
        """Pass, record (under --kernelprof-update), or fail with a diff and the update command.
        ``name``, a str, names the entry: several profiles checked in one test each need one."""
        __tracebackhide__ = True
        _check_name("check", name)
        if name.endswith("]") and "[" in name:
            # check_sweep's entries are named so: one of them and this check would share an entry,
            # each overwriting the other under --kernelprof-update.
            raise ValueError(
                f"kernel_baseline.check() name={name!r} has the form of a check_sweep bucket's entry "
                "(name[bucket]), which is reserved for check_sweep: name the check without a bracketed "
                "end (name='step-1')"
            )
        # One entry, one profile: a second profile checked under the same name would overwrite
        # the first under --kernelprof-update, and the next run would fail whatever it ran.
        if name in self._checked:
            raise ValueError(
                f"kernel_baseline.check() of a second profile under name={name!r} in one test: each entry holds "
                "one profile, so give each its own name= (name=f'step{i}')"
            )
        self._checked.add(name)
        failed = self._compare(prof, name)
        if failed is not None:
            error_type, failure = failed
            error = error_type("\n".join([*failure.head[1:], *failure.body]))
            error.kernels = failure.table_of
            raise error

    def _note(self, note: BaselineNote) -> None:
        if note not in self._notes:
            self._notes.append(note)

    def _legacy_only(self) -> bool:
        """Whether only the file under the old name exists."""
        legacy = self.legacy_path
        return legacy is not None and legacy != self.path and not self.path.exists() and legacy.exists()

    def _compare(self, prof: KernelProfile, name: str) -> tuple[type[BaselineMismatchError], Explanation] | None:
        """None where ``prof`` matches (or was recorded); else the error for what failed (an
        entry missing or one that differs: its type, not its text, tells them apart for CI) and
        what failed, as a short head (after the comparison line) and the diff or table as the body."""
        __tracebackhide__ = True
        if not isinstance(prof, KernelProfile):
            raise TypeError(f"kernel_baseline.check() takes a KernelProfile, got {type(prof).__name__}")
        prof.require_device_activity()
        _one_sequence(prof, "check", "this profile")
        arch = prof.arch or "unknown_arch"
        if self._update:
            moving = self._legacy_only()
            before = read_baseline(self.legacy_path if moving and self.legacy_path else self.path)
            outcome = record(self.path, arch, name, prof, legacy=self.legacy_path)
            stored = before.get("archs", {}).get(arch, {}).get(name)
            accepted = accepted_lines(stored, prof, self._names, self._tolerance) if outcome == UPDATED else ()
            if outcome != UNCHANGED:
                accepted += unguarded_lines(prof)
            self._note(Checked(str(self.path), arch, name))
            self._note(Recorded(outcome, str(self.path), arch, name, accepted))
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
        update = update_command(self._command_id)
        summary = "KernelProfile == kernel_baseline failed:"
        entry = printable(f"{arch}/{name}")  # a test's parameter, say: on its line in the output
        if stored is None:
            # The table's times named as every failure's kernel table names them (model/explain.py).
            times = f" (times: {prof.kernels.times})" if prof.kernels.times else ""
            head = [
                summary,
                f"no kernel baseline {entry} in {self._shown(path)}",
                f"record it with: {update}",
                f"the kernels it would record{times}:",
            ]
            return BaselineMissingError, Explanation(head, prof.kernels.table().splitlines(), prof.kernels)
        if BUCKET_KEY in stored:
            raise _other_kind(
                self._shown(path), entry, "a check_sweep bucket's ranges, not one profile's kernels", update
            )
        recorded, current = Signature.from_json(stored), Signature.of(prof)
        lines, worse, better = differences(recorded, current, self._names, self._tolerance)
        # Kernels no evidence placed are "other" on both sides whatever they are: the kinds
        # compared for them cannot show a change, so the comparison says so.
        unplaced = [k for k in prof.kernels if k.unplaced]
        if lines is None and not worse:
            for change in better:
                self._note(Improved(self._nodeid, name, change.name, change.stored, change.current))
            warn_undecided(f"kernel_baseline {entry} (kinds compared)", unplaced)
            return None
        head, body = [summary], []
        # The worse metrics first: between the signature's count changes and its diff they split
        # the one from the other; in the head, unlike after the diff, a cut body never hides them.
        if worse:
            head.append(f"worse than the baseline {entry} in {self._shown(path)} (lower is better):")
            head.extend(f"  {change}" for change in worse)
        if lines is not None:
            at = lines.index("--- baseline")
            head.append(
                f"kernel signature differs from the baseline {entry} in {self._shown(path)} "
                f"(names compared: {self._names})"
            )
            head.extend(lines[:at])
            body.extend(lines[at:])
        # After the headline, in kernelprof diff's words (which teaches with --kernels, a test with the ini).
        head.extend(unplaced_lines(recorded.kernels, current.kernels, "the baseline", "this run", "kernelprof_kernels"))
        body.append(f"if the change is intended: {update}")
        return BaselineMismatchError, Explanation(head, body)

    def check_sweep(
        self, sweep: ProfileSweep, by: str | Callable[[SweepCase], object] | None = None, name: str = "sweep"
    ) -> None:
        """Compare a sweep with its stored baseline, one entry per bucket of its cases: ``by``
        names the bucket of a case (``lambda case: "M<64" if case["M"] < 64 else "M>=64"``; a
        string, the argument whose values are the buckets; None, one bucket), and each bucket's
        entry, ``name[bucket]``, holds ranges over its cases (kernel counts per kind, names, metrics). Fails naming the
        buckets that differ (a ``BaselineMissingError`` where no bucket differs and some have no
        entry yet); records them under --kernelprof-update."""
        __tracebackhide__ = True
        if not isinstance(sweep, ProfileSweep):
            raise TypeError(f"kernel_baseline.check_sweep() takes a ProfileSweep, got {type(sweep).__name__}")
        _check_name("check_sweep", name)
        buckets: dict[str, list[tuple[str, KernelProfile]]] = {}
        keys: dict[str, object] = {}  # each bucket's name, the key that by= gave it first
        for case in sweep:
            case.profile.require_device_activity()
            _one_sequence(case.profile, "check_sweep", f"the case {case.label}")
            bucket, key = _bucket(case, by)
            first = keys.setdefault(bucket, key)
            if type(first) is not type(key):
                # 1 and "1" print alike: one entry would hold the cases of two buckets.
                raise TypeError(
                    f"check_sweep(by=...): the bucket keys {first!r} ({type(first).__name__}) and {key!r} "
                    f"({type(key).__name__}) both name the entry {printable(f'{name}[{bucket}]')}: give keys of "
                    "one type (str(...) of each, or an f-string)"
                )
            buckets.setdefault(bucket, []).append((case.label, case.profile))
        entry_names = [f"{name}[{bucket}]" for bucket in buckets]
        if reused := [entry for entry in entry_names if entry in self._checked]:
            raise ValueError(
                f"kernel_baseline.check_sweep() of a second sweep into the entries {', '.join(map(repr, reused))} "
                "in one test: each entry holds one bucket of one sweep, so give each sweep its own name="
            )
        self._checked.update(entry_names)
        archs = {case.profile.arch or "unknown_arch" for case in sweep}
        if len(archs) > 1:
            raise ValueError(f"a sweep's cases ran on one GPU architecture, these on {', '.join(sorted(archs))}")
        arch = archs.pop()
        device = sweep[0].profile.device
        if self._update:
            moving = self._legacy_only()
            for bucket, cases in buckets.items():
                entry = {"device": device, BUCKET_KEY: BucketRanges.of(cases, self._names).to_json()}
                outcome = record_entry(self.path, arch, f"{name}[{bucket}]", entry, legacy=self.legacy_path)
                self._note(Checked(str(self.path), arch, f"{name}[{bucket}]"))
                self._note(Recorded(outcome, str(self.path), arch, f"{name}[{bucket}]"))
            if moving:
                self._note(Renamed(str(self.legacy_path), str(self.path)))
            return
        path = self.path
        if self._legacy_only():
            assert self.legacy_path is not None
            path = self.legacy_path
            self._note(ReadUnderOldName(str(path), str(self.path)))
        stored = read_baseline(path).get("archs", {}).get(arch, {})
        update = update_command(self._command_id)
        failed = []
        differs = False  # whether a bucket differs, else those failed only lack an entry
        for bucket, cases in buckets.items():
            entry_name = f"{name}[{bucket}]"
            self._note(Checked(str(path), arch, entry_name))
            entry = stored.get(entry_name)
            labels = "; ".join(label for label, _ in cases)
            shown = printable(f"{arch}/{entry_name}")
            if entry is None:
                failed.append(f"bucket {bucket!r}: no entry {shown} for its cases ({labels})")
                continue
            if BUCKET_KEY not in entry:
                raise _other_kind(
                    self._shown(path), shown, "one profile's kernels, not a check_sweep bucket's ranges", update
                )
            lines = compare_bucket(BucketRanges.from_json(entry[BUCKET_KEY]), cases, self._names, self._tolerance)
            if lines:
                differs = True
                failed.append(f"bucket {bucket!r} differs from {shown} (its cases: {labels}):")
                failed.extend(f"  {line}" for line in lines)
                # The kernels of the first case that differs: what the change looks like. A case's
                # lines come first, in the order of the cases, so the first line names it.
                label, prof = next((case for case in cases if lines[0].startswith(f"{case[0]}: ")), cases[0])
                failed.append(f"  the kernels of {label}:")
                failed.extend(f"    {line}" for line in prof.kernels.table().splitlines())
        if failed:
            differ = sum(line.startswith("bucket ") for line in failed)
            head = (
                f"kernel_baseline.check_sweep failed: {differ} of {plural(len(buckets), 'bucket')} differ "
                "from the baseline "
                f"{printable(name)}[...] in {self._shown(path)} (names compared: {self._names})"
            )
            error_type = BaselineMismatchError if differs else BaselineMissingError
            raise error_type("\n".join([head, *failed, f"if the change is intended: {update}"]))

    def __eq__(self, other: object) -> bool:
        __tracebackhide__ = True
        if not isinstance(other, KernelProfile):
            return NotImplemented
        failed = self._compare(other, "default")
        self._last_failure = None if failed is None else failed[1]
        return self._last_failure is None

    __hash__ = None  # type: ignore[assignment]

    def explanation(self) -> Explanation | None:
        """Why the last ``==`` failed (for the assertion report)."""
        return self._last_failure

    def __repr__(self) -> str:
        return f"<kernel_baseline {self._shown(self.path)}>"


# The bucket keys a by= function may give: those whose text is their value, the same in every
# run and process (a tuple's or an object's is its elements' reprs, or its address).
BUCKET_KEY_TYPES = (str, int, float)  # bool is an int


def _bucket(case: SweepCase, by: str | Callable[[SweepCase], object] | None) -> tuple[str, object]:
    """The bucket of ``case``: its name in the entry's, and the key it was made of."""
    __tracebackhide__ = True
    if by is None:
        return "all", "all"
    if isinstance(by, str):
        if by not in case.params:
            raise KeyError(f"check_sweep(by={by!r}): the case {case.label} has no argument {by!r}")
        value = case.params[by]
        return f"{by}={value!r}", value
    if not callable(by):
        raise TypeError(
            f"check_sweep(by=...) takes a function of a case or an argument's name, got {type(by).__name__}"
        )
    key = by(case)
    if not isinstance(key, BUCKET_KEY_TYPES):
        raise TypeError(
            f"check_sweep(by=...) gave the case {case.label} the bucket key {key!r}, a {type(key).__name__}: a bucket "
            "key is a str, an int, a float or a bool (its text names the entry); return an f-string for any other"
        )
    return str(key), key


def _other_kind(path: str, entry: str, holds: str, update: str) -> BaselineError:
    """The error for an entry written by the other method (check, check_sweep) than the one
    reading it: a hand edit, or a test rewritten from one to the other."""
    return BaselineError(
        f"{path}: entry {entry} holds {holds}: it was written by the other method; record this "
        f"test's entries again with: {update}"
    )


def _check_name(method: str, name: object) -> None:
    """A name that is not a str would be stored as a JSON key and read back as another value (1
    as "1") or not at all (a torch.dtype, often a parametrize value): refused at the call."""
    __tracebackhide__ = True
    if not isinstance(name, str):
        raise TypeError(
            f"kernel_baseline.{method}() takes name= as a str (the entry's name in the baseline file), "
            f"got {type(name).__name__} {name!r}: pass name=str(...) or an f-string"
        )


def _one_sequence(prof: KernelProfile, method: str, whose: str) -> None:
    """Refuse a profile whose calls launched different kernel sequences: a baseline stores one
    call's, and judging such a profile by its first call would pass whatever the others did."""
    __tracebackhide__ = True
    if prof.varied:
        counts = ", ".join(f"call {c.index}: {plural(len(c.kernels), 'kernel')}" for c in prof.calls)
        raise KernelSequenceMismatchError(
            f"kernel_baseline.{method}() compares one call's kernel sequence, and the {len(prof.calls)} calls of "
            f"{whose} launched different ones ({counts}; it was taken with allow_variation=True): profile "
            "without allow_variation (raise warmup= if the first calls still compile or autotune), or with calls=1"
        )


def shell_word(text: str) -> str:
    """``text`` as one word of a shell command that a user pastes: a test id or a path may hold
    quotes, spaces or ``$(...)``. Quoted even where a shell would take it bare, as it always was."""
    quoted = shlex.quote(text)
    return quoted if quoted.startswith("'") else f"'{text}'"


def update_command(nodeid: str) -> str:
    """The command that records the baselines of the test ``nodeid``."""
    return f"pytest --kernelprof-update {shell_word(nodeid)}"
