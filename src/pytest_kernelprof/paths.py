"""File names made from test ids: readable, unique, safe on every filesystem."""

from __future__ import annotations

import hashlib
import re


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
