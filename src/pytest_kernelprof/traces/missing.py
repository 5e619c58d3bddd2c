"""The error for a trace file that is not there, saying where a relative path was looked for.

A relative path is read from the current directory, as ``open`` reads it; a test that names its
trace relative to its own file (``load_trace("data/x.json.gz")``) finds it only where pytest was
started from that file's folder. The error says which directory that was and, where the path
exists next to the calling file or in a folder above it up to its project's root, names that
file (never read silently: the same test would read another file from another directory).
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

from ..errors import TraceError
from ..paths import is_own_file

# What marks a project's root (pytest's rootdir is found by its ini files): the folders above
# the calling file are searched up to the first that holds one.
_ROOT_MARKERS = ("pyproject.toml", "pytest.ini", "tox.ini", "setup.cfg", "setup.py", ".git")
_MOST_FOLDERS_UP = 12


def missing_trace_file(name: str) -> TraceError:
    """The error for ``name``, which ``open`` did not find."""
    if os.path.isabs(name):
        return TraceError(f"{name}: no such trace file")
    where = f"{name}: no such trace file (relative paths are read from the current directory, {os.getcwd()})"
    caller = _calling_file()
    base = _elsewhere(name, caller) if caller is not None else None
    if caller is None or base is None:
        return TraceError(where)
    found = base / name
    if base == caller.parent:
        return TraceError(
            f"{where}; {found} exists, next to the calling file {caller.name}: to read that one from any "
            f"directory, pass Path(__file__).parent / {name!r}"
        )
    return TraceError(
        f"{where}; {found} exists, under {base}, a folder above the calling file {caller.name}: to read "
        f"that one, pass its whole path, or run pytest from {base}"
    )


def _calling_file() -> Path | None:
    """The user's file that asked for the trace: the first frame out of this package, where it
    is a Python file of the user's (not the standard library's or an installed package's, as a
    console script's or runpy's is)."""
    frame = sys._getframe(1)
    while frame is not None and is_own_file(frame.f_code.co_filename):
        frame = frame.f_back  # type: ignore[assignment]  # None ends the loop
    if frame is None:
        return None
    filename = frame.f_code.co_filename
    if not filename.endswith(".py") or not os.path.isfile(filename):
        return None
    path = Path(filename).resolve()
    installed = {sysconfig.get_path(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    if any(folder and path.is_relative_to(Path(folder).resolve()) for folder in installed):
        return None
    return path


def _elsewhere(name: str, caller: Path) -> Path | None:
    """The folder, the calling file's or one above it up to the project's root, that holds ``name``."""
    folder = caller.parent
    for _ in range(_MOST_FOLDERS_UP):
        if (folder / name).is_file():
            return folder
        if any((folder / marker).exists() for marker in _ROOT_MARKERS) or folder.parent == folder:
            return None
        folder = folder.parent
    return None
