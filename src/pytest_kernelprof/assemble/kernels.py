"""GPU records -> the kernels and memory ops of one call."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..decode import BUILT_IN, Decoder, KernelName, bias_in_epilogues
from ..decode.sync_calls import memcpy_kind
from ..decode.triton_ir import IrFacts
from ..model import Kernel, KernelDtype, MemoryOp
from ..traces import KERNEL, MEMCPY, RawEvent
from ..traces.records import paused_gc
from .optree import Chains, inductor_op, is_graph_call, is_launch_range
from .steps import Step


def call_records(
    step: Step, ops_by_id: Mapping[int, RawEvent], runtime_by_corr: Mapping[int, RawEvent]
) -> tuple[list[RawEvent], list[RawEvent | None], list[MemoryOp]]:
    """The step's GPU records in launch order, the CPU op that launched each (where known),
    and its memory ops."""
    # By launch time, then GPU start: two stable sorts, cheaper than a tuple key per record.
    step.gpu.sort(key=_gpu_start)
    step.gpu.sort(key=_launch_time)
    records = [g for _, g in step.gpu]
    launchers: list[RawEvent | None] = []
    memory: list[MemoryOp] = []
    for g in records:
        op_event = ops_by_id.get(g.linked)
        if op_event is None:
            launch = runtime_by_corr.get(g.correlation)
            op_event = ops_by_id.get(launch.linked) if launch is not None else None
        launchers.append(op_event)
        if g.category != KERNEL:
            direction, host_memory = memcpy_kind(g.name) if g.category == MEMCPY else (None, None)
            memory.append(
                _new_memory_op(
                    g.name,
                    g.category,
                    (g.end - g.start) / 1000.0,
                    g.stream,
                    g.device,
                    op_event.name if op_event is not None else None,
                    direction,
                    host_memory,
                    g.nbytes,
                )
            )
    return records, launchers, memory


_launch_time = operator.itemgetter(0)


def _gpu_start(pair: tuple[int, RawEvent]) -> int:
    return pair[1].start


def _from_ir(decoded: KernelName, facts: IrFacts, as_ir: dict[str, KernelName]) -> KernelName:
    """``decoded`` with what its IR shows where nothing stronger said it (evidence ``ir``): the
    kind of a kernel no evidence placed, the dtype of one that had none (a Liger kernel that
    its name places, launched by an op whose inputs were not recorded)."""
    found = as_ir.get(decoded.name)
    if found is None:
        kind, kind_from = (facts.kind, "ir") if decoded.unplaced else (decoded.kind, decoded.evidence.kind)
        dtype, dtype_from = decoded.dtype, decoded.evidence.dtype
        if dtype is None and facts.dtype is not None:
            dtype, dtype_from = facts.dtype, "ir"
        evidence = replace(decoded.evidence, kind=kind_from, dtype=dtype_from)
        found = as_ir[decoded.name] = replace(decoded, kind=kind, dtype=dtype, evidence=evidence)
    return found


class CallKernels:
    """The kernels of one call, made from its records on first read.

    Making a Kernel (decoding, the launching op, Inductor's op chain, the object) is most
    of the cost of a build; the sequence check and the medians need only names and
    durations, and tests mostly read the representative call. So each call's own
    ``KernelList`` is deferred, and the representative's kernels are made once, with the
    median durations, from the first call's records.
    """

    __slots__ = (
        "_decoder",
        "_frames",
        "_kernels",
        "_triton_ir",
        "_triton_kernels",
        "chains",
        "launchers",
        "records",
        "step",
    )

    def __init__(
        self,
        step: Step,
        records: list[RawEvent],
        launchers: list[RawEvent | None],
        frames: Callable[[], list[tuple[str, ...] | None]] | None,
        triton_kernels: frozenset[str],
        triton_ir: Mapping[str, IrFacts],
        decoder: Decoder = BUILT_IN,
    ) -> None:
        self.step = step
        self.records = records  # the call's GPU records in launch order
        self.launchers = launchers  # the CPU op that launched each record, where known
        self.chains = Chains(step.ops)
        self._frames = frames
        self._triton_kernels = triton_kernels
        self._triton_ir = triton_ir
        self._decoder = decoder
        self._kernels: list[Kernel] | None = None

    @property
    def names(self) -> list[str]:
        return [g.name for g in self.records if g.category == KERNEL]

    @property
    def durations(self) -> list[float]:
        return [(g.end - g.start) / 1000.0 for g in self.records if g.category == KERNEL]

    def own(self) -> list[Kernel]:
        """This call's kernels, with their own durations."""
        if self._kernels is None:
            with paused_gc():  # made lazily, outside build_profile's pause
                self._kernels = self.make(None)
        return self._kernels

    def make(self, durations: Sequence[float] | None) -> list[Kernel]:
        """The call's kernels; with ``durations`` (one per kernel) in place of their own."""
        step, chains = self.step, self.chains
        frames = self._frames() if self._frames is not None else None
        as_ir: dict[str, KernelName] = {}
        triton_kernels, triton_ir = self._triton_kernels, self._triton_ir
        decode = self._decoder.decode
        kernels: list[Kernel] = []
        for position, (g, op_event) in enumerate(zip(self.records, self.launchers, strict=True)):
            if g.category != KERNEL:
                continue
            op_name = op_event.name if op_event is not None else None
            inductor = op_name is not None and op_name.startswith(g.name) and is_launch_range(op_name, g.name)
            # A CUDA graph's kernels are launched by the graph's replay, inside Inductor's graph call.
            if inductor or (op_name is not None and is_graph_call(op_name)):
                op_name = inductor_op(chains.of(op_event))  # type: ignore[arg-type]  # op_name: op_event is set
            # The name first, then its template arguments, the launching op and its inputs'
            # dtypes where the profile recorded them (decode/decoder.py). A kernel is a Triton
            # kernel where capture learned it, or where Inductor launched it (a user's
            # @triton.jit kernel in a compiled region).
            decoded = decode(
                g.name,
                op_name,
                op_event.input_types if op_event is not None else (),
                inductor or g.name in triton_kernels,
            )
            # What the compiled IR showed (capture/triton_kernels.py), where nothing stronger
            # placed the kernel: a user's @triton.jit kernel says nothing by its name.
            if g.name in triton_ir and (decoded.unplaced or decoded.dtype is None):
                decoded = _from_ir(decoded, triton_ir[g.name], as_ir)
            kernels.append(
                _new_kernel(
                    decoded,
                    {
                        "duration_us": (g.end - g.start) / 1000.0 if durations is None else durations[len(kernels)],
                        "stream": g.stream,
                        "device": g.device,
                        "op": op_name,
                        "grid": g.grid,
                        "block": g.block,
                        "start_us": (g.start - step.start) / 1000.0,
                        "stack": frames[position] if frames is not None else None,
                        # Kernel.ops, resolved on first read
                        "chains": chains if op_event is not None else None,
                        "launcher": op_event,
                    },
                )
            )
        return bias_in_epilogues(kernels, [k.op for k in kernels], _with_fused_ops)

    def launched(self) -> list[tuple[RawEvent, int, Kernel | None, int]]:
        """(launching op, kernel position, kernel or None for a memory op, GPU ns) per record
        with a known launcher: what the op forest hangs kernels and device time on."""
        kernels = iter(self.own())
        out: list[tuple[RawEvent, int, Kernel | None, int]] = []
        position = -1
        for g, op_event in zip(self.records, self.launchers, strict=True):
            kernel = None
            if g.category == KERNEL:
                kernel = next(kernels)
                position += 1
            if op_event is not None:
                out.append((op_event, position, kernel, g.end - g.start))
        return out


def _with_fused_ops(kernel: Kernel, fused_ops: tuple[str, ...]) -> Kernel:
    """``kernel`` with other fused ops, which its launching op gave (``bias_in_epilogues``)."""
    evidence = replace(kernel.evidence, fused_ops="op" if fused_ops else None)
    return _new_kernel(kernel, {"fused_ops": fused_ops, "evidence": evidence})


def _new_kernel(base: KernelName, fields: dict[str, Any]) -> Kernel:
    """A new Kernel: the fields of ``base`` (a decoded name, or a Kernel to copy) updated with
    ``fields``, without the frozen dataclass's ``__init__``.

    That ``__init__`` sets each field through ``object.__setattr__`` and costs about 3 us a
    kernel, the largest single cost of building a GPU profile (``dataclasses.replace``, for
    a median duration, 5x more). The instance is filled before anyone sees it, never
    changed after. ``test_build`` checks that every field is given and that the result
    equals the constructor's.
    """
    kernel = object.__new__(Kernel)
    state = kernel.__dict__
    state.update(base.__dict__)
    state.update(fields)
    dtype = state["dtype"]
    if dtype is not None and type(dtype) is not KernelDtype:  # what Kernel.__post_init__ makes of it
        state["dtype"] = KernelDtype(dtype)
    return kernel


def _new_memory_op(
    name: str,
    kind: str,
    duration_us: float,
    stream: int | None,
    device: int | None,
    op: str | None,
    direction: str | None,
    host_memory: str | None,
    nbytes: int | None,
) -> MemoryOp:
    """A MemoryOp without the frozen dataclass's ``__init__`` (see ``_new_kernel``); a memset
    per call is common (optimizers, zeroed buffers). ``test_build`` compares it with the
    constructor's."""
    memory_op = object.__new__(MemoryOp)
    memory_op.__dict__.update(
        name=name,
        kind=kind,
        duration_us=duration_us,
        stream=stream,
        device=device,
        op=op,
        direction=direction,
        host_memory=host_memory,
        bytes=nbytes,
    )
    return memory_op
