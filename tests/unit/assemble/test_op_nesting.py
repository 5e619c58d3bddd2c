"""An op inside an op of the same name (ATen's ``sum.dim_IntList`` calling ``sum.IntList_out``) is
part of the outer one in the by-name view: counted once, its kernels and time once."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_kernelprof import KernelProfError, KernelProfile, load_trace
from tests.helpers import DATA, Stream, build

# Tried in order, as tools/dump_profiles.py does: every recorded trace loads with one of them.
LOAD_OPTIONS: tuple[dict[str, bool], ...] = (
    {},
    {"allow_variation": True},
    {"check_complete": False},
    {"allow_variation": True, "check_complete": False},
)
RECORDED = sorted(p.name for p in DATA.glob("*.json.gz") if not p.name.endswith(".kineto.json.gz"))


def _load(path: Path) -> KernelProfile:
    for options in LOAD_OPTIONS[:-1]:
        try:
            return load_trace(path, **options)
        except KernelProfError:
            pass
    return load_trace(path, **LOAD_OPTIONS[-1])


def test_a_sum_that_calls_sum_is_one_call_with_its_kernel_once(trace: Path) -> None:
    prof = load_trace(trace("train_compiled"))
    assert prof.ops["aten::sum"].kernels.count() == 1
    for call in prof.calls:  # each call's own times (the profile's are medians, taken apart)
        op = call.ops["aten::sum"]
        (kernel,) = op.kernels
        assert "reduce_kernel" in kernel.name
        assert op.count == 1
        # Its kernel and the memset before it (0.7us), once: it was 16.4us, the two counted twice.
        largest_memset = max(m.duration_us for m in call.memory_ops)
        assert kernel.duration_us < op.device_time_us <= kernel.duration_us + largest_memset
        assert op.self_device_time_us == op.device_time_us
        assert op.children == ["aten::as_strided"]  # the inner sum's child, in its place


def test_a_mul_inside_a_mul_counts_its_kernels_once(trace: Path) -> None:
    op = load_trace(trace("sdpa_math")).ops["aten::mul"]
    assert len(op.kernels) == len({id(k) for k in op.kernels}) == 2
    assert op.device_time_us == pytest.approx(op.kernels.total_us)


def test_an_op_is_never_longer_on_the_gpu_than_its_parent(trace: Path) -> None:
    ops = load_trace(trace("sync_item_stacks")).ops
    inner, outer = ops["aten::mse_loss_backward"], ops["MseLossBackward0"]
    assert "aten::mse_loss_backward" in outer.children
    assert len(inner.kernels) == len({id(k) for k in inner.kernels}) == 2
    assert inner.device_time_us <= outer.device_time_us


@pytest.mark.parametrize("name", RECORDED)
def test_no_op_of_a_recorded_trace_holds_a_kernel_twice(name: str) -> None:
    prof = _load(DATA / name)
    for call in prof.calls:
        if not call.kernels.measured:
            continue
        memory_us = sum(m.duration_us for m in call.memory_ops)
        for op in (call.ops[n] for n in call.ops):
            kernels = {id(k): k for k in op.kernels}
            assert len(kernels) == len(op.kernels), (call.index, op)
            # Device time: its kernels' and at most every memory op of the call.
            kernel_us = sum(k.duration_us for k in kernels.values())
            assert op.device_time_us <= kernel_us + memory_us + 1e-6, (call.index, op)


def test_the_inner_ops_children_take_its_place_and_its_time_is_the_outers_own() -> None:
    s = Stream()
    s.step(0, 0, 200)
    s.op("aten::sum", 10, 100)  # sum.dim_IntList
    s.op("aten::sum", 12, 90)  # sum.IntList_out, inside it
    s.op("aten::sum", 14, 20)  # deeper still
    empty = s.op("aten::empty", 15, 5)
    s.launch(empty, "memset_kernel", 16)
    s.op("aten::fill_", 40, 10)
    launch = s.op("aten::sum", 60, 20)  # a third level under the second, beside fill_
    s.launch(launch, "reduce_kernel", 61)
    s.op("aten::sum", 150, 10)  # a second call, after the first
    prof = build(s)
    op = prof.ops["aten::sum"]
    assert op.count == 2
    assert op.cpu_time_us == pytest.approx(110)
    assert op.children == ["aten::empty", "aten::fill_"]
    assert op.children_vary  # the second call has none
    # Its own time: outside empty and fill_, the inner sums' time included.
    assert op.self_cpu_time_us == pytest.approx(110 - 5 - 10)
    assert op.kernels.names == ["memset_kernel", "reduce_kernel"]
    assert op.device_time_us == pytest.approx(4.0)
    assert op.self_device_time_us == pytest.approx(2.0)  # reduce_kernel, launched by an inner sum
    assert list(prof.ops) == ["aten::sum", "aten::empty", "aten::fill_"]


def test_a_same_name_op_under_another_op_still_counts_as_that_ops_child() -> None:
    s = Stream()
    s.step(0, 0, 200)
    s.op("aten::to", 10, 100)
    s.op("aten::copy_", 12, 80)
    inner = s.op("aten::to", 14, 20)  # inside to, through copy_: part of the outer to
    s.launch(inner, "copy_kernel", 15)
    prof = build(s)
    assert prof.ops["aten::to"].count == 1
    assert prof.ops["aten::to"].kernels.names == ["copy_kernel"]
    assert prof.ops["aten::copy_"].children == ["aten::to"]
    assert prof.ops["aten::copy_"].kernels.names == ["copy_kernel"]


def test_the_op_tree_adds_each_occurrence_to_its_path() -> None:
    s = Stream()
    s.step(0, 0, 300)
    for start in (10, 100):
        s.op("aten::linear", start, 50)
        s.op("aten::t", start + 1, 10)
        s.op("aten::as_strided", start + 2, 2)
        mm = s.op("aten::addmm", start + 20, 20)
        s.launch(mm, "nvjet_sm90_tst_64x8_64x16_2x4_h_bz_TNT", start + 21)
    s.op("aten::as_strided", 200, 4)  # on its own, at the top
    prof = build(s)
    linear, strided = prof.ops.tree()
    assert (linear.name, linear.count, linear.cpu_time_us, linear.device_time_us) == ("aten::linear", 2, 100, 4)
    assert [(c.name, c.count, c.cpu_time_us) for c in linear.children] == [("aten::t", 2, 20), ("aten::addmm", 2, 40)]
    assert [(c.name, c.count, c.cpu_time_us) for c in linear.children[0].children] == [("aten::as_strided", 2, 4)]
    assert (strided.name, strided.count, strided.cpu_time_us, strided.children) == ("aten::as_strided", 1, 4, ())
    assert prof.ops["aten::as_strided"].count == 3  # by name: every place
