"""The profiling options: their defaults and bounds (what ``pytest --help`` shows), and
``ProfileOptions``, the one value that carries them from an entry point down to the capture.

A leaf (the standard library and ``errors`` only), so that loading the plugin imports none of
the modules that use these values.

How the options travel: each entry point builds one ``ProfileOptions``, validated once, and
passes that object down. ``Profiler(...)`` builds it at construction, ``Profiler.profile`` and
``Profiler.record`` make a ``replace`` of the profiler's for their call, ``kernel_benchmark.profile``
and ``profile_ranks`` build one from their arguments, and the ``kernelprof`` fixture builds one from
the run's settings. The internal functions (``capture_profile``, ``build_capture``,
``capture_callable``, ``record_block``, ``benchmark_callable``, the rank worker) take ``options``
and declare no option of their own.

The public entry points keep explicit keyword arguments, and only there, one layer per entry
point; they do not forward ``**overrides``. Each takes a different subset of the options
(``record`` takes no counts, ``profile_ranks`` takes only the counts, ``kernel_benchmark`` calls
its profiled calls ``rounds``), ``None`` there means "the profiler's setting", and an explicit
signature is what ``help()``, editors and the API reference show.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from typing import Any

DEFAULT_WARMUP = 2  # unprofiled calls before profiling: enough for torch.compile and autotuning
DEFAULT_CALLS = 3  # profiled calls: their kernel sequences compared with the first; figures from the fastest call
DEFAULT_ROUNDS = 20  # kernel_benchmark rounds
# The most warm-up calls, and the most profiled calls (or benchmark rounds), one profile takes,
# however given. Every profiled call's events stay in memory until the test ends, and a
# thousand calls of even a small step is minutes of profiling: a larger number is a typo
# (calls=10**20 once ran until it had filled the memory).
MAX_CALLS = 1000
# Why the bound, for the errors that enforce it.
MAX_CALLS_WHY = "every profiled call is held in memory until the test ends, and a thousand calls take minutes"
NAME_MODES = ("stable", "exact", "loose")  # which kernel names baselines compare
DEFAULT_MEMORY_TOLERANCE = 0.05  # relative slack of baseline metrics such as peak_bytes


@dataclass(frozen=True, kw_only=True)
class ProfileOptions:
    """How to profile: ``warmup`` unprofiled calls, then ``calls`` profiled ones (``no_grad``: under
    ``torch.no_grad()``); ``allow_variation``: calls may launch different kernels; ``stacks``:
    record Python stacks; ``modules``: True (the modules of the profiled nn.Module), False, or the
    nn.Module whose module calls to record; ``decoder``: what decodes the kernels; ``forbid``: the
    rules every profile is checked against; ``keep_traces``: keep each profile's trace as its
    session ends, for an export after later profiles (``capture/session_traces.py``).

    ``decoder`` and ``forbid`` hold ``decode.Decoder`` and ``checks.rules.Rule`` values and
    ``modules`` an ``nn.Module``: a leaf cannot name those types, so they are typed loosely here;
    the entry points that take them type them. ``decoder=None`` is the built-in decoder.
    """

    warmup: int = DEFAULT_WARMUP
    calls: int = DEFAULT_CALLS
    no_grad: bool = False
    allow_variation: bool = False
    stacks: bool = False
    modules: Any = False
    decoder: Any = None
    forbid: tuple[Any, ...] = ()
    keep_traces: bool = False

    def __post_init__(self) -> None:
        # In the order the checks ran before there was one place for them.
        if self.decoder is not None and not _instance_of(self.decoder, "pytest_kernelprof.decode", "Decoder"):
            raise TypeError(
                f"decoder must be a pytest_kernelprof.types.Decoder or None, got {type(self.decoder).__name__}"
            )
        check_calls("warmup", self.warmup)
        check_calls("calls", self.calls)
        if not isinstance(self.modules, bool) and not _instance_of(self.modules, "torch.nn", "Module"):
            raise TypeError(f"modules= takes True, False or an nn.Module, got {type(self.modules).__name__}")
        if isinstance(self.warmup, bool) or not isinstance(self.warmup, int) or self.warmup < 0:
            raise ValueError(f"warmup must be an int >= 0, got {self.warmup!r}")
        if isinstance(self.calls, bool) or not isinstance(self.calls, int) or self.calls < 1:
            raise ValueError(f"calls must be an int >= 1, got {self.calls!r}")
        object.__setattr__(self, "forbid", tuple(self.forbid))  # any sequence of rules; held as a tuple

    def replace(self, **changes: Any) -> ProfileOptions:
        """These options with ``changes`` (a call's own settings), validated like new ones."""
        return dataclasses.replace(self, **changes)


def check_calls(name: str, value: int) -> int:
    """``value``, a count of calls passed as ``name``, if it is at most ``MAX_CALLS``; the type
    and the lower bound are ``ProfileOptions``'s to check."""
    if isinstance(value, int) and value > MAX_CALLS:
        raise ValueError(f"{name} must be at most {MAX_CALLS}, got {value}: {MAX_CALLS_WHY}")
    return value


def _instance_of(value: object, module: str, name: str) -> bool:
    """``isinstance(value, module.name)`` without importing ``module`` (torch, or a stage above
    this leaf): nothing can be an instance of a class whose module was never imported."""
    cls = getattr(sys.modules.get(module), name, None)
    return isinstance(cls, type) and isinstance(value, cls)


DEFAULTS = ProfileOptions()  # the default of the internal functions' ``options``
