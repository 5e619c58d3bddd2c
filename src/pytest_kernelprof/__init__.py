"""pytest-kernelprof: assert what a PyTorch program does on the GPU."""

from __future__ import annotations

from .api import Profiler, load_trace, profile
from .capture import Capture, Recording
from .distributed import profile_ranks
from .errors import (
    BaselineError,
    BenchmarkError,
    CannotTellError,
    ForbiddenError,
    GpuSpecError,
    IncompleteProfileError,
    KernelProfError,
    KernelSequenceMismatchError,
    NoDeviceActivityError,
    OpNotFoundError,
    ProfilerBusyError,
    ProfilerStartError,
    RankError,
    RecordingError,
    TraceError,
)
from .health import CompileReport, GraphBreak, MemoryReading, MemoryReport
from .model import (
    CallProfile,
    CopyList,
    Count,
    Kernel,
    KernelList,
    KernelProfile,
    MemoryOp,
    Op,
    OpTable,
    Overlap,
    Sync,
    SyncList,
)
from .names import KINDS, KernelName, parse_kernel_name

__all__ = [
    "KINDS",
    "BaselineError",
    "BenchmarkError",
    "GpuSpecError",
    "CallProfile",
    "CannotTellError",
    "Capture",
    "CompileReport",
    "CopyList",
    "Count",
    "ForbiddenError",
    "GraphBreak",
    "IncompleteProfileError",
    "Kernel",
    "KernelList",
    "KernelName",
    "KernelProfError",
    "KernelProfile",
    "KernelSequenceMismatchError",
    "MemoryOp",
    "MemoryReading",
    "MemoryReport",
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
    "Sync",
    "SyncList",
    "TraceError",
    "load_trace",
    "parse_kernel_name",
    "profile",
    "profile_ranks",
]
