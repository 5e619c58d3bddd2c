"""The profile as frozen values and the queries on them: what a test asserts on.

The builder (``build``) makes them; nothing here knows how, and a value holds no state of
the builder beyond the explicit ``Kernel.chains``, which resolves ``Kernel.ops``.
"""

from __future__ import annotations

from .counts import KernelCount
from .gpu_time import Overlap, overlap_of
from .kernel_matching import Pattern
from .kernel_text import kernel_table
from .kernels import Kernel, KernelList, MemoryOp, OpChains
from .measured import needs_measurement
from .ops import ModuleTable, ModuleView, Op, OpLoader, OpTable, OpTreeLoader, OpTreeNode
from .profiles import CallProfile, KernelProfile
from .query_args import KernelDtype
from .records import (
    CopyList,
    Count,
    RuntimeCalls,
    Sync,
    SyncList,
    copy_fixes,
    copy_table,
    sync_fixes,
    sync_table,
)

__all__ = [
    "CallProfile",
    "CopyList",
    "Count",
    "Kernel",
    "KernelCount",
    "KernelDtype",
    "KernelList",
    "KernelProfile",
    "MemoryOp",
    "ModuleTable",
    "ModuleView",
    "Op",
    "OpChains",
    "OpLoader",
    "OpTable",
    "OpTreeLoader",
    "OpTreeNode",
    "Overlap",
    "Pattern",
    "RuntimeCalls",
    "Sync",
    "SyncList",
    "copy_fixes",
    "copy_table",
    "kernel_table",
    "needs_measurement",
    "overlap_of",
    "sync_fixes",
    "sync_table",
]
