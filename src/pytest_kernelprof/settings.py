"""Validated command-line settings, kept on ``config.stash`` for the session."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .defaults import DEFAULT_CALLS, DEFAULT_MEMORY_TOLERANCE, DEFAULT_WARMUP, MAX_CALLS, MAX_CALLS_WHY, NAME_MODES

if TYPE_CHECKING:
    from .names import Decoder
    from .rules import Rule


@dataclass(frozen=True)
class Settings:
    warmup: int = DEFAULT_WARMUP
    calls: int = DEFAULT_CALLS
    require_gpu: bool = False
    modules: bool = False
    trace_dir: Path | None = None
    save: str = "none"
    update: bool = False
    names: str = "stable"
    forbid: tuple[Rule, ...] = ()
    stacks: bool = False
    memory_tolerance: float = DEFAULT_MEMORY_TOLERANCE
    # The ini's kernelprof_kernels lines, parsed (names.Decoder); None: the built-in decoder.
    decoder: Decoder | None = None
    strict_decode: bool = False


SETTINGS_KEY = pytest.StashKey[Settings]()


def setting_name(config: pytest.Config, dest: str) -> str:
    """How an error names a setting: the command-line option where it was given, else the ini key."""
    if config.getoption(dest) is not None:
        return "--" + dest.replace("_", "-")
    return f"ini option {dest}"


def run_was_narrowed(config: pytest.Config, deselected: bool) -> bool:
    """Whether the run left tests of the suite out (-k, -m, --lf, node ids, deselection): what
    baselines that went unused then say nothing about."""
    option = config.option
    return deselected or bool(
        option.keyword or option.markexpr or getattr(option, "lf", False) or any("::" in arg for arg in config.args)
    )


def ini_value(config: pytest.Config, key: str) -> Any:
    """``config.getini(key)``, with a bad value reported as a UsageError that names the key
    (pytest's own message for a bad boolean names only the value)."""
    try:
        return config.getini(key)
    except (ValueError, pytest.UsageError) as exc:  # pytest 9 raises the latter itself
        accepted = "; it takes true or false (or yes/no, on/off, 1/0)" if "truth value" in str(exc) else ""
        raise pytest.UsageError(f"ini option {key}: {exc}{accepted}") from None


def assertion_budget(config: pytest.Config) -> tuple[int, int]:
    """The lines and characters of an assertion explanation pytest shows before cutting it
    short (0: no limit): none at -vv or on CI, else its truncation_limit_* ini options."""
    if config.get_verbosity(pytest.Config.VERBOSITY_ASSERTIONS) >= 2 or any(
        os.environ.get(var) for var in ("CI", "BUILD_NUMBER")
    ):
        return 0, 0
    return _ini_int(config, "truncation_limit_lines", 8), _ini_int(config, "truncation_limit_chars", 640)


def _ini_int(config: pytest.Config, key: str, default: int) -> int:
    try:
        value = config.getini(key)  # ini options of pytest 8.4 and newer; older ones cut at the defaults
    except ValueError:
        return default
    try:
        return default if value in (None, "") else int(value)
    except (TypeError, ValueError):
        return default


def parse_count(option: str, value: str | int, minimum: int) -> int:
    """A count of calls (warm-up or profiled) from an option or ini value, or a UsageError
    that names the option and the bound (at most ``MAX_CALLS``)."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"{option} takes an integer, got {value!r}") from None
    if number < minimum:
        raise pytest.UsageError(f"{option} must be at least {minimum}, got {number}")
    if number > MAX_CALLS:
        raise pytest.UsageError(f"{option} must be at most {MAX_CALLS}, got {number}: {MAX_CALLS_WHY}")
    return number


SAVE_CHOICES = ("failed", "all", "none")


def parse_save(value: str | None, trace_dir: Path | None) -> str:
    """When to write traces: ``failed`` by default once a directory is given, else ``none``."""
    if value is None:
        return "failed" if trace_dir is not None else "none"
    if value not in SAVE_CHOICES:
        raise pytest.UsageError(f"--kernelprof-save takes one of {', '.join(SAVE_CHOICES)}, got {value!r}")
    if trace_dir is None and value != "none":
        raise pytest.UsageError(f"--kernelprof-save={value} needs --kernelprof-trace-dir DIR to write into")
    return value


def parse_names(value: str, option: str = "--kernelprof-baseline-names") -> str:
    if value not in NAME_MODES:
        raise pytest.UsageError(f"{option} takes one of {', '.join(NAME_MODES)}, got {value!r}")
    return value


def parse_forbid(lines: list[str], decoder: Decoder | None = None) -> tuple[Rule, ...]:
    """The ini's ``kernelprof_forbid`` rules, or a UsageError that names the ini key and the line.
    A family that ``decoder`` was taught is a family a rule may name."""
    if not lines:
        return ()
    # Imported here: the rules need the profile model, which a session without rules never loads.
    from .rules import parse_rules

    taught = decoder.families() if decoder is not None else ()
    try:
        return parse_rules(lines, taught)
    except ValueError as exc:
        raise pytest.UsageError(f"kernelprof_forbid {exc}") from None


def parse_kernels(lines: list[str]) -> Decoder | None:
    """The ini's ``kernelprof_kernels`` lines as a decoder, or a UsageError naming the ini key
    and the line; None where there are none (the built-in decoder)."""
    if not any(line.strip() and not line.strip().startswith("#") for line in lines):
        return None
    from .errors import TeachingError
    from .names import BUILT_IN

    try:
        return BUILT_IN.teach_lines(lines, "ini option kernelprof_kernels")
    except TeachingError as exc:
        raise pytest.UsageError(str(exc)) from None


def parse_percent(option: str, value: str) -> float:
    """A percentage ("5%" or "5") as a fraction, or a UsageError that names the option."""
    text = str(value).strip().removesuffix("%").strip()
    try:
        percent = float(text)
    except ValueError:
        raise pytest.UsageError(f"{option} takes a percentage such as 5%, got {value!r}") from None
    if not 0 <= percent <= 1000:
        raise pytest.UsageError(f"{option} must be between 0% and 1000%, got {value!r}")
    return percent / 100
