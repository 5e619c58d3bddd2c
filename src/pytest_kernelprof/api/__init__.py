"""The entry points users call: ``Profiler``, ``profile``, ``load_trace`` (``profiler.py``) and
``profile_ranks`` (``ranks.py``): the one place that assembles a capture or a trace into a profile."""

from __future__ import annotations

from .profiler import Profiler, TraceCapture, build_capture, capture_profile, check_calls, load_trace, profile
from .ranks import profile_ranks

__all__ = [
    "Profiler",
    "TraceCapture",
    "build_capture",
    "capture_profile",
    "check_calls",
    "load_trace",
    "profile",
    "profile_ranks",
]
