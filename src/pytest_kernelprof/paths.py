"""The files the plugin writes: names made from test ids (readable, unique, safe on every
filesystem), and atomic writes, so that a reader never sees half a file and a failure
never loses the file that was there."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import Iterator


def _safe_stem(text: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", text.replace("::", "__")).strip("_.")
    if len(stem) > 120:
        stem = stem[:100] + "-" + hashlib.sha1(text.encode()).hexdigest()[:12]
    return stem


def trace_file_name(nodeid: str, index: int) -> str:
    """A file name for the ``index``-th profile of a test: readable, unique, filesystem-safe."""
    suffix = f"-{index + 1}" if index else ""
    return f"{_safe_stem(nodeid)}{suffix}.json.gz"


def baseline_file_name(test_name: str) -> str:
    """``test_mlp[bf16]`` -> ``test_mlp_bf16.json``."""
    return f"{_safe_stem(test_name)}.json"


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str], suffix: str = ".tmp") -> Iterator[str]:
    """A temporary path beside ``target`` to write to; renamed onto ``target`` when the block
    ends without an error, removed in any case. The folder is created if need be."""
    target = os.fspath(target)
    directory = os.path.dirname(target) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=suffix, dir=directory)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
