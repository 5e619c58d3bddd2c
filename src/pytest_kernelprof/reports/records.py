"""What a test's report carries from where the test ran (an xdist worker, or the one process) to
where the run's end is told (the controller): one frozen record per report, as JSON text.

xdist sends a report's attributes to the controller as plain values; the record travels as one
of them (``plugin/books.py`` sets and reads it), so it stays out of the JUnit XML and the
terminal. Every user's text (a test id, a check name, a kernel name, a path) is a field of its
own: nothing is joined into a string that must be split again, so any character a test id or a
check name can hold arrives as it left.

Light to import (the baseline notes' package, which loads the profile model, is imported only
to read a record that holds notes), so that a failed test that used nothing but the CI outputs
costs no model import.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..checks.baseline.notes import BaselineNote


@dataclass(frozen=True)
class Failure:
    """A test's failure that was about its profile: its category (``plugin/ci.py``), the first
    lines of its message, the test's own line where it failed, and the phase that raised it (a
    fixture's setup or teardown raises errors, as pytest calls them)."""

    category: str
    message: str
    more_lines: int  # lines of the message left out
    file: str
    line: int | None
    tables: str = ""  # the profiles' kernel tables, where the message carried none (summary only)
    when: str = "call"  # "setup", "call" or "teardown"


@dataclass(frozen=True)
class SyncSite:
    """The user's line where host syncs of a failed test's profiles came from."""

    file: str
    line: int
    function: str  # "" where the stack did not name it
    call: str
    op: str | None
    count: int
    fixes: tuple[str, ...] = ()  # its ``to fix:`` lines (``model.records.advice``)


@dataclass(frozen=True)
class Unplaced:
    """A kernel name no evidence placed, the op that launched it ("" where none), and how many
    kernels of that name the test's profiles ran."""

    name: str
    op: str
    count: int


@dataclass(frozen=True)
class ReportRecord:
    """What one report of a test carries to the controller (each part empty where it has none)."""

    baselines: tuple[BaselineNote, ...] = ()
    unplaced: tuple[Unplaced, ...] = ()
    failure: Failure | None = None
    syncs: tuple[SyncSite, ...] = ()
    device: str = ""  # an xdist worker's device line, sent once per worker
    worker: str = ""
    profiles: int = 0  # how many profiles the test took (in that report's phase)

    def __bool__(self) -> bool:
        return self != ReportRecord()

    def to_json(self) -> str:
        data = asdict(self)
        # asdict loses which note a dict was: the class name goes with it.
        data["baselines"] = [{"note": type(n).__name__, **asdict(n)} for n in self.baselines]
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ReportRecord:
        data: dict[str, Any] = json.loads(text)
        failure = data.get("failure")
        return cls(
            baselines=tuple(_note(n) for n in data.get("baselines", ())),
            unplaced=tuple(Unplaced(**u) for u in data.get("unplaced", ())),
            failure=None if failure is None else Failure(**failure),
            syncs=tuple(SyncSite(**{**s, "fixes": tuple(s.get("fixes", ()))}) for s in data.get("syncs", ())),
            device=data.get("device", ""),
            worker=data.get("worker", ""),
            profiles=int(data.get("profiles", 0)),
        )

    def merged(self, other: ReportRecord) -> ReportRecord:
        """This record and a later report's of the same test, as one."""
        return ReportRecord(
            baselines=_unique(self.baselines, other.baselines),
            unplaced=(*self.unplaced, *other.unplaced),
            failure=other.failure or self.failure,
            syncs=(*self.syncs, *other.syncs),
            device=other.device or self.device,
            worker=other.worker or self.worker,
            profiles=self.profiles + other.profiles,
        )


def _note(data: Mapping[str, Any]) -> BaselineNote:
    from ..checks.baseline.notes import NOTE_TYPES

    # JSON holds a tuple field (Recorded.change) as a list: a tuple again, so the note hashes.
    fields: dict[str, Any] = {key: tuple(value) if isinstance(value, list) else value for key, value in data.items()}
    return NOTE_TYPES[fields.pop("note")](**fields)


def _unique(*notes: Iterable[BaselineNote]) -> tuple[BaselineNote, ...]:
    return tuple(dict.fromkeys(note for group in notes for note in group))


def by_test(records: Iterable[tuple[str, ReportRecord]]) -> dict[str, ReportRecord]:
    """Each test's reports' records merged, in the order the tests first reported."""
    merged: dict[str, ReportRecord] = {}
    for nodeid, record in records:
        merged[nodeid] = merged[nodeid].merged(record) if nodeid in merged else record
    return merged
