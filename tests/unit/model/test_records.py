"""Copies, launches and the GPU's idle share, on traces recorded on an H200 under torch 2.11; runtime
calls, and those of a profile that measured nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof import NoDeviceActivityError, load_trace
from pytest_kernelprof.decode.sync_calls import memcpy_kind
from pytest_kernelprof.model.gpu_time import gpu_time_line
from pytest_kernelprof.types import KernelList, MemoryOp
from tests.helpers import Stream, build

Trace = Callable[[str], Path]


@pytest.mark.parametrize(
    ("name", "direction", "host"),
    [
        ("Memcpy DtoH (Device -> Pageable)", "DtoH", "pageable"),
        ("Memcpy DtoH (Device -> Pinned)", "DtoH", "pinned"),
        ("Memcpy HtoD (Pageable -> Device)", "HtoD", "pageable"),
        ("Memcpy HtoD (Pinned -> Device)", "HtoD", "pinned"),
        ("Memcpy DtoD (Device -> Device)", "DtoD", None),
        ("Memcpy PtoP (Device -> Device)", "DtoD", None),  # peer copy between two GPUs
        ("Memcpy HtoH (Pinned -> Pageable)", "HtoH", "pageable"),
        ("Memcpy DtoA (Device -> Array)", "DtoD", None),
        ("Memcpy HtoD (Managed -> Device)", "HtoD", None),
        ("Memcpy DtoH", "DtoH", None),  # older Kineto: no memory kinds
        ("Memset (Device)", None, None),
        ("Memset (Unknown)", None, None),
    ],
)
def test_direction_and_host_memory_come_from_the_record_name(name: str, direction: str, host: str) -> None:
    assert memcpy_kind(name) == (direction, host)


@pytest.mark.parametrize(
    ("name", "direction", "host"),
    [
        ("sync_cpu_copy", "DtoH", "pageable"),
        ("copy_dtoh_pinned_nonblocking", "DtoH", "pinned"),
        ("copy_htod_pageable_nonblocking", "HtoD", "pageable"),
        ("copy_htod_pinned_nonblocking", "HtoD", "pinned"),
        ("copy_dtod", "DtoD", None),
    ],
)
def test_copies_of_4_mib(trace: Trace, name: str, direction: str, host: str) -> None:
    prof = load_trace(trace(name))
    (copy,) = prof.copies
    assert (copy.direction, copy.host_memory, copy.bytes, copy.op) == (direction, host, 4 << 20, "aten::copy_")
    assert prof.copies.count(direction) == 1
    assert prof.copies.count(host_memory="pinned") == (host == "pinned")
    assert prof.copies.count(host_memory="pageable") == (host == "pageable")
    assert all(len(c.copies) == 1 for c in prof.calls)


def test_copies_leave_memsets_out(trace: Trace) -> None:
    prof = load_trace(trace("sync_tensor_bool"))  # a cuBLAS-free sum with a memset, then bool()
    assert [m.kind for m in prof.memory_ops] == ["memset", "memcpy"]
    memset = prof.memory_ops[0]
    assert (memset.direction, memset.host_memory, memset.bytes) == (None, None, 4)
    assert [c.bytes for c in prof.copies] == [1]
    assert prof.copies.count("DtoH", host_memory="pinned") == 1


def test_copy_durations_are_medians(trace: Trace) -> None:
    prof = load_trace(trace("sync_cpu_copy"))
    per_call = sorted(c.copies[0].duration_us for c in prof.calls)
    assert prof.copies[0].duration_us == pytest.approx(per_call[1])


def test_a_copy_tables_time_column_says_whether_it_holds_medians(trace: Trace) -> None:
    # Trial report: one copy showed "gpu us 205.7" in a failed count (its median over the calls)
    # and "gpu us 211.3" in `kernelprof show` (one call's own); the header says which, as
    # a kernel table's "median us" does.
    prof = load_trace(trace("copy_dtoh_pageable_nonblocking"))
    medians = prof.copies.count(direction="DtoH").explain()[1:3]
    assert "  median gpu us  " in medians[0]
    assert medians[1].split()[4] == "205.7"
    assert "  median gpu us  " in prof.copies.table().splitlines()[0]
    own = prof.fastest_call.copies.table().splitlines()
    assert "  gpu us  " in own[0]
    assert "median" not in own[0]
    assert own[1].split()[4] == "200.8"


def test_a_copy_only_workload_is_device_activity(trace: Trace) -> None:
    prof = load_trace(trace("copy_htod_pageable"))  # x.to("cuda") from pageable memory, no kernel
    assert prof.has_device_activity
    assert len(prof.kernels) == 0
    assert prof.launches == 0
    assert prof.copies.count("HtoD") == 1
    assert [s.kind for s in prof.syncs] == ["copy", "stream"]
    assert 0 < prof.gpu_idle_fraction < 0.6


def test_copy_count_fails_with_the_copies(trace: Trace) -> None:
    copies = load_trace(trace("sync_cpu_copy")).copies
    count = copies.count(direction="DtoH")
    assert count == 1
    lines = count.explain()
    assert (
        lines[0] == "copies.count(direction='DtoH') matched 1 of 1 copies (times: each one's median over the 3 calls)"
    )
    assert lines[1].split() == ["#", "direction", "host", "mem", "bytes", "median", "gpu", "us", "op", "name"]
    assert lines[2].split()[:4] == ["0", "DtoH", "pageable", "4194304"]
    # Short, and no fix (a trial): pytest prints `assert not prof.copies` with it twice.
    assert repr(copies) == "CopyList of 1: DtoH pageable 4194304 B by aten::copy_"
    with pytest.raises(ValueError, match="unknown direction 'D2H'; the directions are: HtoD, DtoH, DtoD, HtoH"):
        copies.count("D2H")
    with pytest.raises(ValueError, match="unknown host memory 'managed'; the host memories are: pinned, pageable"):
        copies.count(host_memory="managed")


def test_launches_count_kernel_launch_calls_of_every_api(trace: Trace) -> None:
    eager = load_trace(trace("decode_eager"))
    assert eager.launches == 49 == len(eager.kernels)
    assert eager.graph_launches == 0
    compiled = load_trace(trace("decode_compiled"))  # mm through the runtime, Triton through the driver
    assert compiled.runtime["cudaLaunchKernel"] == compiled.runtime["cuLaunchKernel"] == 12
    assert compiled.launches == 24
    item = load_trace(trace("sync_item_stacks"))  # ATen, cuBLAS ExC and cuLaunchKernel; a memset and a memcpy
    assert item.launches == 18 == len(item.kernels)
    assert item.runtime["cudaMemsetAsync"] == item.runtime["cudaMemcpyAsync"] == 1  # not launches


def test_a_graph_launch_is_one_launch_of_many_kernels(trace: Trace) -> None:
    prof = load_trace(trace("decode_graphs"))  # torch.compile(mode="reduce-overhead")
    assert prof.graph_launches == 1
    assert prof.launches == 2  # the graph and the input copy's kernel
    assert len(prof.kernels) == 25
    assert prof.runtime["cudaStreamIsCapturing"] == 1  # neither a launch nor a sync


def test_wall_busy_and_idle_per_call_and_of_the_fastest_call(trace: Trace) -> None:
    prof = load_trace(trace("decode_eager"))
    walls = sorted(c.wall_us for c in prof.calls)
    assert prof.wall_us == pytest.approx(walls[0])
    assert prof.calls[0].wall_us == walls[2]  # the first call carries the profiler's start-up
    for call in prof.calls:
        assert 0 < call.gpu_busy_us < call.wall_us
        assert call.gpu_busy_us <= sum(k.duration_us for k in call.kernels) + 1e-6
        assert call.gpu_idle_fraction == pytest.approx(1 - call.gpu_busy_us / call.wall_us)
    # All of one call, the fastest by host span; figures taken one by one come from other calls.
    fastest = prof.fastest_call
    assert fastest.wall_us == walls[0]
    assert (prof.gpu_busy_us, prof.gpu_work_us, prof.gpu_idle_fraction) == (
        fastest.gpu_busy_us,
        fastest.gpu_work_us,
        fastest.gpu_idle_fraction,
    )
    assert prof.gpu_busy_us != min(c.gpu_busy_us for c in prof.calls)
    assert prof.gpu_idle_fraction > 0.85  # 49 tiny kernels: launch-bound


def test_busy_time_is_the_union_clipped_to_the_call() -> None:
    s = Stream()
    s.step(0, 0, 100)
    mm = s.op("aten::mm", 1, 90)
    s.launch(mm, "a", 2, dur=10)  # GPU 7-17
    s.launch(mm, "b", 3, dur=10)  # GPU 8-18: overlaps a
    s.launch(mm, "c", 50, dur=20)  # GPU 55-75
    s.launch(mm, "d", 90, dur=30)  # GPU 95-125: runs past the call's end at 100
    call = build(s).call
    assert call.gpu_busy_us == pytest.approx(11 + 20 + 5)
    assert call.wall_us == pytest.approx(100)
    assert call.gpu_idle_fraction == pytest.approx(1 - 36 / 100)
    assert call.launches == 4
    # Issue 32 item 8: the whole of the call's GPU work is told beside it, the part after 100 too.
    assert call.gpu_work_us == pytest.approx(11 + 20 + 30)
    # Issue 32 item 2: the line says how much of the work ran after the host returned, so that
    # kernel time above "busy" does not read as a contradiction; a call whose work ended within
    # its span says nothing of it.
    assert gpu_time_line(call) == (
        "host span 100.0us, GPU busy 36.0us within it (idle 64%), "
        "GPU work 61.0us in all (25.0us after the host returned)"
    )
    s = Stream()
    s.step(0, 0, 100)
    s.launch(s.op("aten::mm", 1, 90), "a", 2, dur=10)
    assert (
        gpu_time_line(build(s).call)
        == "host span 100.0us, GPU busy 10.0us within it (idle 90%), GPU work 10.0us in all"
    )


def test_back_to_back_kernels_that_outlast_the_host_are_told_whole(trace: Trace) -> None:
    # Issue 32 item 8: the eager GeGLU MLP's kernels run back to back, but the host returns
    # before the last ones end: busy within the host span is less than the kernels' time.
    prof = load_trace(trace("geglu_eager"))
    kernel_us = prof.fastest_call.kernels.total_us
    assert prof.gpu_busy_us < 0.7 * kernel_us  # the figure that read as a contradiction
    memory_us = sum(m.duration_us for m in prof.fastest_call.memory_ops)
    assert kernel_us <= prof.gpu_work_us <= kernel_us + memory_us + 1e-6  # no overlap: all of it
    assert prof.table().splitlines()[-1] == (
        "call 2, numbered from 0, the fastest of 3 by host span: 5 launches, 232.5us in kernels "
        "(the table's medians add to 232.7us), host span 161.6us, "
        "GPU busy 112.8us within it (idle 30%), GPU work 234.1us in all (121.3us after the host returned), "
        "no host syncs"
    )


def test_the_per_call_line_is_one_named_call_and_has_its_kernel_time(trace: Trace) -> None:
    # Trial report: the line gave the median call's host span, busy and work without naming the
    # call, and no kernel time, beside a table of each kernel's median (another sum).
    prof = load_trace(trace("geglu_compiled"))
    fastest = prof.fastest_call
    line = prof.host_summary()
    assert line.startswith(f"call {fastest.index}, numbered from 0, the fastest of 3 by host span: 4 launches, ")
    # The medians' sum differs: the line is one call's, and names the table's sum as the table's.
    medians = f"(the table's medians add to {prof.kernels.total_us:.1f}us)"
    assert f", {fastest.kernels.total_us:.1f}us in kernels {medians}, host span {fastest.wall_us:.1f}us, " in line
    one = load_trace(trace("llama_forward_modules"))
    assert len(one.calls) == 1
    kernel_us = one.kernels.total_us
    assert one.host_summary().startswith(f"per call: {one.launches} launches, {kernel_us:.1f}us in kernels, ")


def test_no_gpu_activity_raises_for_every_gpu_query() -> None:
    s = Stream()
    s.step(0, 0, 100)
    s.op("aten::add", 1, 10)
    s.x("cuda_runtime", "cudaDeviceSynchronize", 20, 5, correlation=5)
    prof = build(s)
    assert prof.wall_us == pytest.approx(100)  # the host span needs no GPU
    for query in ("copies", "launches", "graph_launches", "gpu_busy_us", "gpu_work_us", "gpu_idle_fraction"):
        with pytest.raises(NoDeviceActivityError, match="no GPU activity"):
            getattr(prof, query)
        with pytest.raises(NoDeviceActivityError, match="no GPU activity"):
            getattr(prof.calls[0], query)
    with pytest.raises(NoDeviceActivityError, match="no GPU activity"):
        assert not prof.syncs  # the cudaDeviceSynchronize in the call is not "no sync" either


def test_memory_op_keeps_its_positional_fields() -> None:
    op = MemoryOp("Memset (Device)", "memset", 1.0, 7, 0, "aten::zero_")
    assert (op.direction, op.host_memory, op.bytes) == (None, None, None)


@pytest.fixture
def linear(trace: Trace) -> kp.KernelProfile:
    return load_trace(trace("linear_eager"))


def test_runtime_of_a_profile_that_measured_nothing_raises() -> None:
    if torch.cuda.is_available():
        pytest.skip("pins the CPU-only behaviour")
    prof = kp.profile(torch.relu, torch.randn(4))
    runtime = prof.runtime
    assert not runtime.measured
    for read in (
        lambda: runtime["cudaLaunchKernel"],
        lambda: "cudaStreamSynchronize" in runtime,
        lambda: len(runtime),
        lambda: dict(runtime),
        lambda: runtime == {},
        lambda: runtime.get("cudaLaunchKernel", 0),
        lambda: list(prof.calls[1].runtime.items()),
    ):
        with pytest.raises(NoDeviceActivityError, match="CUDA is not available"):
            read()
    # prof.kernels itself is the list, so that .measured can be asked; reading it raises.
    assert isinstance(prof.kernels, KernelList)
    assert not prof.kernels.measured
    with pytest.raises(NoDeviceActivityError):
        prof.kernels.names  # noqa: B018


def test_runtime_of_a_gpu_trace_reads(linear: kp.KernelProfile) -> None:
    assert linear.runtime.measured
    assert linear.runtime["cuLaunchKernelEx"] == 1
    assert "cudaStreamSynchronize" not in linear.runtime
    assert dict(linear.runtime) == dict(linear.calls[2].runtime)


def test_names_from_the_trace_stay_on_the_line_of_each_repr(trace: Trace, tmp_path: Path) -> None:
    """pytest prints ``assert not prof.syncs`` with the list's one-line repr: an op name with a
    newline and ``::error::`` made a line of its own there, a GitHub Actions workflow command."""
    import gzip
    import json

    text = gzip.decompress(trace("copy_dtoh_pageable_nonblocking").read_bytes()).decode("utf-8")
    text = text.replace('"aten::copy_"', json.dumps("aten::copy_\n::error::op"))
    text = text.replace('"aten::mul_"', json.dumps("aten::mul_\n::error::op"))
    path = tmp_path / "trace.json"
    path.write_text(text)
    prof = load_trace(path)
    shown = [repr(prof.syncs), repr(prof.syncs[0]), repr(prof.copies), repr(prof.kernels[0])]
    for line in shown:
        assert "\n" not in line, line
    assert r"aten::copy_\n::error::op" in shown[0]
    assert r"op=aten::mul_\n::error::op" in shown[3]


def test_the_sync_tables_kind_is_the_kind_count_takes(trace: Trace) -> None:
    # A trial: the kind column read "copy DtoH pageable", which count(kind=...) refused; Sync.kind
    # is "copy". The kind column holds Sync.kind, the copy's direction and host memory their own.
    from pytest_kernelprof.model.records import SYNC_COLUMNS, sync_cells

    syncs = load_trace(trace("sync_cpu_copy")).syncs
    assert SYNC_COLUMNS == ("runtime call", "kind", "copy", "host us", "ops", "where")
    lines = syncs.table().splitlines()
    assert lines[0].split() == ["#", "runtime", "call", "kind", "copy", "call", "2", "host", "us", "ops", "where"]
    kind_at, copy_at = lines[0].index("kind"), lines[0].index("copy")
    kinds = [line[kind_at:copy_at].strip() for line in lines[1:]]
    copies = [line[copy_at:].split("  ")[0] for line in lines[1:]]
    assert kinds == [s.kind for s in syncs] == ["copy", "stream"]
    assert copies == ["DtoH pageable", "-"]
    for kind in kinds:  # every kind the table shows is one count() takes, and counts
        assert syncs.count(kind=kind) == kinds.count(kind)
    assert [sync_cells(s)[1:3] for s in syncs] == [("copy", "DtoH pageable"), ("stream", "-")]
    assert all(len(sync_cells(s)) == len(SYNC_COLUMNS) for s in syncs)


def test_a_copy_syncs_copy_cell_is_its_direction_and_host_memory(trace: Trace) -> None:
    from pytest_kernelprof.model.records import sync_cells

    copy, stream = load_trace(trace("copy_htod_pageable")).syncs
    assert sync_cells(copy)[1:3] == ("copy", "HtoD pageable")
    assert sync_cells(stream)[1:3] == ("stream", "-")


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("copy_dtoh_pageable_nonblocking", "CopyList of 1: DtoH pageable 4194304 B by aten::copy_"),
        ("copy_dtod", "CopyList of 1: DtoD 4194304 B by aten::copy_"),
    ],
)
def test_a_copy_lists_repr_is_short_and_says_no_fix(trace: Trace, name: str, shown: str) -> None:
    copies = load_trace(trace(name)).copies
    assert repr(copies) == shown
    assert "to fix" not in repr(copies)


def test_the_profile_table_says_each_fix_once_under_the_syncs(trace: Trace) -> None:
    # The fixes of the syncs, then those of the copies not said already: a pageable DtoH copy's
    # sync and the copy itself have one cause; the host's read of a GPU value is its DtoH copy.
    copied = load_trace(trace("copy_dtoh_pageable_nonblocking")).table().splitlines()
    fixes = [line for line in copied if line.startswith("to fix: ")]
    assert fixes == [
        "to fix: a copy to or from pageable memory blocks the host: copy into pinned host memory "
        "(t.pin_memory(), or pin_memory=True) with non_blocking=True",
        "to fix: a DtoH copy reads GPU results on the host: keep them on the GPU, or read them once per step",
    ]
    assert copied[-len(fixes) - 1].split()[:4] == ["0", "cudaMemcpyAsync", "copy", "DtoH"]
    read = load_trace(trace("sync_item_stacks")).table().splitlines()
    assert [line for line in read if line.startswith("to fix: ")] == [
        "to fix: the host read a GPU value (.item(), bool(t), nonzero, boolean-mask indexing): keep it on the GPU "
        "(torch.where, masks as multipliers) or read it once per step"
    ]
    # No sync, but a DtoH copy: its fix follows the line that says so.
    pinned = load_trace(trace("copy_dtoh_pinned_nonblocking")).table().splitlines()
    assert pinned[-2].endswith(", no host syncs")
    assert pinned[-1] == (
        "to fix: a DtoH copy reads GPU results on the host: keep them on the GPU, or read them once per step"
    )
    assert load_trace(trace("copy_dtod")).table().endswith(", no host syncs")  # nothing to fix
