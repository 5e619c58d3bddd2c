"""The entry points users call: ``Profiler``, ``profile``, ``load_trace``, ``load_sweep``
(``profiler.py``, ``loading.py``) and ``profile_ranks`` (``ranks.py``): the one place that assembles a capture or a
trace into a profile. ``captures.py`` holds what a profiler keeps: ``Capture``, ``TraceCapture``,
``Recording``; ``sweeps.py`` runs a profiler over cases (``Profiler.sweep``, ``Profiler.explore``)."""

from __future__ import annotations

from ..checks.sweep import ProfileSweep
from .captures import Capture, Recording, TraceCapture
from .loading import load_sweep, load_trace
from .profiler import Profiler, build_capture, capture_profile, profile
from .ranks import profile_ranks

__all__ = [
    "Capture",
    "ProfileSweep",
    "Profiler",
    "Recording",
    "TraceCapture",
    "build_capture",
    "capture_profile",
    "load_sweep",
    "load_trace",
    "profile",
    "profile_ranks",
]
