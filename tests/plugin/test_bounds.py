"""Warm-up and profiled calls are bounded wherever they are given (option, ini value, argument),
with an error that names where; ini errors name the ini key."""

from __future__ import annotations

import pytest

from pytest_kernelprof.api import Profiler
from pytest_kernelprof.plugin.fixtures import KernelBenchmark
from pytest_kernelprof.plugin.settings import SETTINGS_KEY, Settings

HUGE = str(10**20)


def _settings(pytester: pytest.Pytester, *args: str, ini: tuple[str, ...] = ()) -> Settings:
    if ini:
        pytester.makeini("\n".join(("[pytest]", *ini)))
    return pytester.parseconfigure(*args).stash[SETTINGS_KEY]


@pytest.mark.parametrize(
    ("args", "ini", "message"),
    [
        (["--kernelprof-calls", HUGE], (), f"--kernelprof-calls must be at most 1000, got {HUGE}"),
        (["--kernelprof-warmup", "1001"], (), "--kernelprof-warmup must be at most 1000, got 1001"),
        ([], (f"kernelprof_calls = {HUGE}",), f"ini option kernelprof_calls must be at most 1000, got {HUGE}"),
        ([], ("kernelprof_warmup = 5000",), "ini option kernelprof_warmup must be at most 1000, got 5000"),
    ],
)
def test_too_many_calls_are_a_usage_error(
    pytester: pytest.Pytester, args: list[str], ini: tuple[str, ...], message: str
) -> None:
    with pytest.raises(pytest.UsageError, match=f"^{message}: every profiled call"):
        _settings(pytester, *args, ini=ini)


def test_the_bound_itself_is_taken(pytester: pytest.Pytester) -> None:
    settings = _settings(pytester, "--kernelprof-calls", "1000", ini=("kernelprof_warmup = 1000",))
    assert (settings.warmup, settings.calls) == (1000, 1000)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"calls": 10**20}, f"calls must be at most 1000, got {10**20}"),
        ({"warmup": 1001}, "warmup must be at most 1000, got 1001"),
    ],
)
def test_too_many_calls_as_arguments_fail_before_any_call(kwargs: dict[str, int], message: str) -> None:
    called = []
    with pytest.raises(ValueError, match=f"^{message}: every profiled call"):
        Profiler().profile(called.append, (1,), **kwargs)
    with pytest.raises(ValueError, match=f"^{message}: every profiled call"):
        Profiler(**kwargs)(called.append, 1)
    assert called == []


def test_too_many_benchmark_rounds_name_the_rounds() -> None:
    called = []
    with pytest.raises(ValueError, match="^rounds must be at most 1000, got 5000: every profiled call"):
        KernelBenchmark(object()).profile(called.append, (1,), rounds=5000)
    assert called == []


def test_a_runaway_count_ends_the_run_at_once(pytester: pytest.Pytester) -> None:
    """A usage error on stderr before any test runs (this one would call print 10**20 times)."""
    pytester.makepyfile(test_x="def test_x(kernelprof):\n    kernelprof(print, 1)\n")
    result = pytester.runpytest_subprocess("--kernelprof-calls", HUGE)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --kernelprof-calls must be at most 1000, got {HUGE}: *"])


def test_a_bad_ini_tolerance_names_the_ini_key(pytester: pytest.Pytester) -> None:
    with pytest.raises(pytest.UsageError, match="^ini option kernelprof_memory_tolerance takes a percentage"):
        _settings(pytester, ini=("kernelprof_memory_tolerance = lots",))


def test_a_bad_option_tolerance_names_the_option(pytester: pytest.Pytester) -> None:
    with pytest.raises(pytest.UsageError, match="^--kernelprof-memory-tolerance takes a percentage"):
        _settings(pytester, "--kernelprof-memory-tolerance", "lots")
