"""The pytest fixtures."""

from __future__ import annotations

import pytest

from .api import Profiler
from .baseline import KernelBaseline
from .paths import baseline_file_name
from .settings import SETTINGS_KEY, Settings

PROFILERS_KEY = pytest.StashKey[list[Profiler]]()


@pytest.fixture
def kernelprof(request: pytest.FixtureRequest) -> Profiler:
    """Profile a callable: ``prof = kernelprof(fn, *args, **kwargs)``.

    Warm-up and profiled call counts come from ``--kernelprof-warmup`` and
    ``--kernelprof-calls``; ``kernelprof.profile(fn, args, kwargs, warmup=..., calls=...)``
    overrides them for one call, ``with kernelprof.record() as rec`` profiles a block.
    """
    settings = request.config.stash.get(SETTINGS_KEY, Settings())
    profiler = Profiler(warmup=settings.warmup, calls=settings.calls)
    request.node.stash.setdefault(PROFILERS_KEY, []).append(profiler)
    return profiler


BASELINE_USE_KEY = pytest.StashKey[list[str]]()


@pytest.fixture
def kernel_baseline(request: pytest.FixtureRequest) -> KernelBaseline:
    """Compare a KernelProfile with its stored signature: ``kernel_baseline.check(prof)``."""
    settings = request.config.stash.get(SETTINGS_KEY, Settings())
    module = request.node.path
    path = module.parent / "__kernelprof__" / module.stem / baseline_file_name(request.node.name)
    used = request.node.stash.setdefault(BASELINE_USE_KEY, [])
    return KernelBaseline(path, request.node.nodeid, update=settings.update, names=settings.names, used=used)
