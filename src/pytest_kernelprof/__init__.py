"""pytest-kernelprof: assert what a PyTorch program does on the GPU.

The rule for what is public here: the top level holds what a test *calls or catches*, and the
handles those calls give back: the entry points (``Profiler``, ``profile``, ``load_trace``,
``load_sweep``, ``profile_ranks``), the handles a test holds from them (``Recording``, from
``kernelprof.record()``; ``Capture``, an entry of ``Profiler.captures``; ``ProfileSweep``, from
``kernelprof.sweep()``), the profile they
return (``KernelProfile``), and every exception class of ``errors.py``. Every other value a
profile hands out, the types a test annotates with or constructs (``Kernel``, ``KernelList``,
``Decoder``, ``KINDS``, ``parse_kernel_name``, ...), lives in :mod:`pytest_kernelprof.types`.
``__all__`` is exactly that top-level set (``tests/unit/test_package.py`` checks it).

Asked for here, a value type raises an ``ImportError`` that names its home
(``from pytest_kernelprof.types import Kernel``): no release ever exported them from the top level,
so there is no old spelling to keep working (it warned with a ``DeprecationWarning`` before 0.1.0,
which a trial read as a release that never was).

Names are imported on first use (PEP 562 ``__getattr__``), each from the module ``_HOMES``
names: pytest imports this package whenever it loads the plugin (``pytest_kernelprof.plugin``),
in every session of an environment where it is installed, and a session that never profiles
must not pay for the profile model. The imports below are for type checkers
(``tests/plugin/test_cost.py`` checks that they agree with ``_HOMES``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import Capture, Profiler, ProfileSweep, Recording, load_sweep, load_trace, profile, profile_ranks
    from .errors import (
        BaselineError,
        BaselineMismatchError,
        BaselineMissingError,
        BenchmarkError,
        CannotTellError,
        ForbiddenError,
        GpuSpecError,
        IncompleteProfileError,
        IncompleteProfileWarning,
        KernelMatchError,
        KernelProfError,
        KernelSequenceMismatchError,
        LateTeachingWarning,
        MissingHypothesisError,
        MissingTorchError,
        ModuleNotRecordedError,
        NoAnswerError,
        NoDeviceActivityError,
        OpNotFoundError,
        ProfilerBusyError,
        ProfilerStartError,
        QueryError,
        QueryTypeError,
        RankError,
        RecordingError,
        SweepError,
        TeachingError,
        TraceError,
        TraceNotKeptError,
        UncheckedProfileWarning,
        UndecodedKernelWarning,
        VariedProfileError,
    )
    from .model import KernelProfile

# Each public name and the module (under this package) that defines it.
_HOMES: dict[str, str] = {
    "Profiler": "api",
    "profile": "api",
    "load_trace": "api",
    "load_sweep": "api",
    "ProfileSweep": "api",
    "profile_ranks": "api",
    "Capture": "api",
    "Recording": "api",
    "KernelProfile": "model",
    "KernelProfError": "errors",
    "BaselineError": "errors",
    "BaselineMismatchError": "errors",
    "BaselineMissingError": "errors",
    "BenchmarkError": "errors",
    "CannotTellError": "errors",
    "ForbiddenError": "errors",
    "GpuSpecError": "errors",
    "IncompleteProfileError": "errors",
    "IncompleteProfileWarning": "errors",
    "KernelMatchError": "errors",
    "KernelSequenceMismatchError": "errors",
    "LateTeachingWarning": "errors",
    "MissingHypothesisError": "errors",
    "MissingTorchError": "errors",
    "ModuleNotRecordedError": "errors",
    "NoAnswerError": "errors",
    "NoDeviceActivityError": "errors",
    "OpNotFoundError": "errors",
    "ProfilerBusyError": "errors",
    "ProfilerStartError": "errors",
    "QueryError": "errors",
    "QueryTypeError": "errors",
    "RankError": "errors",
    "RecordingError": "errors",
    "SweepError": "errors",
    "TeachingError": "errors",
    "TraceError": "errors",
    "TraceNotKeptError": "errors",
    "UncheckedProfileWarning": "errors",
    "UndecodedKernelWarning": "errors",
    "VariedProfileError": "errors",
}

# The value types of ``pytest_kernelprof.types``, asked for here: an error that names their home.
_IN_TYPES = frozenset(
    {
        "KINDS",
        "CallProfile",
        "CompileReport",
        "CopyList",
        "Count",
        "Decoder",
        "Evidence",
        "GraphBreak",
        "Kernel",
        "KernelCount",
        "KernelList",
        "KernelName",
        "MemoryOp",
        "MemoryReading",
        "MemoryReport",
        "ModuleTable",
        "ModuleView",
        "Op",
        "OpTable",
        "Overlap",
        "RuntimeCalls",
        "Sync",
        "SyncList",
        "parse_kernel_name",
    }
)

__all__ = [
    "BaselineError",
    "BaselineMismatchError",
    "BaselineMissingError",
    "BenchmarkError",
    "CannotTellError",
    "Capture",
    "ForbiddenError",
    "GpuSpecError",
    "IncompleteProfileError",
    "IncompleteProfileWarning",
    "KernelMatchError",
    "KernelProfError",
    "KernelProfile",
    "KernelSequenceMismatchError",
    "LateTeachingWarning",
    "MissingHypothesisError",
    "MissingTorchError",
    "ModuleNotRecordedError",
    "NoAnswerError",
    "NoDeviceActivityError",
    "OpNotFoundError",
    "ProfileSweep",
    "Profiler",
    "ProfilerBusyError",
    "ProfilerStartError",
    "QueryError",
    "QueryTypeError",
    "RankError",
    "Recording",
    "RecordingError",
    "SweepError",
    "TeachingError",
    "TraceError",
    "TraceNotKeptError",
    "UncheckedProfileWarning",
    "UndecodedKernelWarning",
    "VariedProfileError",
    "load_sweep",
    "load_trace",
    "profile",
    "profile_ranks",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(importlib.import_module(f".{home}", __name__), name)
        globals()[name] = value  # later lookups skip __getattr__
        return value
    if name in _IN_TYPES:
        # An ImportError, not an AttributeError: `from pytest_kernelprof import Kernel` replaces an
        # AttributeError with its own "cannot import name", which would lose where the name is.
        raise ImportError(
            f"{name} is in pytest_kernelprof.types, not the top level (which holds what a test calls or "
            f"catches): from pytest_kernelprof.types import {name}",
            name=__name__,
        )
    if name == "types":  # `import pytest_kernelprof as kp; kp.types.Kernel` without importing the submodule
        return importlib.import_module(".types", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
