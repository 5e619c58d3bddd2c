"""What a run's baselines add up to, told at its end (``BaselineSession``): updates, improvements
to lock in, files read under their old names, and stored entries or files no test used,
which ``--kernelprof-prune`` removes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...errors import BaselineError
from ...tables import clip, printable
from .check import shell_word, update_command
from .files import (
    UNCHANGED,
    UPDATED,
    WRITTEN,
    baseline_paths,
    entries,
    locked,
    read_baseline,
    write_baseline,
)
from .notes import BaselineNote, Checked, Improved, ReadUnderOldName, Recorded, Renamed
from .signature import BASELINE_METRICS


@dataclass(frozen=True)
class Unused:
    """A stored entry no test checked (``arch``/``name``), or a whole file (``arch`` None)."""

    path: str
    arch: str | None = None
    name: str | None = None
    note: str = ""

    def __str__(self) -> str:
        return self.line()

    def line(self, shown: Callable[[str], str] = str) -> str:
        """The entry on its line, its path as ``shown`` writes it (relative to the rootdir)."""
        if self.arch is None:
            return f"{shown(self.path)} ({self.note})"
        return f"{shown(self.path)}: {_entry(self.arch, self.name)}"


class BaselineSession:
    """What a test session saw of baselines, gathered from test reports, so that it works in
    the xdist controller too (where the items never are): which entries went unused, what
    ``--kernelprof-update`` wrote, which files were read under their old names."""

    def __init__(self, command_id: Callable[[str], str] = str) -> None:
        # A node id as the update command names it (the plugin's: relative to the folder pytest runs in).
        self._command_id = command_id
        self.used: set[Checked] = set()
        self.users: dict[str, set[str]] = {}  # path -> node ids that checked it
        self.ran: set[str] = set()  # node ids
        self.not_passed: set[str] = set()  # node ids with a failed or skipped phase
        self.updates: set[Recorded | Renamed] = set()
        self.legacy: dict[str, set[str]] = {}  # old path -> the new paths that read it
        self.improved: set[Improved] = set()
        # Node ids collected but not run: deselected (-k, -m, --deselect), or left out by a
        # conftest's or plugin's pytest_collection_modifyitems without a word. Such a test may
        # still exist, so nothing of its files is unused.
        self.not_run: set[str] = set()

    def add_not_run(self, nodeids: Iterable[str]) -> None:
        self.not_run.update(nodeids)

    def add_report(self, nodeid: str, notes: Iterable[BaselineNote], *, passed: bool = True) -> None:
        self.ran.add(nodeid)
        if not passed:
            self.not_passed.add(nodeid)
        for note in notes:
            if isinstance(note, Checked):
                self.used.add(note)
                self.users.setdefault(note.path, set()).add(nodeid)
            elif isinstance(note, Recorded | Renamed):
                self.updates.add(note)
            elif isinstance(note, ReadUnderOldName):
                self.legacy.setdefault(note.old, set()).add(note.new)
            else:
                self.improved.add(note)

    def unused(self, rootpath: Path, *, narrowed: bool) -> list[Unused]:
        return unused_entries(self.used, self.ran, rootpath, look_for_orphans=not narrowed, not_run=self.not_run)

    def summary(
        self,
        rootpath: Path,
        *,
        narrowed: bool,
        prune: bool = False,
        blocked: str = "",
        shown: Callable[[str], str] = str,
    ) -> list[list[str]]:
        """The terminal summary's sections, each a title and its lines.

        ``prune`` deletes the unused entries, except those of files that a failed or skipped
        test read (it may not have reached its other checks); ``blocked`` says why entries
        asked to be pruned are not (a narrowed or failing run). ``shown`` writes a baseline's
        path on the lines that tell what was written, updated, renamed, unused or deleted (the
        plugin's: relative to the rootdir where under it, as a failure names it); the ``mv``
        commands keep their paths whole, to paste wherever the shell is."""
        sections = [s for s in (self._update_section(shown), self._legacy_section(), self._improved_section()) if s]
        unused = self.unused(rootpath, narrowed=narrowed)
        kept: list[str] = []
        if prune and not blocked:
            unfinished = [u for u in unused if self.users.get(u.path, set()) & self.not_passed]
            deleted, errors = prune_entries([u for u in unused if u not in unfinished])
            if deleted:
                sections.append([f"kernelprof: deleted {_entries(len(deleted))}", *(u.line(shown) for u in deleted)])
            unused = unfinished + [u for u in unused if u.path in errors]
            kept = [*errors.values(), *(["kept: their tests failed or skipped"] if unfinished else [])]
        elif prune:
            kept = [f"not deleted: {blocked}"]
        if unused:
            tail = kept or [
                "delete them with --kernelprof-prune on a passing run not narrowed to node ids, or by hand once "
                "the tests they belonged to are gone"
            ]
            title = f"kernelprof: {len(unused)} unused baseline entr{'y' if len(unused) == 1 else 'ies'}"
            sections.append([title, *(u.line(shown) for u in unused), *tail])
        if prune and not blocked:
            sections.extend(self._not_run_section(rootpath))
        return sections

    def _not_run_section(self, rootpath: Path) -> list[list[str]]:
        """What prune kept for the tests that were collected but did not run (those with a file)."""
        kept = [n for n in self.not_run if any(p.exists() for p in _test_paths(rootpath, n))]
        if not kept:
            return []
        # A heading on pytest's separator line: short enough to keep its dashes within 80 columns.
        whose = f"{len(kept)} test's" if len(kept) == 1 else f"{len(kept):,} tests'"
        return [
            [
                f"kernelprof: {whose} baselines kept (collected, not run)",
                "deselected (-k, -m, --deselect) or left out by a conftest or plugin: --kernelprof-prune "
                "deletes nothing of theirs",
            ]
        ]

    def _update_section(self, shown: Callable[[str], str]) -> list[str]:
        if not self.updates:
            return []
        recorded = [n.outcome for n in self.updates if isinstance(n, Recorded)]
        renamed = len(self.updates) - len(recorded)
        said = [(recorded.count(o), o) for o in (WRITTEN, UPDATED, UNCHANGED) if o in recorded]
        parts = [f"{n} {o}" if i else f"{_plural(n, 'baseline')} {o}" for i, (n, o) in enumerate(said)]
        title = f"kernelprof: {', '.join(parts) or 'no baseline recorded'}"
        if renamed:
            title += f"; {_plural(renamed, 'file')} renamed to the new naming"
        changed = []
        for note in sorted(self.updates, key=_update_order):
            if isinstance(note, Renamed):
                changed.append(f"renamed {shown(note.old)} -> {shown(note.new)}")
            elif note.outcome == WRITTEN:
                changed.append(f"{note.outcome} {shown(note.path)}: {_entry(note.arch, note.name)} (new entry)")
                changed.extend(f"  {printable(clip(line))}" for line in note.change)
            elif note.outcome == UPDATED:
                # What the new entry accepts, under its line: the run's log keeps what was let in.
                changed.append(f"{note.outcome} {shown(note.path)}: {_entry(note.arch, note.name)}")
                changed.extend(f"  {printable(clip(line))}" for line in note.change)
        return [title, *changed]

    def _improved_section(self) -> list[str]:
        """A line per value that went down, as ``--kernelprof-update``'s listing writes it
        (``better: syncs: 2 -> 1``) and then its test, by node id (a function's name alone is
        ambiguous across modules); then the command that records that test, on a line of its
        own, as each line's own command repeated the id it had just named. A command per test,
        not one for all: the job summary cuts a long line. The title counts the metrics and the
        signature's memory-op counts (``memcpys``) apart, as docs/baselines.md names them."""
        if not self.improved:
            return []
        by_test: dict[str, list[str]] = {}
        for note in sorted(self.improved, key=_fields):
            test = note.nodeid + ("" if note.check == "default" else f" ({note.check})")
            line = f"better: {note.metric}: {note.stored:,} -> {note.current:,} in {printable(clip(test))}"
            by_test.setdefault(note.nodeid, []).append(line)
        metrics = sum(note.metric in BASELINE_METRICS for note in self.improved)
        counted = [_plural(metrics, "baseline metric")] if metrics else []
        if len(self.improved) > metrics:
            counted.append(_plural(len(self.improved) - metrics, "memory-op count"))
        lines = [f"kernelprof: {' and '.join(counted)} better"]
        for nodeid, better in by_test.items():
            lines.extend([*better, f"lock it in with {update_command(self._command_id(nodeid))}"])
        return lines

    def _legacy_section(self) -> list[str]:
        if not self.legacy:
            return []
        lines = [f"kernelprof: {_plural(len(self.legacy), 'baseline file')} read under the old naming"]
        for old, new in sorted(self.legacy.items()):
            if len(new) == 1:
                lines.append(f"mv {shell_word(old)} {shell_word(next(iter(new)))}")
            else:
                lines.append(f"{old} is shared by {len(new)} tests, so it holds one of their signatures: record each")
                lines.extend(f"  into {path}" for path in sorted(new))
        lines.append("or run pytest --kernelprof-update, which moves each file as it records it")
        return lines


def _entry(arch: str | None, name: str | None) -> str:
    """An entry as one line shows it: a check's name (a sweep's bucket) may be any length."""
    return printable(clip(f"{arch}/{name}"))


def _update_order(note: Recorded | Renamed) -> tuple[str, ...]:
    """By what was done (renamed, then updated, then written), then the path."""
    if isinstance(note, Renamed):
        return ("renamed", note.old, note.new)
    return (note.outcome, note.path, note.arch, note.name)


def _fields(note: BaselineNote) -> tuple[object, ...]:
    """A note's fields in order: notes of one kind sort as their joined text did."""
    return tuple(getattr(note, f) for f in note.__dataclass_fields__)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _entries(count: int) -> str:
    return f"{count} baseline entr{'y' if count == 1 else 'ies'}"


def _test_paths(rootpath: Path, nodeid: str) -> tuple[Path, ...]:
    """The baseline files of the test ``nodeid`` (its file, and its name under the old naming)."""
    return baseline_paths(rootpath / nodeid.split("::", 1)[0], nodeid) if "::" in nodeid else ()


def unused_entries(
    used: Iterable[Checked],
    ran: Iterable[str],
    rootpath: Path,
    *,
    look_for_orphans: bool,
    not_run: Iterable[str] = (),
) -> list[Unused]:
    """Stored entries no test checked in a run.

    ``used`` holds each check made, ``ran`` the node ids of every test that reported,
    ``not_run`` those collected that did not run (deselected, or left out by a conftest). An
    entry counts as unused when its file was checked in the run, for its architecture, under
    another name; a whole file when its module was collected but no test of its name was
    (only asked for when the run was not narrowed to node ids or --lf). Nothing of a file that
    a test of ``not_run`` may own is unused: that test may check it when it runs.
    """
    not_run = set(not_run)
    theirs = {str(path) for nodeid in not_run for path in _test_paths(rootpath, nodeid)}
    checked: dict[str, set[tuple[str, str]]] = {}
    for item in used:
        checked.setdefault(item.path, set()).add((item.arch, item.name))
    found: list[Unused] = []
    for path, seen in sorted(checked.items()):
        archs = {arch for arch, _ in seen}
        try:
            stored = entries(read_baseline(Path(path)))
        except BaselineError:
            continue
        found.extend(Unused(path, arch, name) for arch, name in stored if arch in archs and (arch, name) not in seen)
    if look_for_orphans:
        found.extend(_orphan_files({*ran, *not_run}, rootpath, set(checked)))
    return [item for item in found if item.path not in theirs]


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
        # A write's temporary file (paths.atomic_path) that a killed run left: a write in
        # progress holds the folder's lock, which prune_entries takes before it deletes one.
        found.extend(Unused(str(file), note=STALE_WRITE) for file in sorted(folder.glob(".*.json.*.tmp")))
    return found


STALE_WRITE = "a baseline write that a killed run left unfinished"


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
            with locked(target):  # another process recording into the folder goes first, or after
                _prune(target, items, deleted)
        except (BaselineError, OSError) as exc:
            errors[path] = f"not deleted: {exc}"
            deleted = [d for d in deleted if d.path != path]
    return deleted, errors


def _prune(target: Path, items: Sequence[Unused], deleted: list[Unused]) -> None:
    if any(item.arch is None for item in items):
        target.unlink(missing_ok=True)
        deleted.extend(items)
        return
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
