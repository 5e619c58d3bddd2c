"""Raw events -> KernelProfile, one pass a module (see ``profile.build_profile``)."""

from __future__ import annotations

from .profile import build_profile

__all__ = ["build_profile"]
