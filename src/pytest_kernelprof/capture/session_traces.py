"""A finished session's Chrome trace, and when it can still be written.

torch writes a session's trace from Kineto's buffers, and on CUDA those belong to the profiler,
not to the session: the next session's start takes them, and a session's trace exported after
that holds none of its GPU activity (measured on an H100, torch 2.11.0+cu130: of three profiles
of one test, the traces exported at the test's end held 0, 0 and 1 kernels). So a session's trace
is written by torch only while the session is the newest of the process; one that must outlive
that is *kept*, exported as its session ends, and later exports copy it. Any other export raises
``TraceNotKeptError`` rather than write a trace without its kernels.

On the CPU a later session takes no CPU events, and a late export would be whole there; the rule
is the same, so that a test that exports too late fails in CPU CI as it would on the GPU runner
rather than pass there and write empty traces on the GPU.

Sessions are counted where this package starts them (``profiler.profiler_session``): a torch
profiler session that other code in the process starts is not seen.
"""

from __future__ import annotations

import atexit
import contextlib
import gzip
import os
import re
import shutil
import signal
import tempfile
import threading
import weakref
from typing import Any

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

from ..errors import TraceNotKeptError
from ..tables import plural

_started = 0  # the torch profiler sessions this package started in the process
_folder: str | None = None  # where kept traces go: made on the first keep, removed at exit


def session_started() -> None:
    """Count a session that starts now (call it before the start: even a start that fails may
    take Kineto's buffers)."""
    global _started
    _started += 1


def _kept_folder() -> str:
    """The process's folder of kept traces (``TMPDIR``'s ``kernelprof-kept-PID-XXXXXXXX``), made on
    the first keep and removed at exit, and on SIGTERM and SIGHUP where no handler of the user's is
    set: a CI job's timeout sends SIGTERM, a closed terminal or SSH session SIGHUP, and a big model's
    traces are hundreds of MB. A folder that a
    process killed otherwise (SIGKILL, the OOM killer) left is removed by the next process that
    keeps a trace: one whose process is gone and whose lock no process holds."""
    global _folder, _lock
    if _folder is None or not os.path.isdir(_folder):
        _remove_stale(tempfile.gettempdir())
        _folder = tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-")
        if _lock is not None:
            os.close(_lock)
        _lock = _hold(_folder)
        atexit.register(shutil.rmtree, _folder, ignore_errors=True)
        _remove_on_signals()
    return _folder


_PREFIX = "kernelprof-kept-"
_STALE = re.compile(re.escape(_PREFIX) + r"(\d+)-[A-Za-z0-9_]{8}")  # mkdtemp's 8 characters
_LOCK_NAME = ".owner"
_lock: int | None = None  # the open lock of this process's folder, held while it lives
_owner = 0  # the process that set the signal handlers: a forked child inherits it, not the folder


def _hold(folder: str) -> int | None:
    """Lock ``folder`` for this process's life (the lock goes when the process does, however it
    ends): a folder another process holds is not stale, whatever its PID reads as in this one
    (another container sharing ``/tmp`` numbers its processes anew)."""
    if fcntl is None:
        return None
    fd = os.open(os.path.join(folder, _LOCK_NAME), os.O_CREAT | os.O_WRONLY, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file of a new folder: no one else holds it
    return fd


def _remove_stale(root: str) -> None:
    """Remove the kept-trace folders in ``root`` that processes killed before their exit left:
    only this package's (its name, a folder of this user's with its lock file), only where the
    PID in the name is no process here and no process holds the lock."""
    if fcntl is None:  # Windows: no SIGTERM to be killed by, and no lock to tell a live folder by
        return
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            found = _STALE.fullmatch(entry.name)
            if found is None or not entry.is_dir(follow_symlinks=False) or _alive(int(found.group(1))):
                continue
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_uid == os.getuid():
                    _remove_unlocked(entry.path)


def _remove_unlocked(folder: str) -> None:
    assert fcntl is not None
    fd = os.open(os.path.join(folder, _LOCK_NAME), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError: its process lives
        shutil.rmtree(folder, ignore_errors=True)
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)  # no signal sent: whether the process exists
    except ProcessLookupError:
        return False
    except OSError:  # another user's: it exists
        return True
    return True


def _remove_on_signals() -> None:
    """Remove the folder on SIGTERM or SIGHUP, then end as the signal ends a process, for each
    signal that still does that (its default action): a handler of the user's (or one that ignores
    it, as ``nohup`` does SIGHUP) is theirs, left alone; the folder then goes at exit, or at the
    next process's start."""
    global _owner
    if fcntl is None or threading.current_thread() is not threading.main_thread():
        return
    for number in _SIGNALS:
        if signal.getsignal(number) is signal.SIG_DFL:
            _owner = os.getpid()
            signal.signal(number, _terminated)


# The signals that end a process by default and that a run is commonly ended by (SIGINT is
# pytest's KeyboardInterrupt: the run ends through its exit, and the folder with it).
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def _terminated(signum: int, frame: object) -> None:
    if os.getpid() == _owner and _folder is not None:  # not a forked child's (a DataLoader worker's)
        shutil.rmtree(_folder, ignore_errors=True)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)  # ends the process as the signal would have: its exit status says so


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)


class SessionTrace:
    """The Chrome trace of one finished session: torch's own export while the session is the
    newest of the process, else the copy :meth:`keep` made as the session ended.

    It becomes the session's ``export_chrome_trace`` (:func:`guard_exports`), so that every export
    of the session goes through it: capture's own (``raw_events``), ``Capture.export_trace``, a
    user's. torch (2.11 at least) writes a session's trace once ("Trace is already saved" after):
    the first export is kept, and later ones copy it.

    A kept trace is a file, not bytes held in memory: a big model's step is hundreds of MB of
    JSON, and a test or a sweep keeps one per profile while it runs. It goes in a temporary folder
    (``TMPDIR`` says where), as torch writes it (plain JSON: an export adds the ``"kernelprof"``
    key and gzips it as it would torch's own file), and is removed with its session. Not straight
    into ``--kernelprof-trace-dir`` under its final name: that name is the profile's place among
    the test's profiles as its report lists them (profiler by profiler, not in time order), known
    at the test's end, and a test that passes under ``--kernelprof-save failed`` saves nothing.
    """

    def __init__(self, session: Any, number: int) -> None:
        self.number = number
        # The session holds this object (its export_chrome_trace); a strong reference back would
        # be a cycle, and the kept file would wait for the cyclic collector to go.
        self._session = weakref.ref(session)
        self._kept: str | None = None
        self._failed: str | None = None  # why keeping it as its session ended failed

    def keep(self) -> None:
        """Export the trace now, for the exports to come; once."""
        if self._kept is not None:
            return
        session = self._session()
        if session is None:  # only this object's export was held on to, not its session
            raise TraceNotKeptError("this profile's torch profiler session was released before its trace was kept")
        later = _started - self.number
        if later:
            failed = f" (keeping it as its session ended failed: {self._failed})" if self._failed else ""
            raise TraceNotKeptError(
                f"this profile's trace can no longer be exported: {plural(later, 'later torch profiler session')} "
                "started in this process since its own ended, and torch writes a session's trace from "
                "buffers the next session takes (on a GPU, the trace would hold none of the profile's "
                "kernels). Export a profile's trace before the next profile starts, or keep every trace "
                "as it is profiled: Profiler(keep_traces=True) (kernelprof.keep_traces = True in a test, "
                "or profile(..., keep_traces=True) for one), sweep(..., keep_traces=True); under "
                f"--kernelprof-trace-dir the plugin keeps the traces of every test it will save{failed}"
            )
        path = os.path.join(_kept_folder(), f"session-{os.getpid()}-{self.number}.json")
        try:
            type(session).export_chrome_trace(session, path)  # torch's own, not this object
            if not os.path.isfile(path):  # torch logs a file it cannot open, and returns
                raise OSError(f"torch.profiler wrote no trace to {path} (its error is logged above)")
        except BaseException:
            _remove(path)
            raise
        self._kept = path
        weakref.finalize(self, _remove, path)

    def keep_as_it_ends(self) -> None:
        """:meth:`keep`, as the session ends. A trace that cannot be written (a full disk) does not
        fail the profile, which is whole: the export that needs the trace says why it is missing."""
        try:
            self.keep()
        except OSError as exc:
            self._failed = str(exc)

    def export(self, path: str) -> None:
        """Write the trace to ``path``, gzipped where it ends in ``.gz`` as torch does."""
        self.keep()
        assert self._kept is not None
        if path.endswith(".gz"):
            with open(self._kept, "rb") as src, gzip.open(path, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        else:
            shutil.copyfile(self._kept, path)


def guard_exports(session: Any) -> SessionTrace:
    """The trace of ``session``, which has just ended (sessions do not nest: it is the newest),
    installed as its ``export_chrome_trace``. The session keeps its type."""
    trace = SessionTrace(session, _started)
    session.export_chrome_trace = trace.export
    return trace
