"""What a profiler keeps of each profile: a ``Capture`` (the profile and what it takes to export
its trace), and the handle of ``with kernelprof.record() as rec``."""

from __future__ import annotations

import gzip
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..capture import Block, CapturedSession
from ..model import KernelProfile
from ..paths import atomic_path
from ..traces.chrome import KERNELPROF_VERSION, append_kernelprof_key


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
    profiler holds its events; gzipped or not as the new name says."""

    path: str

    def export_trace(self, path: str | os.PathLike[str]) -> None:
        with open(self.path, "rb") as raw:
            packed = raw.read(2) == b"\x1f\x8b"
        with (
            atomic_path(path) as tmp,
            gzip.open(self.path, "rb") if packed else open(self.path, "rb") as src,
            gzip.open(tmp, "wb") if os.fspath(path).endswith(".gz") else open(tmp, "wb") as dst,
        ):
            shutil.copyfileobj(src, dst, 1 << 20)


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
