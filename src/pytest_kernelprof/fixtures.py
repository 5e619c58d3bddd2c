"""The pytest fixtures."""

from __future__ import annotations

import pytest

from .api import Profiler
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
