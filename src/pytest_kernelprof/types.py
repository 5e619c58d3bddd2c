"""The value types of pytest-kernelprof: what a profile hands out, for annotating and constructing.

A test rarely imports these to use them (``prof.kernels`` is already a :class:`KernelList`);
it imports them to annotate a helper (``def gemms(kernels: KernelList) -> KernelList``) or the
``kernel_baseline`` fixture's value (:class:`KernelBaseline`), to build a value itself
(``Decoder().teach(...)``, ``parse_kernel_name(name)``) or to check a kind against :data:`KINDS`.
What a test calls or catches is at the top level of the package (``Profiler``, ``load_trace``,
``KernelProfile``, the errors).

Importing this module loads the profile model (no torch): the plugin never imports it, so a
session that does not profile does not pay for it (``tests/plugin/test_cost.py``).
"""

from __future__ import annotations

from .checks.baseline import KernelBaseline
from .checks.sweep import SweepCase
from .decode import KINDS, Decoder, Evidence, KernelName, parse_kernel_name
from .health import CompileReport, GraphBreak, MemoryReading, MemoryReport
from .model import (
    CallProfile,
    CopyList,
    Count,
    Kernel,
    KernelCount,
    KernelList,
    MemoryOp,
    ModuleTable,
    ModuleView,
    Op,
    OpTable,
    OpTreeNode,
    Overlap,
    RuntimeCalls,
    Sync,
    SyncList,
)

__all__ = [
    "KINDS",
    "CallProfile",
    "CompileReport",
    "CopyList",
    "Count",
    "Decoder",
    "Evidence",
    "GraphBreak",
    "Kernel",
    "KernelBaseline",
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
    "OpTreeNode",
    "Overlap",
    "RuntimeCalls",
    "SweepCase",
    "Sync",
    "SyncList",
    "parse_kernel_name",
]
