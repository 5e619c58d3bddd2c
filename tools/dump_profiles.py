"""Print every recorded trace's profile, and a live CPU session's, as deterministic text.

For refactors that must not change behaviour: dump before, dump after, ``diff`` the two.

    python tools/dump_profiles.py > /tmp/dump_before.txt

Each trace in ``tests/data`` loads with the first of the options below that accepts it; a
trace that none accepts is listed with its error and skipped. The live session's times vary
from run to run and are left out.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest_kernelprof as kp
from pytest_kernelprof.types import CallProfile, CopyList, Kernel, KernelList, Op, OpTable, SyncList

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"

# Tried in order: the strict default first, so that a trace is dumped the way tests read it.
LOAD_OPTIONS: tuple[dict[str, bool], ...] = (
    {},
    {"allow_variation": True},
    {"check_complete": False},
    {"allow_variation": True, "check_complete": False},
)


class Dump:
    def __init__(self, timed: bool) -> None:
        self.timed = timed  # False for a live session: its times are left out
        self.lines: list[str] = []

    def __call__(self, text: str, indent: int = 0) -> None:
        self.lines.extend("  " * indent + line for line in text.splitlines() or [""])

    def time(self, value: object) -> str:
        return repr(value) if self.timed else "<time>"

    def read(self, label: str, read: Callable[[], object], indent: int, timed: bool = False) -> None:
        """``label: value`` or ``label: raises <Error>``; ``timed`` values are left out of a live dump."""
        try:
            value = read()
        except kp.KernelProfError as exc:
            self(f"{label}: raises {type(exc).__name__}: {exc}", indent)
            return
        self(f"{label}: {self.time(value) if timed else repr(value)}", indent)


def _display_fields(record: object) -> Iterator[dataclasses.Field[object]]:
    """A record's fields that its repr shows: the values, without state for the builder."""
    return (f for f in dataclasses.fields(record) if f.repr)  # type: ignore[arg-type]


TIMED = {"duration_us", "start_us"}


def dump_kernel(out: Dump, index: int, kernel: Kernel, indent: int) -> None:
    values = ", ".join(
        f"{f.name}={out.time(getattr(kernel, f.name)) if f.name in TIMED else repr(getattr(kernel, f.name))}"
        for f in _display_fields(kernel)
    )
    out(f"kernel {index}: {values}", indent)
    out(f"ops={kernel.ops!r} module={kernel.module!r} end_us={out.time(kernel.end_us)}", indent + 1)
    if out.timed:
        out(f"repr={kernel!r}", indent + 1)


def dump_kernels(out: Dump, kernels: KernelList, indent: int) -> None:
    out(f"measured={kernels.measured} repr={kernels!r}", indent)
    if not kernels.measured:
        out.read("len", lambda: len(kernels), indent)
        return
    for i, kernel in enumerate(kernels):
        dump_kernel(out, i, kernel, indent + 1)
    out.read("count(kind='gemm')", lambda: int(kernels.count(kind="gemm")), indent)
    if out.timed:
        out(kernels.table(), indent)


def dump_op(out: Dump, op: Op, indent: int) -> None:
    out(
        f"op {op.name!r}: count={op.count} children={op.children!r} children_vary={op.children_vary} "
        f"cpu={out.time(op.cpu_time_us)} self_cpu={out.time(op.self_cpu_time_us)}",
        indent,
    )
    out.read("device_time_us", lambda: op.device_time_us, indent + 1, timed=True)
    out.read("self_device_time_us", lambda: op.self_device_time_us, indent + 1, timed=True)
    if op.kernels.measured:
        out(f"kernels={op.kernels.names!r}", indent + 1)
        out(f"kernel ops={[k.ops for k in op.kernels]!r}", indent + 1)
    else:
        out.read("kernels", lambda: len(op.kernels), indent + 1)


def dump_ops(out: Dump, ops: OpTable, indent: int) -> None:
    out(f"{ops!r}", indent)
    for name in ops:
        dump_op(out, ops[name], indent + 1)
    if out.timed:
        out(ops.table(), indent)


def dump_records(out: Dump, label: str, records: SyncList | CopyList, indent: int) -> None:
    out(f"{label}: measured={records.measured}", indent)
    if not records.measured:
        out.read("len", lambda: len(records), indent + 1)
        return
    for i, record in enumerate(records):
        values = ", ".join(
            f"{f.name}={out.time(getattr(record, f.name)) if f.name in TIMED else repr(getattr(record, f.name))}"
            for f in _display_fields(record)
        )
        out(f"{i}: {values}", indent + 1)
    count = records.count()
    out(f"count()={int(count)} explain:", indent + 1)
    if out.timed:
        out("\n".join(count.explain()), indent + 2)
        out(f"headline={records.headline()}", indent + 1)


def dump_call(out: Dump, call: CallProfile, indent: int) -> None:
    out(f"call {call.index}: wall_us={out.time(call.wall_us)}", indent)
    indent += 1
    dump_kernels(out, call.kernels, indent)
    for i, memory_op in enumerate(call.memory_ops):
        values = ", ".join(
            f"{f.name}={out.time(getattr(memory_op, f.name)) if f.name in TIMED else repr(getattr(memory_op, f.name))}"
            for f in _display_fields(memory_op)
        )
        out(f"memory_op {i}: {values}", indent)
    out.read("runtime", lambda: dict(call.runtime), indent)
    dump_records(out, "syncs", call.syncs, indent)
    try:
        copies = call.copies
    except kp.NoDeviceActivityError as exc:
        out(f"copies: raises {type(exc).__name__}", indent)
    else:
        dump_records(out, "copies", copies, indent)
    out.read("launches", lambda: call.launches, indent)
    out.read("graph_launches", lambda: call.graph_launches, indent)
    out.read("gpu_busy_us", lambda: call.gpu_busy_us, indent, timed=True)
    out.read("gpu_idle_fraction", lambda: call.gpu_idle_fraction, indent, timed=True)
    out(f"compiled_regions={call.compiled_regions!r}", indent)
    out.read("memory", lambda: call.memory, indent, timed=True)
    dump_ops(out, call.ops, indent)
    try:
        modules = call.modules
        names = list(modules)
    except kp.ModuleNotRecordedError as exc:
        out(f"modules: raises {type(exc).__name__}", indent)
    else:
        for name in names:
            view = modules[name]
            out(
                f"module {name!r}: count={view.count} kernels={len(view.kernels) if view.kernels.measured else '-'}",
                indent,
            )
            if view.kernels.measured:
                out(f"self_kernels={view.self_kernels.names!r}", indent + 1)
        if out.timed:
            out(modules.table(), indent)
    if out.timed:
        out.read("overlap", call.overlap, indent)


def dump_profile(out: Dump, prof: kp.KernelProfile) -> None:
    label = prof.source.replace("\\", "/").rsplit("/", 1)[-1]
    out(
        f"device={prof.device!r} arch={prof.arch!r} source={label!r} varied={prof.varied} "
        f"has_device_activity={prof.has_device_activity} calls={len(prof.calls)}"
    )
    out.read("launches", lambda: prof.launches, 1)
    out.read("graph_launches", lambda: prof.graph_launches, 1)
    out.read("wall_us", lambda: prof.wall_us, 1, timed=True)
    out.read("gpu_busy_us", lambda: prof.gpu_busy_us, 1, timed=True)
    out.read("gpu_idle_fraction", lambda: prof.gpu_idle_fraction, 1, timed=True)
    out.read("memory_ops", lambda: len(prof.memory_ops), 1)
    out.read("compile", lambda: prof.compile, 1)
    out.read("memory", lambda: prof.memory, 1, timed=True)
    if out.timed:
        out(f"repr={prof!r}", 1)
        out.read("overlap", prof.overlap, 1)
        out(prof.table(), 1)
    out("representative:", 1)
    dump_call(out, prof.call, 2)
    for call in prof.calls:
        dump_call(out, call, 1)


def live_cpu_profile() -> kp.KernelProfile:
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    x = torch.ones(2, 8)
    return kp.profile(lambda: model(x).sum().item())


def main() -> int:
    out = Dump(timed=True)
    for path in sorted(DATA.glob("*.json.gz")):
        out(f"== {path.name}")
        errors = []
        for options in LOAD_OPTIONS:
            try:
                prof = kp.load_trace(path, **options)
            except kp.KernelProfError as exc:
                errors.append(f"{options}: {type(exc).__name__}")
                continue
            out(f"loaded with {options}" + (f" (refused: {'; '.join(errors)})" if errors else ""))
            dump_profile(out, prof)
            break
        else:
            out(f"not loaded: {'; '.join(errors)}")
    live = Dump(timed=False)
    live("== live CPU session (times left out)")
    dump_profile(live, live_cpu_profile())
    sys.stdout.write("\n".join(out.lines + live.lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
