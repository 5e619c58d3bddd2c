"""Validated command-line settings, kept on ``config.stash`` for the session."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from .capture import DEFAULT_CALLS, DEFAULT_WARMUP


@dataclass(frozen=True)
class Settings:
    warmup: int = DEFAULT_WARMUP
    calls: int = DEFAULT_CALLS
    require_gpu: bool = False


SETTINGS_KEY = pytest.StashKey[Settings]()


def parse_count(option: str, value: str | int, minimum: int) -> int:
    """An integer option value, or a UsageError that names the option and the bound."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"{option} takes an integer, got {value!r}") from None
    if number < minimum:
        raise pytest.UsageError(f"{option} must be at least {minimum}, got {number}")
    return number
