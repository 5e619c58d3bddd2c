"""The ``"kernelprof"`` key: what a capture learns beyond torch's events, kept in the Chrome
trace it exports, and read back from a trace's header.

``append_kernelprof_key`` writes it into a file torch wrote; ``kernelprof_section`` and the
readers of its sub-keys check what a loaded trace holds there (``chrome.py``'s
``chrome_source`` takes them into the trace's ``Source``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ..decode import DTYPES, KINDS
from ..decode.triton_ir import IrFacts
from ..errors import RecordingError, TraceError
from .json_reader import hide_trace_errors

# What a capture learns beyond torch's events goes into the exported Chrome JSON under one
# top-level key: {"kernelprof": {"version": 1, "triton_kernels": [...], ...}}. Readers take the
# sub-keys they know and ignore the others, so later versions can add their own.
KERNELPROF_KEY = "kernelprof"
KERNELPROF_VERSION = 1


def kernelprof_section(trace: Mapping[str, Any], label: str) -> Mapping[str, Any]:
    """The trace's ``"kernelprof"`` object ({} for a trace that torch alone wrote)."""
    __tracebackhide__ = hide_trace_errors
    section = trace.get(KERNELPROF_KEY)
    if section is None:
        return {}
    if not isinstance(section, dict) or type(section.get("version")) is not int:
        raise TraceError(
            f"{label}: its '{KERNELPROF_KEY}' key is not an object with an integer 'version', so not "
            "what pytest-kernelprof writes; remove the key to read the trace as torch wrote it"
        )
    return section


def _triton_kernels(section: Mapping[str, Any], label: str) -> frozenset[str]:
    __tracebackhide__ = hide_trace_errors
    names = section.get("triton_kernels", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise TraceError(f"{label}: '{KERNELPROF_KEY}.triton_kernels' is not a list of kernel names")
    return frozenset(names)


def _triton_ir(section: Mapping[str, Any], label: str) -> tuple[tuple[str, IrFacts], ...]:
    """``{"name": {"kind": ..., "dtype": ...}}``: what capture read from each kernel's compiled IR."""
    __tracebackhide__ = hide_trace_errors
    read = section.get("triton_ir", {})
    facts = []
    if isinstance(read, dict):
        for name, fields in read.items():
            kind = fields.get("kind") if isinstance(fields, dict) else None
            dtype = fields.get("dtype") if isinstance(fields, dict) else None
            if kind not in KINDS or not (dtype is None or dtype in DTYPES):
                break
            facts.append((name, IrFacts(kind, dtype)))
        else:
            return tuple(facts)
    raise TraceError(
        f"{label}: '{KERNELPROF_KEY}.triton_ir' is not an object of kernel names to their kind and dtype "
        f"(kinds: {', '.join(KINDS)})"
    )


def append_kernelprof_key(path: str, section: Mapping[str, Any]) -> None:
    """Add ``"kernelprof": section`` to the JSON object in the file at ``path``, in place.

    The new key goes before the object's closing brace, which is found from the end of the
    file: a trace of hundreds of MB is neither read nor rewritten.
    """
    with open(path, "r+b") as handle:
        end = handle.seek(0, os.SEEK_END)
        tail_start = max(0, end - 4096)
        handle.seek(tail_start)
        tail = handle.read()
        body = tail.rstrip()
        if not body.endswith(b"}"):
            raise RecordingError(f"{path}: torch wrote a trace that does not end with a JSON object's '}}'")
        before = body[:-1].rstrip()
        comma = b"" if before.endswith(b"{") else b","
        handle.seek(tail_start + len(body) - 1)
        handle.truncate()
        handle.write(comma + b'\n  "' + KERNELPROF_KEY.encode() + b'": ' + json.dumps(section).encode() + b"\n}\n")
