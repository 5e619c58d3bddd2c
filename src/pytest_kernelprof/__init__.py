"""pytest-kernelprof: assert what a PyTorch program does on the GPU.

The public names are imported on first use (PEP 562 ``__getattr__``): pytest imports this
package whenever it loads the plugin (``pytest_kernelprof.plugin``), in every session of an
environment where it is installed, and a session that never profiles must not pay for the
profile model. The imports below are for type checkers; at run time a name of ``__all__``
is looked up in ``_SOURCES``, in order (``tests/plugin/test_cost.py`` checks they agree).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import Profiler, load_trace, profile, profile_ranks
    from .capture import Capture, Recording
    from .decode import KINDS, Decoder, Evidence, KernelName, parse_kernel_name
    from .errors import (
        BaselineError,
        BaselineMismatchError,
        BenchmarkError,
        CannotTellError,
        ForbiddenError,
        GpuSpecError,
        IncompleteProfileError,
        KernelProfError,
        KernelSequenceMismatchError,
        ModuleNotRecordedError,
        NoDeviceActivityError,
        OpNotFoundError,
        ProfilerBusyError,
        ProfilerStartError,
        RankError,
        RecordingError,
        TeachingError,
        TraceError,
        UndecodedKernelWarning,
    )
    from .health import CompileReport, GraphBreak, MemoryReading, MemoryReport
    from .model import (
        CallProfile,
        CopyList,
        Count,
        Kernel,
        KernelCount,
        KernelList,
        KernelProfile,
        MemoryOp,
        ModuleTable,
        ModuleView,
        Op,
        OpTable,
        Overlap,
        RuntimeCalls,
        Sync,
        SyncList,
    )

_SOURCES = ("errors", "decode", "model", "health", "capture", "api")

__all__ = [
    "KINDS",
    "BaselineError",
    "BaselineMismatchError",
    "BenchmarkError",
    "GpuSpecError",
    "CallProfile",
    "CannotTellError",
    "Capture",
    "CompileReport",
    "CopyList",
    "Count",
    "Decoder",
    "Evidence",
    "ForbiddenError",
    "GraphBreak",
    "IncompleteProfileError",
    "Kernel",
    "KernelCount",
    "KernelList",
    "KernelName",
    "KernelProfError",
    "KernelProfile",
    "KernelSequenceMismatchError",
    "MemoryOp",
    "MemoryReading",
    "MemoryReport",
    "ModuleNotRecordedError",
    "ModuleTable",
    "ModuleView",
    "NoDeviceActivityError",
    "Op",
    "OpNotFoundError",
    "OpTable",
    "Overlap",
    "Profiler",
    "ProfilerBusyError",
    "ProfilerStartError",
    "RankError",
    "Recording",
    "RecordingError",
    "RuntimeCalls",
    "Sync",
    "SyncList",
    "TeachingError",
    "TraceError",
    "UndecodedKernelWarning",
    "load_trace",
    "parse_kernel_name",
    "profile",
    "profile_ranks",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        for source in _SOURCES:
            module = importlib.import_module(f".{source}", __name__)
            if hasattr(module, name):
                value = getattr(module, name)
                globals()[name] = value  # later lookups skip __getattr__
                return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
