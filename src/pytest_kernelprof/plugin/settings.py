"""The plugin's options and ini keys, and the settings read from them: each value validated
(a UsageError names the setting), kept on ``config.stash`` for the session."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..options import DEFAULT_CALLS, DEFAULT_MEMORY_TOLERANCE, DEFAULT_WARMUP, MAX_CALLS, MAX_CALLS_WHY, NAME_MODES

if TYPE_CHECKING:
    from ..checks.rules import Rule
    from ..decode import Decoder


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


def run_was_narrowed(config: pytest.Config) -> bool:
    """Whether the run collected only part of some test modules (node ids, --lf), so that a
    baseline file no collected test names may belong to a test left uncollected. Tests
    collected and then left out (-k, -m, --deselect, a conftest) do not narrow it: their node
    ids are known, and their files are kept (plugin/books.py)."""
    return bool(getattr(config.option, "lf", False) or any("::" in arg for arg in config.args))


def ini_value(config: pytest.Config, key: str) -> Any:
    """``config.getini(key)``, with a bad value reported as a UsageError that names the key
    (pytest's own message for a bad boolean names only the value)."""
    try:
        return config.getini(key)
    except (ValueError, pytest.UsageError) as exc:  # pytest 9 raises the latter itself
        accepted = "; it takes true or false (or yes/no, on/off, 1/0)" if "truth value" in str(exc) else ""
        raise pytest.UsageError(f"ini option {key}: {exc}{accepted}") from None


# pytest cuts an assertion explanation short unless run with -vv (the assertion verbosity) or
# on CI, and has no public way to ask whether it will: its rule lives
# in the private _pytest.assertion.truncate. So it is mirrored here, and tests/plugin/
# test_truncation.py holds it to the installed pytest at the limits. pytest keeps an explanation
# whole up to its footer's worth over each limit (2 lines; "..." and its message, 46 characters,
# in pytest 9; 70 in pytest 8, where 46 is the safe side: a body moved to a report section that
# pytest would have shown whole loses nothing). On CI means $CI or $BUILD_NUMBER non-empty, as
# in pytest 9 (pytest 8 also takes one set empty: again the safe side). The truncation_limit_*
# ini options came in pytest 8.4; before, the defaults.
TRUNCATION_SLACK_LINES = 2
TRUNCATION_SLACK_CHARS = len("...") + len("...Full output truncated, use '-vv' to show")


def assertion_budget(config: pytest.Config) -> tuple[int, int]:
    """The most lines and characters of an assertion explanation pytest shows whole (0: no
    limit): none at -vv or on CI, else its truncation_limit_* ini options and their slack."""
    if config.get_verbosity(pytest.Config.VERBOSITY_ASSERTIONS) >= 2 or any(
        os.environ.get(var) for var in ("CI", "BUILD_NUMBER")
    ):
        return 0, 0
    lines = _ini_int(config, "truncation_limit_lines", 8)
    chars = _ini_int(config, "truncation_limit_chars", 640)
    return (lines + TRUNCATION_SLACK_LINES if lines > 0 else 0, chars + TRUNCATION_SLACK_CHARS if chars > 0 else 0)


def _ini_int(config: pytest.Config, key: str, default: int) -> int:
    try:
        value = config.getini(key)  # ini options of pytest 8.4 and newer; older ones cut at the defaults
    except ValueError:
        return default
    try:
        return default if value in (None, "") else _ascii_int(value)
    except (TypeError, ValueError):
        return default


def _ascii_int(value: str | int) -> int:
    """``int()`` of ASCII digits only: ``int("٣")`` is 3, which no one typed as a number."""
    if isinstance(value, str) and not value.isascii():
        raise ValueError(f"not an ASCII integer: {value!r}")
    return int(value)


def parse_count(option: str, value: str | int, minimum: int) -> int:
    """A count of calls (warm-up or profiled) from an option or ini value, or a UsageError
    that names the option and the bound (at most ``MAX_CALLS``)."""
    try:
        number = _ascii_int(value)
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
    from ..checks.rules import parse_rules

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
    from ..decode import BUILT_IN
    from ..errors import TeachingError

    try:
        return BUILT_IN.teach_lines(lines, "ini option kernelprof_kernels")
    except TeachingError as exc:
        raise pytest.UsageError(str(exc)) from None


_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def parse_percent(option: str, value: str) -> float:
    """A percentage ("5%" or "5") as a fraction, or a UsageError that names the option."""
    text = str(value).strip().removesuffix("%").strip()
    # Plain decimal digits only: float() also reads "٥" (an Arabic-Indic 5), "1_0" (10), "1e1" and "nan".
    if not _DECIMAL.fullmatch(text):
        raise pytest.UsageError(f"{option} takes a percentage such as 5%, got {value!r}")
    percent = float(text)
    if not 0 <= percent <= 1000:
        raise pytest.UsageError(f"{option} must be between 0% and 1000%, got {value!r}")
    return percent / 100


def add_options(parser: pytest.Parser) -> None:
    """The plugin's command-line options and ini keys (``pytest_addoption``)."""
    group = parser.getgroup("kernelprof", "GPU kernel assertions (pytest-kernelprof)")
    group.addoption(
        "--kernelprof-require-gpu",
        action="store_true",
        dest="kernelprof_require_gpu",
        default=None,
        help="Report gpu-marked tests where CUDA is missing as setup errors (the run fails) instead of skipping "
        "them; default: off",
    )
    group.addoption(
        "--kernelprof-warmup",
        action="store",
        dest="kernelprof_warmup",
        default=None,
        metavar="N",
        help=f"Unprofiled warm-up calls before profiling (compile, autotune); default: {DEFAULT_WARMUP}",
    )
    group.addoption(
        "--kernelprof-calls",
        action="store",
        dest="kernelprof_calls",
        default=None,
        metavar="N",
        help="Profiled calls per kernelprof(fn) call: their kernel sequences must match the first call's; "
        "launches, host span, busy and idle time are the fastest call's by host span (prof.fastest_call), a "
        f"kernel's time its median over the calls; default: {DEFAULT_CALLS}",
    )
    group.addoption(
        "--kernelprof-modules",
        action="store_true",
        dest="kernelprof_modules",
        default=None,
        help="Record which nn.Module launched each kernel (a range per module call) when the profiled "
        "callable is an nn.Module; default: off",
    )
    group.addoption(
        "--kernelprof-trace-dir",
        action="store",
        dest="kernelprof_trace_dir",
        default=None,
        metavar="DIR",
        help=(
            "Write a gzipped Chrome trace per profiled test into DIR (which tests: --kernelprof-save), "
            "and an .html timeline page beside each failing test's trace; default: none"
        ),
    )
    group.addoption(
        "--kernelprof-save",
        action="store",
        dest="kernelprof_save",
        default=None,
        choices=SAVE_CHOICES,
        help="Which tests' traces to write: failed, all or none; default: failed once --kernelprof-trace-dir is set",
    )
    group.addoption(
        "--kernelprof-update",
        action="store_true",
        dest="kernelprof_update",
        default=False,
        help="Write or rewrite the kernel baselines of the tests that run, instead of comparing; default: off",
    )
    group.addoption(
        "--kernelprof-prune",
        action="store_true",
        dest="kernelprof_prune",
        default=False,
        help="Delete the unused baseline entries and files the run reports, when it passed and was not narrowed "
        "to node ids or --lf (the baselines of tests left out by -k, -m or a conftest are kept); default: off",
    )
    group.addoption(
        "--kernelprof-baseline-names",
        action="store",
        dest="kernelprof_baseline_names",
        default=None,
        choices=NAME_MODES,
        help="Kernel names compared with baselines: stable (Inductor and user kernels), exact or loose; "
        "default: stable",
    )
    group.addoption(
        "--kernelprof-gpus",
        action="store",
        dest="kernelprof_gpus",
        default=None,
        metavar="SPEC",
        help="Under pytest -n, one GPU per worker: auto, a count N, or indices such as 0,2,5 into the "
        "visible GPUs; default: off",
    )
    group.addoption(
        "--kernelprof-stacks",
        action="store_true",
        dest="kernelprof_stacks",
        default=None,
        help="Record Python stacks in every profile, so that syncs and kernels name the user's code "
        "(costs host time); default: off",
    )
    group.addoption(
        "--kernelprof-memory-tolerance",
        action="store",
        dest="kernelprof_memory_tolerance",
        default=None,
        metavar="PERCENT",
        help="How far a baseline's peak_bytes may grow before it fails (and shrink before it counts as "
        # argparse %-formats help text: a literal percent sign must be doubled.
        f"better); default: {DEFAULT_MEMORY_TOLERANCE:.0%}".replace("%", "%%"),
    )
    group.addoption(
        "--kernelprof-summary",
        action="store",
        dest="kernelprof_summary",
        default=None,
        metavar="PATH",
        help="Write a Markdown summary (failed profiles, baselines, undecoded kernels) to PATH at the end of every "
        "run (a line saying so where no profile failed); it is appended to $GITHUB_STEP_SUMMARY where that is set, "
        "without this option too, where it has something to say; none: neither",
    )
    group.addoption(
        "--kernelprof-annotations",
        action="store",
        dest="kernelprof_annotations",
        default="auto",
        choices=("auto", "on", "off"),
        help="Write GitHub '::error file=,line=::' annotations for failures on profiles (rule breaks, "
        "baseline regressions, host syncs, kernel assertions ...), the ten worst; "
        "default: auto (on where GITHUB_ACTIONS=true)",
    )
    group.addoption(
        "--kernelprof-strict-decode",
        action="store_true",
        dest="kernelprof_strict_decode",
        default=None,
        help="Fail a test whose kind or dtype question (count(kind=...), a kernelprof_forbid rule, a baseline) "
        "kernels of unknown kind or dtype could answer otherwise, instead of warning; default: off",
    )
    parser.addini("kernelprof_baseline_names", "Same as --kernelprof-baseline-names", default="stable")
    parser.addini("kernelprof_strict_decode", "Same as --kernelprof-strict-decode", type="bool", default=False)
    parser.addini(
        "kernelprof_kernels",
        "What kernels are, for names the decoder cannot place, one a line: 'GLOB: field=value ...' with kind, "
        "family, dtype, layout, part_of (docs: How kernels are decoded); default: none",
        type="linelist",
        default=[],
    )
    parser.addini("kernelprof_stacks", "Same as --kernelprof-stacks", type="bool", default=False)
    _add_number_ini(
        parser,
        "kernelprof_memory_tolerance",
        "Same as --kernelprof-memory-tolerance",
        f"{DEFAULT_MEMORY_TOLERANCE:.0%}",
        fraction=True,
    )
    parser.addini("kernelprof_require_gpu", "Same as --kernelprof-require-gpu", type="bool", default=False)
    _add_number_ini(parser, "kernelprof_warmup", "Same as --kernelprof-warmup", str(DEFAULT_WARMUP))
    _add_number_ini(parser, "kernelprof_calls", "Same as --kernelprof-calls", str(DEFAULT_CALLS))
    parser.addini(
        "kernelprof_forbid",
        "Rules every profile of the suite must satisfy, one a line: 'NAME: CONDITION ... | REASON' "
        '(the docs\' page "Suite-wide rules", docs/rules.md); default: none',
        type="linelist",
        default=[],
    )
    parser.addini("kernelprof_modules", "Same as --kernelprof-modules", type="bool", default=False)


def _add_number_ini(parser: pytest.Parser, name: str, help: str, default: str, *, fraction: bool = False) -> None:
    """An ini key whose value is a number: text in an ini file ("3", "5%"), and in a native
    ``[tool.pytest]`` table (pytest 9) a TOML number too, which a key of strings refuses
    ("expects a string, got int: 3"). pytest 9.2 takes a union of types; an older one refuses
    it at registration (an assert in pytest 8), and there the key takes text, as it always did.
    A count takes no float: 3.5 calls is refused, not cut to 3."""
    try:
        parser.addini(name, help, type=str | int | float if fraction else str | int, default=default)
    except (AssertionError, TypeError, ValueError):
        parser.addini(name, help, default=default)


def setting(config: pytest.Config, name: str) -> Any:
    """An option's value where it was given on the command line, else its ini value."""
    value = config.getoption(name)
    return ini_value(config, name) if value is None else value


def reports_asked(config: pytest.Config) -> bool:
    """Whether a CI output is asked for: a job summary, annotations, JUnit XML or timeline pages."""
    summary = config.getoption("kernelprof_summary")
    annotations = config.getoption("kernelprof_annotations")
    return bool(
        (summary != "none" and (summary or os.environ.get("GITHUB_STEP_SUMMARY")))
        or annotations == "on"
        or (annotations == "auto" and os.environ.get("GITHUB_ACTIONS") == "true")
        or getattr(config.option, "xmlpath", None)
        or config.getoption("kernelprof_trace_dir") is not None
    )


def read_settings(config: pytest.Config) -> Settings:
    """The session's settings from its options and ini file, each checked (a UsageError names
    the setting that is wrong)."""
    trace_dir = config.getoption("kernelprof_trace_dir")
    if trace_dir == "":  # the working directory, where the traces and pages would mix with the project's files
        raise pytest.UsageError("--kernelprof-trace-dir takes a directory, got an empty value: name one, e.g. traces")
    trace_path = None if trace_dir is None else config.invocation_params.dir / trace_dir
    decoder = parse_kernels(config.getini("kernelprof_kernels"))
    strict_decode = bool(setting(config, "kernelprof_strict_decode"))
    return Settings(
        warmup=parse_count(setting_name(config, "kernelprof_warmup"), setting(config, "kernelprof_warmup"), 0),
        calls=parse_count(setting_name(config, "kernelprof_calls"), setting(config, "kernelprof_calls"), 1),
        require_gpu=bool(setting(config, "kernelprof_require_gpu")),
        modules=bool(setting(config, "kernelprof_modules")),
        trace_dir=trace_path,
        save=parse_save(config.getoption("kernelprof_save"), trace_path),
        update=bool(config.getoption("kernelprof_update")),
        names=parse_names(
            setting(config, "kernelprof_baseline_names"), setting_name(config, "kernelprof_baseline_names")
        ),
        forbid=parse_forbid(config.getini("kernelprof_forbid"), decoder),
        decoder=decoder,
        strict_decode=strict_decode,
        stacks=bool(setting(config, "kernelprof_stacks")),
        memory_tolerance=parse_percent(
            setting_name(config, "kernelprof_memory_tolerance"), setting(config, "kernelprof_memory_tolerance")
        ),
    )
