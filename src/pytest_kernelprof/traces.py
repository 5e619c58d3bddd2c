"""Read Chrome/Perfetto trace files as torch.profiler exports them (.json, .json.gz)."""

from __future__ import annotations

import gzip
import json
import os
import zlib
from typing import Any

from .errors import TraceError


def read_trace(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The parsed trace; a :class:`TraceError` naming the file and the problem otherwise."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise TraceError(f"{name}: no such trace file") from None
    except OSError as exc:
        raise TraceError(f"{name}: cannot read the file ({exc.strerror or exc})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise TraceError(f"{name}: the gzip stream is truncated or corrupt ({exc})") from None
    if not data.strip():
        raise TraceError(f"{name}: the file is empty, not a Chrome trace")
    try:
        trace = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise TraceError(f"{name}: not valid JSON, the file may be truncated ({exc})") from None
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        raise TraceError(
            f"{name}: JSON without a 'traceEvents' list, so not a Chrome trace from torch.profiler "
            "(export one with prof.export_chrome_trace(path))"
        )
    for event in trace["traceEvents"]:
        if not isinstance(event, dict):
            raise TraceError(f"{name}: 'traceEvents' holds a {type(event).__name__}, not an event object")
        if event.get("ph") == "X" and not (
            isinstance(event.get("name"), str) and isinstance(event.get("ts"), int | float)
        ):
            raise TraceError(f"{name}: a complete event without a string 'name' and a numeric 'ts': {str(event)[:120]}")
    return trace
