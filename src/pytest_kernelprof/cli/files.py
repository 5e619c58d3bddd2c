"""Reading the traces the commands name: a file, standard input (``-``) or anything that gives
its bytes once (a named pipe, a process substitution), copied where it must be read again; and
loading one as the commands do, a trace that lost records shown with a warning that says what
its counts lack."""

from __future__ import annotations

import contextlib
import os
import re
import select
import shlex
import stat
import sys
import tempfile
import warnings
from collections.abc import Iterator

from ..api.loading import read_trace as load_trace  # a command, not a test's profile: kept for no report
from ..checks.sweep import INDEX_NAME
from ..decode import BUILT_IN, Decoder
from ..errors import IncompleteProfileError, IncompleteProfileWarning, KernelProfError, TraceError
from ..model import KernelProfile
from ..model.measured import NO_GPU_ACTIVITY
from ..tables import plural, printable
from ..traces.trace_bytes import copy_capped

# The trace argument that reads standard input, and how messages name it.
STDIN, STDIN_NAME = "-", "<stdin>"


def shown(path: str) -> str:
    """How the command's lines name a trace: a file's name as any name is shown (a file named
    with an escape sequence or a newline, as an artifact from another job can be, stays text)."""
    return STDIN_NAME if path == STDIN else printable(path)


@contextlib.contextmanager
def readable(path: str) -> Iterator[str]:
    """``path``, or a copy of what it gives where it can be read only once: standard input
    (``-``), a named pipe, a process substitution (``<(zcat t.json.gz)``, a ``/dev/fd/N``), a
    device. The reader takes a file, gzipped or not, and the timeline page reads it again (of a
    drained pipe, nothing). At most the trace size cap, removed when the command ends, by a
    signal too (``main``)."""
    if path != STDIN and not _read_once(path):
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="kernelprof-") as folder:
        copy = os.path.join(folder, "stdin")
        with open(copy, "wb") as handle:
            if path == STDIN:
                copy_capped(_stdin_chunks(), handle, STDIN_NAME)
            else:
                fd = _open_stream(path)
                try:  # read blocking: a named pipe that no one writes to reads as empty, as the reader reads it
                    copy_capped(iter(lambda: os.read(fd, 1 << 20), b""), handle, shown(path))
                finally:
                    os.close(fd)
        yield copy


def _read_once(path: str) -> bool:
    """Whether ``path`` names something other than a regular file or a folder (whose errors the
    reader words): what it gives, it gives once."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # no such file, a NUL in the name: the reader says so
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _open_stream(path: str) -> int:
    """``path`` opened to read: without blocking, so that a named pipe that no one writes to
    reads as empty instead of hanging at ``open``; then read blocking."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise TraceError(f"{printable(path)}: cannot read the file ({exc.strerror or exc})") from None
    if hasattr(os, "set_blocking"):
        try:
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
    return fd


def _stdin_chunks(size: int = 1 << 20) -> Iterator[bytes]:
    """Standard input, a chunk at a time as it comes. On POSIX each wait wakes every quarter
    second: Python runs a signal's handler between bytecodes, so a SIGTERM that lands just
    before a read blocks would wait for the next byte, or forever, if the wait never woke."""
    if sys.stdin is None:  # started with it closed: `kernelprof show - <&-`
        raise TraceError(f"{STDIN_NAME}: standard input is closed: pipe a trace in (kernelprof show - < trace.json)")
    if sys.platform == "win32":
        yield from iter(lambda: sys.stdin.buffer.read(size), b"")
        return
    fd = sys.stdin.fileno()
    while True:
        while not select.select([fd], [], [], 0.25)[0]:
            pass
        chunk = os.read(fd, size)
        if not chunk:
            return
        yield chunk


def load(path: str, name: str, decoder: Decoder = BUILT_IN) -> tuple[KernelProfile, str | None]:
    """The profile of the trace at ``path`` (``name``: what the user gave, for messages), and
    what the trace lost where the builder would refuse it (then the warning said so)."""
    if os.path.isdir(path):
        raise TraceError(folder_error(path, name))
    try:
        return _load_file(path, name, decoder)
    except KernelProfError as exc:  # it names the file: name what the user gave
        raise type(exc)(str(exc).replace(path, name)) from None


def folder_error(path: str, name: str) -> str:
    """What a folder given for a trace holds, and the command that shows one of its traces: "a
    directory, not a trace file" left a trial to guess at a sweep's folder (``ProfileSweep.export``)."""
    try:
        files = sorted(entry for entry in os.listdir(path) if entry.endswith((".json", ".json.gz")))
    except OSError as exc:
        return f"{name}: a directory, not a trace file (cannot list it: {exc.strerror or exc})"
    traces = [entry for entry in files if entry != INDEX_NAME]
    if INDEX_NAME in files:
        what = f"a sweep's folder ({INDEX_NAME} and {plural(len(traces), 'trace')})"
        what += ", which pytest_kernelprof.load_sweep reads"
    else:
        what = (
            f"a directory of {plural(len(traces), 'trace file')}" if traces else "a directory with no trace file in it"
        )
    if not traces:
        return f"{name}: {what}; name a trace file"
    first = shlex.quote(os.path.join(path, traces[0]))
    return f"{name}: {what}; show one of them: kernelprof show {printable(first)}"


def _load_file(path: str, name: str, decoder: Decoder = BUILT_IN) -> tuple[KernelProfile, str | None]:
    """Load for reading: a trace that lost some GPU records is shown, with a warning that says
    so (not the builder's refusal); one that lost every kernel record is refused, as the error
    says (its table would be empty)."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", IncompleteProfileWarning)
            prof = load_trace(path, allow_variation=True, decoder=decoder)
        for warning in caught:  # a command's warning is a line of its own, not Python's "file:line:"
            if issubclass(warning.category, IncompleteProfileWarning):
                print(f"kernelprof: warning: {name}: {str(warning.message).replace(path, name)}", file=sys.stderr)
            else:
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
        return prof, None
    except IncompleteProfileError as exc:
        prof = load_trace(path, allow_variation=True, check_complete=False, decoder=decoder)
        if not prof.has_device_activity or not any(len(call.kernels) for call in prof.calls):
            raise IncompleteProfileError(f"{name}: {exc}") from None
        said, incomplete = _shown_anyway(str(exc))
        if prof.varied:
            said += " It may be why the calls recorded different kernel sequences (the header)."
        print(f"kernelprof: warning: {name}: {said}", file=sys.stderr)
        return prof, incomplete


# The builder's refusal of a trace whose GPU records the profiler lost (assemble/complete.py).
_LOST = re.compile(
    r"the profiler lost GPU records: (\d+) of (\d+) kernel launches recorded on the CPU side have no GPU "
    r"record \((.*?)\)\. The counts would be wrong, so the profile is refused\. "
)
# The rest of the builder's refusals, and the escape it names, which a command has taken.
_REFUSED = re.compile(r",? so the profile is refused|; the profile is refused|; load_trace\([^)]*\) reads [^.]* anyway")


def _shown_anyway(refusal: str) -> tuple[str, str]:
    """The builder's refusal, said as what is true where the command shows the trace anyway,
    and what the trace lost, for the header."""
    lost = _LOST.match(refusal)
    if lost is None:
        return "shown anyway: " + _REFUSED.sub("", refusal).replace(" would read ", " read "), "the trace is incomplete"
    count, launches, listing = lost.groups()
    kernels = plural(int(count), "kernel")
    return (
        f"shown anyway: counts are short by {kernels} ({listing}); the profiler lost GPU records: {count} of "
        f"{launches} kernel launches recorded on the CPU side have no GPU record. {refusal[lost.end() :]}",
        f"the profiler lost {plural(int(count), 'GPU record')}",
    )


# How every command words a trace without GPU activity, as the timeline page and the profile's table do.
CPU_ONLY = NO_GPU_ACTIVITY


def head(path: str, prof: KernelProfile, incomplete: str | None) -> str:
    """The line that names a trace the commands read: its device, its calls, and whether they varied."""
    where = prof.device_label or "no GPU named in the trace"
    if not prof.has_device_activity:
        # In the timeline page's words: "no GPU named" alone read as device metadata gone missing.
        where = f"{prof.device_label}, CPU only" if prof.device else "CPU only"
        where += f" ({CPU_ONLY})"
    varied = f", calls {_varied(incomplete)}" if prof.varied else ""
    return f"{path}: {where}, {plural(len(prof.calls), 'call')}{varied}"


def _varied(incomplete: str | None) -> str:
    """How the calls' kernel sequences differ: as launched, or as recorded where the trace lost
    records (``load``), which a difference it makes must not be blamed on the workload for."""
    if incomplete is None:
        return "launched different kernel sequences"
    return f"recorded different kernel sequences: {incomplete} (the warning above)"
