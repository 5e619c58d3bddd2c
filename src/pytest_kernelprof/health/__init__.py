"""Compile health and GPU memory of a profile: the values a test asserts on.

``prof.compile`` (``compiled.py``) and ``prof.memory`` (``memory.py``) are made from two kinds
of input: what the events hold, so that a loaded trace has it too, and what the capture saw
live and a trace does not keep (:class:`CompileFacts` from ``capture/compile_watch.py``,
:class:`MemoryReading` per call from ``capture/``). Pure: no torch import.
"""

from __future__ import annotations

from .compiled import (
    REGION_PREFIX,
    TRACE_CANNOT_TELL_COMPILE,
    CompileFacts,
    CompileReport,
    GraphBreak,
    compile_report,
    parse_graph_break,
    parse_recompile_reasons,
    region_ids,
    summarize_reason,
)
from .memory import NO_READINGS, MemoryReading, MemoryReport, format_bytes, memory_report, runtime_count

__all__ = [
    "NO_READINGS",
    "REGION_PREFIX",
    "TRACE_CANNOT_TELL_COMPILE",
    "CompileFacts",
    "CompileReport",
    "GraphBreak",
    "MemoryReading",
    "MemoryReport",
    "compile_report",
    "format_bytes",
    "memory_report",
    "parse_graph_break",
    "parse_recompile_reasons",
    "region_ids",
    "runtime_count",
    "summarize_reason",
]
