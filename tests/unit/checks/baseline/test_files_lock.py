"""Two processes that record into one baseline file at once (two CI jobs on one checkout, a
second terminal): each entry survives, the writes take turns under the folder's lock."""

from __future__ import annotations

import contextlib
import errno
import multiprocessing
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.baseline import files as baseline_files
from pytest_kernelprof.checks.baseline import read_baseline, record
from pytest_kernelprof.errors import BaselineError
from tests.helpers import DATA

ROUNDS = 40
pytestmark = pytest.mark.usefixtures("warm_subprocesses")  # the spawned writers start warm


def _writer(path: str, rank: int, barrier: Any, between: Any) -> None:
    """Record one entry a round into ``path``, every round released with the other writer.
    ``between``: the lock taken away, and each write held until both writers have read the file
    (the window the lock closes, held open: a chance interleaving would make the loss a matter
    of luck, and the test flaky)."""
    if between is not None:
        baseline_files._lock = lambda path: lambda: None  # type: ignore[assignment]
        write = baseline_files.write_baseline

        def after_both_read(target: Path, data: Any) -> None:
            between.wait()
            write(target, data)

        baseline_files.write_baseline = after_both_read  # type: ignore[assignment]
    prof = load_trace(DATA / "h200_linear_eager.json.gz")
    for number in range(ROUNDS):
        barrier.wait()
        record(Path(path), "sm90", f"round{number}-writer{rank}", prof)


def _race(path: Path, unlocked: bool = False) -> set[str]:
    """The entries in ``path`` after two writers raced ROUNDS times."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    between = context.Barrier(2) if unlocked else None
    writers = [context.Process(target=_writer, args=(str(path), rank, barrier, between)) for rank in (0, 1)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=300)
        assert writer.exitcode == 0
    return set(read_baseline(path)["archs"]["sm90"])


def test_two_writers_released_at_once_keep_every_entry(tmp_path: Path) -> None:
    found = _race(tmp_path / "__kernelprof__" / "test_m" / "test_x.json")
    assert found == {f"round{n}-writer{rank}" for n in range(ROUNDS) for rank in (0, 1)}


def test_without_the_lock_entries_are_lost(tmp_path: Path) -> None:
    """The race above is a real one: without the lock, two writers that both read the file
    before either writes keep one entry of the two each round (CI once saw chance alone lose
    none in 40 rounds, which is why the interleaving is made, not hoped for)."""
    found = _race(tmp_path / "test_x.json", unlocked=True)
    assert len(found) == ROUNDS
    assert all(f"round{n}-writer0" in found or f"round{n}-writer1" in found for n in range(ROUNDS))


def test_a_baseline_that_cannot_be_written_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a read-only folder: the error names the baseline, not the temporary file it failed on."""
    path = tmp_path / "test_x.json"
    prof = load_trace(DATA / "h200_linear_eager.json.gz")
    record(path, "sm90", "default", prof)

    @contextlib.contextmanager
    def read_only(target: Any) -> Iterator[str]:
        raise PermissionError(13, "Permission denied", str(tmp_path / ".test_x.json.k2j3.tmp"))
        yield ""

    monkeypatch.setattr(baseline_files, "atomic_path", read_only)
    with pytest.raises(BaselineError) as raised:
        record(path, "sm90", "other", prof)
    message = str(raised.value)
    assert message.startswith(f"cannot write the baseline {path}: Permission denied (")
    assert ".tmp" not in message
    assert f"{tmp_path} and renamed: that folder must be writable" in message
    assert set(read_baseline(path)["archs"]["sm90"]) == {"default"}


@pytest.mark.skipif(sys.platform == "win32", reason="fcntl")
def test_a_file_system_without_locks_records_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fcntl

    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    path = tmp_path / "test_x.json"
    record(path, "sm90", "default", load_trace(DATA / "h200_linear_eager.json.gz"))
    assert set(read_baseline(path)["archs"]["sm90"]) == {"default"}


@pytest.mark.skipif(sys.platform == "win32", reason="fcntl")
def test_a_folder_that_cannot_be_locked_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder this process may not open (no read permission) or lock (an error other than a
    file system that keeps no locks): the error names the baseline; no descriptor is left open."""
    import fcntl

    path = tmp_path / "test_x.json"
    prof = load_trace(DATA / "h200_linear_eager.json.gz")
    real_open = baseline_files.os.open

    def unreadable(name: Any, flags: int, *args: Any) -> int:
        if Path(name) == tmp_path:
            raise PermissionError(errno.EACCES, "Permission denied", str(name))
        return real_open(name, flags, *args)

    monkeypatch.setattr(baseline_files.os, "open", unreadable)
    with pytest.raises(BaselineError, match=f"^cannot write the baseline {path}: Permission denied"):
        record(path, "sm90", "default", prof)
    monkeypatch.undo()
    opened: list[int] = []

    def failing(fd: int, operation: int) -> None:
        opened.append(fd)
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(fcntl, "flock", failing)
    with pytest.raises(BaselineError, match=f"^cannot write the baseline {path}: Input/output error"):
        record(path, "sm90", "default", prof)
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(opened[0])  # closed
    assert not path.exists()
