"""What every event becomes: ``RawEvent``, its categories and factories, and ``Source``.

A live session (``kineto.py``) and a saved Chrome trace (``chrome.py``) are turned into the
same flat ``RawEvent`` records by one adapter each; the builder (``assemble/``) only ever sees
those, so the offline tests over recorded traces exercise the code that runs live.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..decode.triton_ir import IrFacts

# Kineto's activity types, which are also the Chrome trace categories; older Kineto
# versions wrote capitalised categories.
OP, ANNOTATION, PYTHON, RUNTIME, KERNEL, MEMCPY, MEMSET, IGNORED = (
    "op",
    "annotation",
    "python",
    "runtime",
    "kernel",
    "memcpy",
    "memset",
    "ignored",
)
CATEGORIES: Mapping[str, str] = {
    "cpu_op": OP,
    "operator": OP,
    "user_annotation": ANNOTATION,
    "python_function": PYTHON,  # recorded with with_stack=True
    "cuda_runtime": RUNTIME,
    "cuda_driver": RUNTIME,
    "runtime": RUNTIME,
    "driver": RUNTIME,
    "kernel": KERNEL,
    "gpu_memcpy": MEMCPY,
    "memcpy": MEMCPY,
    "gpu_memset": MEMSET,
    "memset": MEMSET,
}
GPU_CATEGORIES = frozenset((KERNEL, MEMCPY, MEMSET))
CPU_RANGES = frozenset((OP, ANNOTATION, PYTHON))
STEP_PREFIX = "ProfilerStep#"

# Runtime/driver calls that launch kernels: each must have at least one GPU record with
# its correlation id (a graph launch has many). Memcpy and memset calls are left out:
# some of them legitimately produce no GPU record.
KERNEL_LAUNCHES = frozenset(
    (
        "cudaLaunchKernel",
        "cudaLaunchKernelExC",
        "cudaLaunchCooperativeKernel",
        "cudaLaunchCooperativeKernelMultiDevice",
        "cuLaunchKernel",
        "cuLaunchKernelEx",
        "cuLaunchCooperativeKernel",
        "cudaGraphLaunch",
        "cuGraphLaunch",
    )
)
_LAUNCH_PREFIXES = ("cudaLaunchKernel", "cuLaunchKernel", "cudaGraphLaunch", "cuGraphLaunch")


def is_kernel_launch(name: str) -> bool:
    # Kineto appends the API version on some builds ("cudaLaunchKernel_v7000").
    return name in KERNEL_LAUNCHES or name.startswith(_LAUNCH_PREFIXES)


# What Kineto names a runtime call whose CUPTI callback id (``cbid``) its table of names lacks
# (one newer than the CUDA it was built with): the call is shown by its id instead, each id
# counted apart ("INVALID x12" read as an error and lumped different calls together).
UNNAMED_RUNTIME = "INVALID"


def unnamed_runtime_call(cbid: object) -> str:
    """The name shown for a runtime call Kineto recorded as ``INVALID``: ``unnamed (cbid 486)``;
    the CUDA version's callback table (``cupti_runtime_cbid.h``) names the id."""
    return f"unnamed (cbid {cbid})" if type(cbid) is int else "unnamed (no cbid recorded)"


def is_graph_launch(name: str) -> bool:
    return name.startswith(("cudaGraphLaunch", "cuGraphLaunch"))


Dim3 = tuple[int, int, int]


class RawEvent:
    """One profiler event, source-independent. Times in integer nanoseconds.

    CPU ops, annotations and Python frames carry ``thread`` and, ops and annotations, their
    own id ``ident``; runtime calls carry ``thread``, the CUPTI ``correlation`` id and
    ``linked``, the id of the CPU op that was running; GPU records (kernels, memcpys,
    memsets) carry ``stream``, ``correlation``, ``linked``, ``device`` and, where the source
    has them, ``grid`` and ``block`` (kernels) or ``nbytes`` (memory records). CPU ops carry
    ``input_types`` where the profile recorded shapes (a Chrome trace's ``Input type``): the
    decoder's last evidence for a kernel's dtype.
    Fields a kind of event does not have are 0 or None.

    Equal and hashed by identity (the builder keys dicts by event, not by ``id``: one call
    fewer per lookup). Construct with keywords. The adapters make the subclasses below
    instead (``cpu_event``, ``runtime_event``, ``typed_op_event``, positional: the hot loop
    of every trace, where a keyword call costs measurably more per event; ``gpu_event``,
    keywords: GPU records are the fewer; or inline in the Kineto loops). The fields of a
    RawEvent are never set after it is made.
    """

    __slots__ = (
        "block",
        "category",
        "correlation",
        "device",
        "end",
        "grid",
        "ident",
        "input_types",
        "linked",
        "name",
        "nbytes",
        "start",
        "stream",
        "thread",
    )

    def __init__(
        self,
        *,
        category: str,
        name: str,
        start: int,
        end: int,
        thread: int = 0,
        stream: int = 0,
        ident: int = 0,
        correlation: int = 0,
        linked: int = 0,
        device: int | None = None,
        grid: Dim3 | None = None,
        block: Dim3 | None = None,
        nbytes: int | None = None,
        input_types: tuple[str, ...] = (),
    ) -> None:
        self.category = category
        self.name = name
        self.start = start
        self.end = end
        self.thread = thread
        self.stream = stream
        self.ident = ident
        self.correlation = correlation
        self.linked = linked
        self.device = device
        self.grid = grid
        self.block = block
        self.nbytes = nbytes
        self.input_types = input_types

    def __repr__(self) -> str:
        return f"RawEvent({self.category}, {self.name!r}, start={self.start}, end={self.end})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Copied or pickled as a plain RawEvent: the adapters' subclasses (below) cannot
        # have their shadowed fields set, which the default slot-by-slot state would do.
        return _keyword_event, (tuple((field, getattr(self, field)) for field in RawEvent.__slots__),)


def _keyword_event(fields: tuple[tuple[str, Any], ...]) -> RawEvent:
    return RawEvent(**dict(fields))


new_event = object.__new__


# What the adapters make: RawEvents whose fields a kind of event does not have are class
# attributes of a subclass, not set per event (a slot the subclass shadows is never read).
# Making an event is most of an adapter's own cost, and this halves the attributes it sets.
# The shadowed fields are read-only on these (setting one raises AttributeError), which
# holds the rule that an event is not changed once made.
class HostEvent(RawEvent):
    __slots__ = ()
    stream = correlation = linked = 0
    device = grid = block = nbytes = None
    input_types = ()


class TypedOpEvent(RawEvent):  # a CPU op with its inputs' types recorded
    __slots__ = ()
    stream = correlation = linked = 0
    device = grid = block = nbytes = None


class RuntimeEvent(RawEvent):
    __slots__ = ()
    category = RUNTIME
    stream = ident = 0
    device = grid = block = nbytes = None
    input_types = ()


class GpuEvent(RawEvent):
    __slots__ = ()
    thread = ident = 0
    input_types = ()


def cpu_event(category: str, name: str, start: int, end: int, thread: int, ident: int) -> RawEvent:
    e: RawEvent = new_event(HostEvent)
    e.category, e.name, e.start, e.end, e.thread, e.ident = category, name, start, end, thread, ident
    return e


def typed_op_event(name: str, start: int, end: int, thread: int, ident: int, input_types: tuple[str, ...]) -> RawEvent:
    e: RawEvent = new_event(TypedOpEvent)
    e.category, e.name, e.start, e.end, e.thread, e.ident = OP, name, start, end, thread, ident
    e.input_types = input_types
    return e


def runtime_event(name: str, start: int, end: int, thread: int, correlation: int, linked: int) -> RawEvent:
    e: RawEvent = new_event(RuntimeEvent)
    e.name, e.start, e.end, e.thread, e.correlation, e.linked = name, start, end, thread, correlation, linked
    return e


def gpu_event(
    *,
    category: str,
    name: str,
    start: int,
    end: int,
    stream: int,
    correlation: int,
    linked: int,
    device: int | None = None,
    grid: Dim3 | None = None,
    block: Dim3 | None = None,
    nbytes: int | None = None,
) -> RawEvent:
    """A GPU record (kernel, memcpy, memset), made as the adapters make them."""
    e: RawEvent = new_event(GpuEvent)
    e.category, e.name, e.start, e.end, e.stream = category, name, start, end, stream
    e.correlation, e.linked, e.device, e.grid, e.block = correlation, linked, device, grid, block
    e.nbytes = nbytes
    return e


def arch_name(major: int, minor: int) -> str:
    """A compute capability as baselines and reports name it: (9, 0) -> "sm90"."""
    return f"sm{major}{minor}"


@dataclass(frozen=True)
class Source:
    """Facts about where the events came from.

    ``triton_kernels``: names of kernels that capture learned are Triton kernels (their names
    do not say so); ``triton_ir``: what the compiled IR of those it could read shows (kind,
    dtype); both saved in a trace's ``"kernelprof"`` key, read back from it.
    """

    def with_unread(self, unread: tuple[tuple[str, int], ...]) -> Source:
        return dataclasses.replace(self, unread=unread)

    label: str
    device: str | None = None
    arch: str | None = None
    gpu_requested: bool = False
    triton_kernels: frozenset[str] = frozenset()
    # A trace with no GPU record: (category, events) of the complete events it holds that the
    # plugin does not read, such as another accelerator's (MTIA's), for saying what it holds.
    unread: tuple[tuple[str, int], ...] = ()
    triton_ir: tuple[tuple[str, IrFacts], ...] = ()


def dim3(value: Any) -> Dim3 | None:
    if type(value) is list and len(value) == 3:
        x, y, z = value
        if type(x) is int and type(y) is int and type(z) is int:
            return (x, y, z)
    return None


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while events are read or a profile is built.

    Both allocate hundreds of thousands of small containers, none in reference cycles; the
    collector's repeated passes over them cost more than the build itself (measured: 1.8 s ->
    0.7 s for a 100 MB trace).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
