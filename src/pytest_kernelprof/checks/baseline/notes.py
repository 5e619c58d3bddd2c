"""What a test did with baselines, as typed notes: ``KernelBaseline`` writes them where the test
runs, the test's report carries them (``reports/records.py``, as JSON), and ``BaselineSession``
reads them at the run's end, in the xdist controller too.

Each field holds a user's text as it is (a test id, a check name, a path): nothing is joined
into a string that must be split again, so no character a user can type changes what is read.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Checked:
    """A check read the entry ``arch``/``name`` of the file ``path`` (under --kernelprof-update: wrote it)."""

    path: str
    arch: str
    name: str


@dataclass(frozen=True)
class Recorded:
    """--kernelprof-update recorded the entry: ``outcome`` is written, updated or unchanged;
    ``change``, where it updated one, what the new entry accepts (a failed check's headline lines);
    where it wrote or updated one, then what it cannot guard (kernels of unknown dtype)."""

    outcome: str
    path: str
    arch: str
    name: str
    change: tuple[str, ...] = ()


@dataclass(frozen=True)
class Renamed:
    """--kernelprof-update moved the file under its old name ``old`` to ``new``."""

    old: str
    new: str


@dataclass(frozen=True)
class ReadUnderOldName:
    """A check read ``old``, the file's name under pytest-kernelprof 0.1's naming, for ``new``."""

    old: str
    new: str


@dataclass(frozen=True)
class Improved:
    """A metric of the check ``check`` of test ``nodeid`` went down from ``stored`` to ``current``."""

    nodeid: str
    check: str
    metric: str
    stored: int
    current: int


BaselineNote = Checked | Recorded | Renamed | ReadUnderOldName | Improved

# The notes by the name a record stores them under (their class names).
NOTE_TYPES: dict[str, type[BaselineNote]] = {
    cls.__name__: cls for cls in (Checked, Recorded, Renamed, ReadUnderOldName, Improved)
}
