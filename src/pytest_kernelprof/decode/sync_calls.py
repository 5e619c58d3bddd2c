"""What makes the host wait for the GPU, read from runtime-call names and memcpy records.

Pure functions, no torch: which runtime/driver calls are host syncs, what a memcpy
record's name says about its direction and host memory, which Python frames are the
user's, and which sync a warning of torch's sync debug mode belongs to.

The sync list (from the events of torch 2.11 on an H200, see the README):

- ``stream``: ``cudaStreamSynchronize``, ``cuStreamSynchronize``
- ``device``: ``cudaDeviceSynchronize``, ``cuCtxSynchronize``
- ``event``: ``cudaEventSynchronize``, ``cuEventSynchronize``
- ``copy``: a synchronous ``cudaMemcpy``/``cuMemcpy*`` (not device to device), and an
  asynchronous one whose GPU record is to or from pageable host memory: the host waits
  inside that call (about 300 us for 4 MiB), with no sync call at all for a
  ``non_blocking`` copy.

Not syncs: ``cudaStreamWaitEvent`` (the GPU waits, not the host), ``cudaEventRecord*``,
``cudaEventQuery``, and a memcpy to pinned memory (``.item()`` copies into pinned memory
and then calls ``cudaStreamSynchronize``: that call is the sync).
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

SYNC_KINDS = ("stream", "device", "event", "copy")
DIRECTIONS = ("HtoD", "DtoH", "DtoD", "HtoH")
HOST_MEMORY = ("pinned", "pageable")

# Kineto names some calls with the API version or the per-thread-stream variant
# ("cudaStreamSynchronize_v3020", "cudaMemcpy_ptds", "cuMemcpyDtoH_v2").
_SUFFIX = re.compile(r"(?:_v\d+|_ptds|_ptsz)+$")

_HOST_SYNCS = {
    "cudaStreamSynchronize": "stream",
    "cuStreamSynchronize": "stream",
    "cudaDeviceSynchronize": "device",
    "cuCtxSynchronize": "device",
    "cudaEventSynchronize": "event",
    "cuEventSynchronize": "event",
}
_COPY_PREFIXES = ("cudaMemcpy", "cuMemcpy")
_DEVICE_TO_DEVICE = frozenset(("cuMemcpyDtoD", "cuMemcpyPeer", "cudaMemcpyPeer", "cuMemcpyAtoA", "cuMemcpyDtoA"))


def api_name(name: str) -> str:
    """A runtime/driver call's name without Kineto's version or per-thread suffix."""
    return _SUFFIX.sub("", name)


def sync_kind(name: str, memcpy: str | None) -> str | None:
    """The kind of host sync a runtime/driver call is, or None if the host does not wait in it.

    ``memcpy`` is the name of the call's GPU memcpy record, where it has one.
    """
    base = api_name(name)
    kind = _HOST_SYNCS.get(base)
    if kind is not None or not base.startswith(_COPY_PREFIXES):
        return kind
    direction, host_memory = memcpy_kind(memcpy) if memcpy is not None else (None, None)
    if base.endswith("Async"):
        return "copy" if host_memory == "pageable" else None
    # A synchronous memcpy returns once the copy is done, except device to device.
    if direction == "DtoD" or base in _DEVICE_TO_DEVICE:
        return None
    return "copy"


# "Memcpy DtoH (Device -> Pageable)", "Memcpy HtoD (Pinned -> Device)", "Memcpy PtoP (Device -> Device)"
_MEMCPY = re.compile(r"Memcpy\s+([A-Za-z])to([A-Za-z])(?:\s*\(\s*([^)>]*?)\s*->\s*([^)]*?)\s*\))?")
_SIDE = {"H": "H", "D": "D", "A": "D", "P": "D"}  # arrays and peers are device memory


def memcpy_kind(name: str) -> tuple[str | None, str | None]:
    """(direction, host memory) of a GPU memory record, from its name.

    Direction is ``"HtoD"``, ``"DtoH"``, ``"DtoD"`` (also a peer copy between GPUs,
    ``PtoP``) or ``"HtoH"``; host memory is ``"pageable"`` or ``"pinned"`` where a host side
    is one of those (pageable wins when both are host memory). A memset is (None, None).
    """
    match = _MEMCPY.search(name)
    if match is None:
        return None, None
    src, dst = _SIDE.get(match.group(1).upper()), _SIDE.get(match.group(2).upper())
    direction = f"{src}to{dst}" if src and dst else None
    sides = {(match.group(3) or "").lower(), (match.group(4) or "").lower()}
    host = "pageable" if "pageable" in sides else "pinned" if "pinned" in sides else None
    return direction, host


# -- Python frames -----------------------------------------------------------------------

# torch.profiler names a frame "path(line): function", with the path relative to the
# sys.path entry it was imported from, and the line the function's *def* line.
_FRAME = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<function>.+)$")

# Packages whose frames are never the user's: the profiler, the test runner, the
# standard library, and this plugin.
_PACKAGES = frozenset(
    ("torch", "triton", "functorch", "_pytest", "pytest", "pluggy", "pytest_kernelprof", "_distutils_hack")
)
_INTERNAL = frozenset(sys.stdlib_module_names) | _PACKAGES
_STDLIB = os.path.normpath(sysconfig.get_paths()["stdlib"])
_INSTALLED = ("site-packages", "dist-packages")


def is_user_file(path: str) -> bool:
    """Whether a frame's file is the user's, not torch's, pytest's, the stdlib's or the plugin's."""
    if not path or path.startswith("<"):  # <built-in ...>, <frozen ...>, <string>
        return False
    parts = [p for p in path.replace("\\", "/").split("/") if p and p != "."]
    if not parts:
        return False
    if os.path.isabs(path):
        if os.path.normpath(path).startswith(_STDLIB + os.sep):
            return False
        for marker in _INSTALLED:
            if marker in parts[:-1]:
                return _top(parts[parts.index(marker) + 1 :]) not in _INTERNAL
        # A source checkout of torch or of this plugin; stdlib names are common directory names.
        return not any(p in _PACKAGES for p in parts[:-1])
    return _top(parts) not in _INTERNAL


def _top(parts: Sequence[str]) -> str:
    first = parts[0]
    return first[:-3] if len(parts) == 1 and first.endswith(".py") else first


def user_frames(names: Iterable[str]) -> tuple[str, ...]:
    """The user's frames among profiler frame names, in the order given."""
    kept = []
    for name in names:
        match = _FRAME.match(name)
        if match is not None and is_user_file(match.group("file")):
            kept.append(name)
    return tuple(kept)


def frame_function(frame: str) -> str | None:
    """The function a profiler frame name names (``"f.py(40): step"`` -> ``"step"``)."""
    match = _FRAME.match(frame)
    return match.group("function") if match is not None else None


@dataclass(frozen=True)
class FlaggedSync:
    """A sync torch's sync debug mode warned about: the user's line, and its function."""

    line: str  # "path/to/file.py:45"
    function: str


def assign_lines(stacks: Sequence[tuple[str, ...] | None], flagged: Sequence[FlaggedSync]) -> list[str | None]:
    """The line of each stream sync of one call, from the warnings of that call.

    torch warns once per ``cudaStreamSynchronize`` it issues itself (``.item()``,
    ``nonzero``, a blocking copy, ``Stream.synchronize``); a library that calls the
    runtime directly issues one without a warning. With as many warnings as syncs they
    pair in order; otherwise a warning goes to the next sync whose innermost user frame
    is in the same function, and syncs left over get no line rather than a wrong one.
    """
    if len(flagged) == len(stacks):
        return [f.line for f in flagged]
    lines: list[str | None] = []
    next_warning = 0
    for stack in stacks:
        function = frame_function(stack[-1]) if stack else None
        found = None
        if function is not None:
            for i in range(next_warning, len(flagged)):
                if flagged[i].function == function:
                    found, next_warning = flagged[i].line, i + 1
                    break
        lines.append(found)
    return lines
