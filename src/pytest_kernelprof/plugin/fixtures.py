"""The pytest fixtures.

What they use is imported when a fixture is first requested: pytest imports this module
with the plugin in every session, and one that never profiles must not pay for the
profile model (nor for torch)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from ..options import DEFAULT_ROUNDS, DEFAULT_WARMUP, ProfileOptions, check_calls
from .settings import SETTINGS_KEY, Settings

if TYPE_CHECKING:
    from ..api.captures import Capture
    from ..api.profiler import Profiler
    from ..checks.baseline import BaselineNote, KernelBaseline
    from ..checks.rules import Rule
    from ..model import KernelProfile

# The fixtures of the plugin; a test that requests one of them uses the plugin.
FIXTURES = frozenset(("kernelprof", "kernel_baseline", "kernel_benchmark"))


class _Captures(Protocol):
    captures: list[Capture]


# The test's profilers, and what holds the traces it read with load_trace (running.Loaded): the
# captures of each go into the test's reports. The books open it for the test's protocol (books.py).
PROFILERS_KEY: pytest.StashKey[list[_Captures]] = pytest.StashKey()


@pytest.fixture
def kernelprof(request: pytest.FixtureRequest) -> Profiler:
    """Profile a callable: ``prof = kernelprof(fn, *args, **kwargs)``.

    Warm-up and profiled call counts come from ``--kernelprof-warmup`` and
    ``--kernelprof-calls``, module ranges from ``--kernelprof-modules``;
    ``kernelprof.profile(fn, args, kwargs, warmup=..., calls=..., modules=...)`` overrides them
    for one call, ``with kernelprof.record() as rec`` profiles a block.
    ``--kernelprof-stacks`` turns on ``stacks=True`` for every profile of the run.
    ``kernelprof.load_trace(path)`` reads a recorded trace under the same rules and reports.
    """
    from ..api.profiler import Profiler

    settings = request.config.stash.get(SETTINGS_KEY, Settings())
    options = ProfileOptions(
        warmup=settings.warmup,
        calls=settings.calls,
        forbid=active_rules(request.node, settings),
        stacks=settings.stacks,
        modules=settings.modules,
        decoder=settings.decoder,  # the ini's kernelprof_kernels; None: the built-in decoder
    )
    profiler = Profiler.from_options(options)
    held = request.node.stash.setdefault(PROFILERS_KEY, [])
    if not any(holder is profiler for holder in held):  # a profiler made in a test joins it by itself
        held.append(profiler)
    return profiler


def active_rules(node: pytest.Item | pytest.Collector, settings: Settings) -> tuple[Rule, ...]:
    """The ini's kernelprof_forbid rules less those the test's ``kernelprof_allow`` markers name."""
    # Names only: a marker given a list is refused, with what to write, where markers are
    # checked (the test's setup); here, run as the test opens, it must not raise first.
    allowed = {name for mark in node.iter_markers("kernelprof_allow") for name in mark.args if isinstance(name, str)}
    return tuple(rule for rule in settings.forbid if rule.name not in allowed)


# What a test's baselines did, for its report's record (plugin/books.py).
BASELINE_NOTES_KEY: pytest.StashKey[list[BaselineNote]] = pytest.StashKey()


@pytest.fixture
def kernel_baseline(request: pytest.FixtureRequest) -> KernelBaseline:
    """Compare a KernelProfile with its stored signature: ``kernel_baseline.check(prof)``."""
    from ..checks.baseline import KernelBaseline, baseline_paths
    from ..reports.summary import relative_paths

    settings = request.config.stash.get(SETTINGS_KEY, Settings())
    path, legacy = baseline_paths(request.node.path, request.node.nodeid)
    notes = request.node.stash.setdefault(BASELINE_NOTES_KEY, [])
    return KernelBaseline(
        path,
        request.node.nodeid,
        update=settings.update,
        names=settings.names,
        notes=notes,
        legacy_path=legacy,
        memory_tolerance=settings.memory_tolerance,
        command_id=from_here(request.config.rootpath, request.node.nodeid, request.config.invocation_params.dir),
        shown=lambda path: relative_paths(str(path), request.config.rootpath),
    )


def from_here(rootpath: Path, nodeid: str, here: Path) -> str:
    """``nodeid`` as a command run in ``here``, the folder pytest was started in, names the test:
    pytest's node ids are relative to the rootdir, and one run from ``rootdir/tests`` names
    ``test_b.py::test_x``. As the trace paths a failure prints (``report_sections.command_path``):
    a test that changes the working folder does not move them."""
    from ..paths import relative_or_whole  # loading the plugin imports no more than it needs

    file, separator, rest = nodeid.partition("::")
    relative = relative_or_whole(str(rootpath / file), here)
    return f"{Path(relative).as_posix()}{separator}{rest}"


class KernelBenchmark:
    """``kernel_benchmark(fn, *args, **kwargs)``: pytest-benchmark rounds of GPU kernel time.

    ``kernel_benchmark.profile(fn, args, kwargs, rounds=20, warmup=2, end_to_end=False)`` is
    the explicit form; ``kernel_benchmark.from_profile(prof)`` reports a recorded profile.
    """

    def __init__(self, benchmark: object, forbid: tuple[Rule, ...] = ()) -> None:
        self._benchmark = benchmark
        self._forbid = forbid

    def __call__(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> KernelProfile:
        return self.profile(fn, args, kwargs)

    def profile(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: Mapping[str, Any] | None = None,
        *,
        rounds: int = DEFAULT_ROUNDS,
        warmup: int = DEFAULT_WARMUP,
        end_to_end: bool = False,
    ) -> KernelProfile:
        from .benchmark import benchmark_callable

        # Rounds are the profiled calls, and are bounded by name; they may differ in their kernels.
        calls = check_calls("rounds", rounds)
        options = ProfileOptions(warmup=warmup, calls=calls, allow_variation=True, forbid=self._forbid)
        return benchmark_callable(self._benchmark, fn, args, kwargs or {}, options, end_to_end=end_to_end)

    def from_profile(self, prof: KernelProfile) -> KernelProfile:
        from .benchmark import benchmark_profile

        return benchmark_profile(self._benchmark, prof)


@pytest.fixture
def kernel_benchmark(request: pytest.FixtureRequest) -> KernelBenchmark:
    """Benchmark a callable by the GPU time of its kernels (needs pytest-benchmark)."""
    try:
        benchmark = request.getfixturevalue("benchmark")
    except pytest.FixtureLookupError:
        pytest.fail(
            "kernel_benchmark needs pytest-benchmark: pip install pytest-benchmark "
            "(or it was disabled with -p no:benchmark)",
            pytrace=False,
        )
    settings = request.config.stash.get(SETTINGS_KEY, Settings())
    return KernelBenchmark(benchmark, active_rules(request.node, settings))
