"""The staging folder of an export (``sweep.py``): a folder of its own inside the export folder,
removed however the export ends.

At the export's end, error or not; on SIGTERM (a CI job's timeout sends one, and a sweep's traces
are hundreds of MB), where the export runs in the main thread: the handler ends the export as an
exception would, the folder goes, and the signal is handed on to the handler it found (the
default ends the process, as SIGTERM would have; the kept traces' handler removes its folder
first). One that a process killed otherwise (SIGKILL, the OOM killer) left is removed by the next
export into the same folder: its name holds its process's id, and that process is gone.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

PREFIX = ".export."
_STALE = re.compile(re.escape(PREFIX) + r"(\d+)-[A-Za-z0-9_]{8}")  # mkdtemp's 8 characters


class _Terminated(BaseException):
    """SIGTERM, raised where the export was: it unwinds the export, which removes its folder."""


@contextlib.contextmanager
def staging_folder(root: Path) -> Iterator[Path]:
    """A new folder in ``root``, removed when the block ends, and on SIGTERM (see the module)."""
    remove_stale(root)
    staging = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=root))
    previous = _catch_sigterm()
    terminated = False
    try:
        yield staging
    except _Terminated:
        terminated = True
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(staging, ignore_errors=True)
    if terminated:
        signal.raise_signal(signal.SIGTERM)  # to the handler found: the default ends the process here
        raise InterruptedError(
            f"the export into {root} was ended by SIGTERM, which this program's handler let it live "
            "through: the folder holds what it held before, or a part of the new traces; export again"
        )


def _catch_sigterm() -> Callable[[int, FrameType | None], Any] | int | None:
    """Set the export's SIGTERM handler; the one it replaced, or None where it set none: off the
    main thread (signals go to it), and where SIGTERM is ignored or a handler not of Python's is set."""
    if not hasattr(signal, "SIGTERM") or threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.getsignal(signal.SIGTERM)
    if previous is None or previous is signal.SIG_IGN:
        return None
    signal.signal(signal.SIGTERM, _terminated)
    return previous


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


def remove_stale(root: Path) -> None:
    """Remove the staging folders in ``root`` of exports whose process is gone."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            found = _STALE.fullmatch(entry.name)
            if found is None or not entry.is_dir(follow_symlinks=False) or _alive(int(found.group(1))):
                continue
            shutil.rmtree(entry.path, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # another thread's export
    try:
        os.kill(pid, 0)  # no signal sent: whether the process exists
    except ProcessLookupError:
        return False
    except OSError:  # another user's, or a PID out of range: leave it
        return True
    return True
