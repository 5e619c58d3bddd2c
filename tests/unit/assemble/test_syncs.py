"""Host syncs (``prof.syncs``), checked on traces recorded on an H200 under torch 2.11.

The traces come from the issue-11 study (``.study/s1``), recorded with the plugin's own
capture: 2 warm-up calls, then 3 calls each in a ``ProfilerStep#N`` range and each
followed by the plugin's ``torch.cuda.synchronize()``, which must never count.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_kernelprof import NoDeviceActivityError, load_trace
from pytest_kernelprof.decode.sync_calls import (
    api_name,
    sync_kind,
)
from pytest_kernelprof.types import Sync, SyncList
from tests.helpers import DATA

Trace = Callable[[str], Path]


def test_item_is_one_stream_sync_under_its_op_chain(trace: Trace) -> None:
    prof = load_trace(trace("sync_item_stacks"))
    sync = prof.syncs[0]
    assert len(prof.syncs) == 1  # the pinned 4-byte copy before it is not a sync
    assert (sync.call, sync.kind) == ("cudaStreamSynchronize", "stream")
    assert sync.ops == ("aten::item", "aten::_local_scalar_dense")
    assert sync.op == "aten::_local_scalar_dense"
    assert sync.memcpy is None
    assert 0 < sync.duration_us < 50
    assert 0 < sync.start_us < prof.wall_us
    assert [len(c.syncs) for c in prof.calls] == [1, 1, 1]
    copy = prof.copies[0]
    assert (copy.direction, copy.host_memory, copy.bytes, copy.op) == ("DtoH", "pinned", 4, "aten::_local_scalar_dense")


def test_the_plugins_own_synchronize_is_not_a_sync(trace: Trace) -> None:
    # Each trace holds 4 cudaDeviceSynchronize outside the steps: after each call, and at exit.
    for name in ("copy_dtoh_pinned_nonblocking", "copy_dtod", "sync_stream_wait_event"):
        prof = load_trace(trace(name))
        assert not prof.syncs
        assert all(not c.syncs for c in prof.calls)
        assert "cudaDeviceSynchronize" not in prof.runtime


def test_an_explicit_synchronize_inside_the_call_is_a_device_sync_without_op(trace: Trace) -> None:
    prof = load_trace(trace("sync_device"))
    assert prof.syncs.count(kind="device") == 1
    sync = prof.syncs[0]
    assert (sync.call, sync.op, sync.ops, sync.stack, sync.line) == ("cudaDeviceSynchronize", None, (), None, None)


def test_event_and_stream_synchronize(trace: Trace) -> None:
    event = load_trace(trace("sync_event")).syncs
    assert [(s.call, s.kind) for s in event] == [("cudaEventSynchronize", "event")]
    stream = load_trace(trace("sync_stream")).syncs  # torch.cuda.current_stream().synchronize()
    assert [(s.call, s.kind, s.op) for s in stream] == [("cudaStreamSynchronize", "stream", None)]


def test_stream_wait_event_is_the_gpu_waiting_not_the_host(trace: Trace) -> None:
    prof = load_trace(trace("sync_stream_wait_event"))
    assert prof.runtime["cudaStreamWaitEvent"] == 2
    assert prof.runtime["cudaEventRecordWithFlags"] == 2
    assert prof.syncs.count() == 0


@pytest.mark.parametrize(
    ("name", "chain"),
    [
        ("sync_mask_index", ("aten::index", "aten::nonzero")),
        ("sync_tensor_bool", ("aten::is_nonzero", "aten::item", "aten::_local_scalar_dense")),
    ],
)
def test_hidden_syncs_name_the_op_that_hides_them(trace: Trace, name: str, chain: tuple[str, ...]) -> None:
    syncs = load_trace(trace(name)).syncs
    assert [(s.kind, s.ops) for s in syncs] == [("stream", chain)]


def test_a_blocking_copy_to_pageable_memory_is_the_copy_then_the_stream_sync(trace: Trace) -> None:
    syncs = load_trace(trace("sync_cpu_copy")).syncs  # x.cpu() of 4 MiB
    assert [(s.call, s.kind) for s in syncs] == [("cudaMemcpyAsync", "copy"), ("cudaStreamSynchronize", "stream")]
    copy, stream = syncs
    assert copy.memcpy == "Memcpy DtoH (Device -> Pageable)"
    assert copy.ops == stream.ops == ("aten::to", "aten::_to_copy", "aten::copy_")
    assert copy.duration_us > 200 > 20 > stream.duration_us  # the host waits inside the copy
    assert syncs.count(kind="copy") == 1
    assert syncs.count("cudaMemcpyAsync") == 1
    assert syncs.count("cuda*Synchronize") == 1


@pytest.mark.parametrize(
    ("name", "kinds"),
    [
        ("copy_dtoh_pageable_nonblocking", ["copy"]),  # non_blocking, yet ~300 us in the call
        ("copy_htod_pageable", ["copy", "stream"]),
        ("copy_htod_pageable_nonblocking", ["copy"]),
        ("copy_htod_pinned_nonblocking", []),
        ("copy_dtoh_pinned_nonblocking", []),
        ("copy_dtod", []),
    ],
)
def test_copies_sync_when_host_memory_is_pageable(trace: Trace, name: str, kinds: list[str]) -> None:
    syncs = load_trace(trace(name)).syncs
    assert [s.kind for s in syncs] == kinds


def test_sync_durations_are_the_fastest_calls_own(trace: Trace) -> None:
    # One call's host times, as the line above the sync table names it: not a median of each.
    prof = load_trace(trace("sync_cpu_copy"))
    assert prof.fastest_call.index == 2
    assert prof.syncs[0].duration_us == prof.calls[2].syncs[0].duration_us
    assert prof.calls[0].syncs[0].duration_us > 1000  # the first call of a session pays the profiler's start-up


def test_calls_that_sync_differently_show_the_call_with_most_syncs(trace: Trace) -> None:
    from pytest_kernelprof.assemble.syncs import representative_syncs

    calls = load_trace(trace("sync_cpu_copy")).calls
    mixed = [dataclasses.replace(calls[0], syncs=SyncList([])), calls[1], calls[2]]
    assert representative_syncs(mixed, None) is calls[1].syncs
    assert representative_syncs([mixed[0], calls[1]], None) is calls[1].syncs


def test_a_profile_without_gpu_activity_cannot_say_no_syncs() -> None:
    empty = SyncList(unavailable="no GPU activity was recorded because CUDA is not available")
    with pytest.raises(NoDeviceActivityError, match="CUDA is not available"):
        assert not empty
    with pytest.raises(NoDeviceActivityError):
        empty.count(kind="stream")
    assert not empty.measured
    assert repr(empty) == "SyncList(unavailable: no GPU activity recorded)"
    assert empty.table() == "(unmeasured: no GPU activity recorded)"  # a display: never "(no host syncs)"
    assert SyncList([]).table() == "(no host syncs)"


@pytest.mark.parametrize(
    ("name", "memcpy", "kind"),
    [
        ("cudaStreamSynchronize", None, "stream"),
        ("cudaStreamSynchronize_v3020", None, "stream"),
        ("cuStreamSynchronize", None, "stream"),
        ("cudaDeviceSynchronize", None, "device"),
        ("cuCtxSynchronize", None, "device"),
        ("cudaEventSynchronize", None, "event"),
        ("cuEventSynchronize_v2", None, "event"),
        ("cudaMemcpy", "Memcpy DtoH (Device -> Pinned)", "copy"),  # synchronous: returns when done
        ("cudaMemcpy_v3020", "Memcpy HtoD (Pinned -> Device)", "copy"),
        ("cudaMemcpy", "Memcpy DtoD (Device -> Device)", None),  # device to device never waits
        ("cuMemcpyDtoH_v2", None, "copy"),
        ("cuMemcpyDtoD_v2", None, None),
        ("cudaMemcpyAsync", "Memcpy DtoH (Device -> Pageable)", "copy"),
        ("cudaMemcpyAsync_ptsz", "Memcpy HtoD (Pageable -> Device)", "copy"),
        ("cuMemcpyDtoHAsync_v2", "Memcpy DtoH (Device -> Pageable)", "copy"),
        ("cudaMemcpyAsync", "Memcpy DtoH (Device -> Pinned)", None),
        ("cudaMemcpyAsync", None, None),  # no record: nothing says it waited
        ("cudaStreamWaitEvent", None, None),
        ("cudaEventRecordWithFlags", None, None),
        ("cudaEventQuery", None, None),
        ("cudaLaunchKernel", None, None),
    ],
)
def test_the_sync_list(name: str, memcpy: str | None, kind: str | None) -> None:
    assert sync_kind(name, memcpy) == kind


def test_api_names_lose_kinetos_suffixes() -> None:
    assert api_name("cudaMemcpy_ptds") == "cudaMemcpy"
    assert api_name("cuMemcpyDtoH_v2") == "cuMemcpyDtoH"
    assert api_name("cudaStreamSynchronize") == "cudaStreamSynchronize"


def test_count_by_versioned_call_and_unknown_kind() -> None:
    syncs = SyncList([Sync(call="cudaStreamSynchronize_v3020", kind="stream", op=None, ops=(), duration_us=1.0)])
    assert syncs.count("cudaStreamSynchronize") == 1
    assert syncs.count(call="cudaStreamSynchronize", kind="device") == 0
    with pytest.raises(ValueError, match="unknown sync kind 'host'; the sync kinds are: stream, device, event, copy"):
        syncs.count(kind="host")


def test_a_call_that_names_no_sync_api_is_a_typo_not_a_count_of_0() -> None:
    syncs = SyncList([Sync(call="cudaStreamSynchronize_v3020", kind="stream", op=None, ops=(), duration_us=1.0)])
    with pytest.raises(
        ValueError,
        match=r"^syncs.count\('cudaStreamSynchronise'\): no CUDA call that syncs the host has that name "
        r"\(did you mean 'cudaStreamSynchronize'",
    ):
        syncs.count("cudaStreamSynchronise")
    assert syncs.count("cudaDeviceSynchronize") == 0  # a known call that did not run
    assert syncs.count("cuMemcpyDtoH_v2") == 0
    assert syncs.count("cuda*Synchronise") == 0  # a glob is the user's to word


def test_failure_reprs_name_each_sync(trace: Trace) -> None:
    syncs = load_trace(trace("sync_cpu_copy")).syncs
    first, table = repr(syncs), syncs.table().splitlines()
    # pytest prints `assert not prof.syncs` on one line: the repr is that one line.
    assert "\n" not in first
    # Short (issue 21 item 13): pytest prints it twice, the assertion and its "where"; the table has the rest.
    assert first.startswith("SyncList of 2: cudaMemcpyAsync in aten::copy_; cudaStreamSynchronize in aten::copy_")
    assert len(first) < 160
    assert "to fix" not in first  # said once, under the table the failure's report shows
    # The time column names the call whose own times they are, as `kernelprof show`'s: the fastest call's.
    assert table[0].split() == ["#", "runtime", "call", "kind", "copy", "call", "2", "host", "us", "ops", "where"]
    assert load_trace(trace("sync_cpu_copy")).fastest_call.index == 2
    assert "call 2 host us" in syncs[:1].table().splitlines()[0]  # a slice is still the call's
    assert table[1].split()[:5] == ["0", "cudaMemcpyAsync", "copy", "DtoH", "pageable"]
    assert table[2].split()[:4] == ["1", "cudaStreamSynchronize", "stream", "-"]
    count = syncs.count(kind="stream")
    assert count == 1
    assert count.explain()[0] == "syncs.count(kind='stream') matched 1 of 2 host syncs"
    assert "cudaStreamSynchronize" in count.explain()[2]
    assert "cudaMemcpyAsync" not in "".join(count.explain())
    assert repr(SyncList([])) == "SyncList(no host syncs)"


def test_the_profile_table_ends_with_the_syncs(trace: Trace) -> None:
    text = load_trace(trace("sync_mask_index")).table()
    assert "numbered from 0, the fastest of 3 by host span: 5 launches, " in text
    assert "1 host sync:" in text
    # The sync table, then what would remove the sync: the host's read of the nonzero count (its
    # DtoH copy is that read: no second line for it).
    assert text.splitlines()[-2].split()[:4] == ["0", "cudaStreamSynchronize", "stream", "-"]
    assert text.splitlines()[-1].startswith("to fix: the host read a GPU value")
    assert load_trace(trace("copy_dtod")).table().endswith("no host syncs")


@pytest.mark.parametrize(
    ("name", "count_fix"),
    [
        ("sync_item_stacks", "the host read a GPU value"),
        ("sync_cpu_copy", "a copy to or from pageable memory blocks the host"),  # as the copies' failures say it
        ("sync_device", "torch.cuda.synchronize() waits"),
        ("sync_event", "event.synchronize() blocks"),
    ],
)
def test_sync_failures_say_what_would_remove_them(trace: Trace, name: str, count_fix: str) -> None:
    prof = load_trace(trace(name))
    syncs = prof.syncs
    # `assert not prof.syncs` prints the repr twice (the assertion, its "where"): no fix in it; the
    # profile's table under the failure says it once (a trial read it twice on long lines).
    assert "to fix" not in repr(syncs)
    fixes = syncs.fix_lines()
    assert len(fixes) == 1
    assert fixes[0].startswith(f"to fix: {count_fix}")
    tabled = [line for line in prof.table().splitlines() if line.startswith("to fix: ")]
    assert tabled[: len(fixes)] == fixes  # the copies' own, if any, after them
    assert [line for line in syncs.count().explain() if line.startswith("to fix: ")] == fixes


def test_copy_counts_say_what_would_remove_the_copies(trace: Trace) -> None:
    explained = load_trace(trace("sync_cpu_copy")).copies.count(direction="DtoH").explain()
    assert explained[-2:] == [
        "to fix: a copy to or from pageable memory blocks the host: copy into pinned host memory "
        "(t.pin_memory(), or pin_memory=True) with non_blocking=True",
        "to fix: a DtoH copy reads GPU results on the host: keep them on the GPU, or read them once per step",
    ]
    # Nothing counted (the table is all the copies): nothing to fix.
    none = load_trace(trace("sync_cpu_copy")).copies.count(direction="HtoD").explain()
    assert not [line for line in none if line.startswith("to fix")]


def test_a_sync_carries_the_frames_around_it(trace: Trace) -> None:
    prof = load_trace(trace("sync_item_stacks"))
    # The profiler names the function's def line (40), not the line of loss.item() (45).
    assert prof.syncs[0].stack == ("train.py(40): train_step_item",)
    assert prof.syncs[0].where == "train.py(40): train_step_item"
    assert prof.syncs[0].line is None  # only a live profile learns the line
    assert all(c.syncs[0].stack == prof.syncs[0].stack for c in prof.calls)
    assert "at train.py(40): train_step_item" in repr(prof.syncs)


def test_without_stacks_frames_are_none_not_empty(trace: Trace) -> None:
    prof = load_trace(trace("sync_mask_index"))
    assert prof.syncs[0].stack is None
    assert all(k.stack is None for k in prof.kernels)


IDLE_TRACES = [
    "h200_geglu_eager",
    "h200_sync_item_stacks",
    "h200_train_compiled",
    "h200_decode_graphs",
    "h100_liger_rope",
]


@pytest.mark.parametrize("name", IDLE_TRACES)
def test_the_idle_spans_are_the_host_span_less_its_busy_time(name: str) -> None:
    for call in load_trace(DATA / f"{name}.json.gz").calls:
        spans = call.gpu_idle_spans
        assert sum(end - start for start, end in spans) == pytest.approx(call.wall_us - call.gpu_busy_us, abs=1e-6)
        edges = [edge for span in spans for edge in span]
        assert edges == sorted(edges)
        assert all(start < end for start, end in spans)
        assert not spans or (spans[0][0] >= 0 and spans[-1][1] <= call.wall_us + 1e-9)
        for kernel in call.kernels:  # no kernel runs in an idle span
            start, end = kernel.start_us or 0.0, (kernel.start_us or 0.0) + kernel.duration_us
            assert all(end <= a + 1e-6 or start >= b - 1e-6 for a, b in spans), (kernel.name, spans)


def test_the_wait_for_the_first_kernel_is_idle() -> None:
    call = load_trace(DATA / "h200_geglu_eager.json.gz").calls[1]
    first = call.gpu_idle_spans[0]
    assert first[0] == 0.0
    assert first[1] == pytest.approx(73.0, abs=0.1)  # a memset there, then the first GEMM at 81 us
    assert call.kernels[0].start_us == pytest.approx(81.0, abs=0.1)
    assert call.gpu_idle_spans[-1][1] < call.wall_us  # the host returned with kernels still running
