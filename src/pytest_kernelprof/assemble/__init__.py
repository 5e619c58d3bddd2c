"""Raw events -> KernelProfile, one pass a module (see ``profile.build_profile``)."""

from __future__ import annotations

from .profile import build_profile
from .steps import paused_gc

__all__ = ["build_profile", "paused_gc"]
