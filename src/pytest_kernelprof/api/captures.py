"""What a profiler keeps of each profile: a ``Capture`` (the profile and what it takes to export
its trace), and the handle of ``with kernelprof.record() as rec``."""

from __future__ import annotations

import contextlib
import errno
import gzip
import os
import shutil
import stat
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..capture import Block, CapturedSession
from ..errors import TraceNotKeptError
from ..model import KernelProfile
from ..paths import atomic_path, file_kind
from ..traces.kernelprof_key import KERNELPROF_VERSION, append_kernelprof_key


@dataclass(frozen=True)
class Capture:
    """A finished session: the profile and the torch profiler it came from (for trace export).

    ``learned``: what the capture learned beyond torch's events (``{"triton_kernels": [...]}``),
    written into exported traces under the ``"kernelprof"`` key so that ``load_trace`` reads
    the same profile back.
    """

    profile: KernelProfile
    torch_profiler: Any
    learned: Mapping[str, Any] = field(default_factory=dict)

    def export_trace(self, path: str | os.PathLike[str]) -> None:
        """Write the session's Chrome trace, gzipped when ``path`` ends in ``.gz``; atomically.

        Before the next profile starts, or at any time where the trace was kept as its session
        ended (``Profiler(keep_traces=True)``, ``--kernelprof-trace-dir``): torch writes a session's
        trace from buffers the next session takes, so a later export raises ``TraceNotKeptError``
        rather than write a trace without the profile's kernels.
        """
        # A ".json" temporary name: torch gzips by itself for a ".gz" one, in another way.
        with atomic_path(path, suffix=".json") as tmp:
            self.torch_profiler.export_chrome_trace(tmp)
            append_kernelprof_key(tmp, {"version": KERNELPROF_VERSION, **self.learned})
            if os.fspath(path).endswith(".gz"):
                with atomic_path(tmp, suffix=".gz") as packed, open(tmp, "rb") as src, gzip.open(packed, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)


@dataclass(frozen=True, kw_only=True)
class TraceCapture(Capture):
    """A profile read from a trace file: exported as a copy of that file, since no torch
    profiler holds its events; gzipped or not as the new name says.

    The copy is made when the trace is exported (at the end of a failed test), not when it was
    loaded: a copy of every loaded trace would double the disk a suite of large traces takes.
    So the file's identity is taken as the capture is made (its device, inode, size and
    modification time, as ``make`` and ``rsync`` judge a file unchanged), and a file that no longer
    matches it is not copied (``TraceNotKeptError``): it may hold another trace, or half of one.
    A named pipe or a device was read once, as it was loaded: it is refused, never opened again
    (an open of a pipe that no one writes to would block the test run).
    """

    path: str
    loaded: os.stat_result | None = field(default=None, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        # The path as the file was found: a test that changes its working folder afterwards
        # (monkeypatch.chdir) must not send the export to another file of that name.
        object.__setattr__(self, "path", os.path.abspath(self.path))
        with contextlib.suppress(OSError, ValueError):  # gone already: the export says so
            object.__setattr__(self, "loaded", os.stat(self.path))

    def export_trace(self, path: str | os.PathLike[str]) -> None:
        loaded = self.loaded
        if loaded is not None and not stat.S_ISREG(loaded.st_mode):
            raise OSError(
                errno.ESPIPE,
                f"{file_kind(loaded.st_mode)}, read once as the trace was loaded: its trace cannot be read "
                "again; save the trace as a file and load that to keep it",
                self.path,
            )
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0))
        with open(fd, "rb") as raw:
            self._check_unchanged(os.fstat(fd))
            packed = raw.read(2) == b"\x1f\x8b"
            raw.seek(0)
            try:
                with (
                    atomic_path(path) as tmp,
                    gzip.GzipFile(fileobj=raw, mode="rb") if packed else contextlib.nullcontext(raw) as src,
                    gzip.open(tmp, "wb") if os.fspath(path).endswith(".gz") else open(tmp, "wb") as dst,
                ):
                    shutil.copyfileobj(src, dst, 1 << 20)
                    self._check_unchanged(os.fstat(fd))  # while it was copied: the copy is not kept
            except (EOFError, zlib.error) as exc:  # it read as a trace when loaded
                raise self._changed() from exc

    def _check_unchanged(self, now: os.stat_result) -> None:
        was = self.loaded
        if was is not None and (was.st_dev, was.st_ino, was.st_size, was.st_mtime_ns) != (
            now.st_dev,
            now.st_ino,
            now.st_size,
            now.st_mtime_ns,
        ):
            raise self._changed()

    def _changed(self) -> TraceNotKeptError:
        return TraceNotKeptError(
            f"the trace file {self.path} changed since it was loaded: it may no longer hold the profile's trace"
        )


class Recording:
    """The handle of ``with kernelprof.record() as rec``: ``rec.step()`` starts the next call.

    Made with the block it steps through and ``build``, which makes the capture of the block's
    session: the profile is built once the block has ended, on the first ask.
    """

    def __init__(self, block: Block, build: Callable[[CapturedSession], Capture]) -> None:
        self._block = block
        self._build = build
        self._capture: Capture | None = None

    def step(self) -> None:
        """End the current call and begin the next one."""
        __tracebackhide__ = True
        self._block.step()

    @property
    def capture(self) -> Capture:
        __tracebackhide__ = True
        if self._capture is None:
            self._capture = self._build(self._block.session)
        return self._capture

    @property
    def profile(self) -> KernelProfile:
        __tracebackhide__ = True
        return self.capture.profile
