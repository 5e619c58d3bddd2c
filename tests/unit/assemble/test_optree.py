"""Kernel.op and Kernel.ops: the chain of ranges around each launch, Inductor's own ranges left
out, and the Triton family of kernels whose names do not say it (hand-made traces, times in us)."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_kernelprof import KernelProfile, load_trace
from pytest_kernelprof.types import Kernel
from tests.helpers import Stream, triton_trace, write

REGION = "Torch-Compiled Region: 0/0"
GRAPH = "## Call CompiledFxGraph fabc123 ##"


def compiled_training_call(s: Stream, t: float = 0.0) -> None:
    """One call of a compiled step: forward in CompiledFunction, backward on the autograd
    thread, an Inductor kernel, a user Triton kernel inside the graph, an ATen GEMM."""
    s.step(0, t, 200)
    s.op(REGION, t + 1, 90)
    s.op("CompiledFunction", t + 2, 80)
    s.op(GRAPH, t + 3, 70)
    launch = s.op("triton_poi_fused_add_0", t + 4, 5)
    s.launch(launch, "triton_poi_fused_add_0", t + 5)
    user = s.op("my_scale_rows_kernel_0", t + 12, 5)  # Inductor's name for a user kernel
    s.launch(user, "my_scale_rows_kernel", t + 13)
    mm = s.op("aten::mm", t + 20, 10)
    s.launch(mm, "nvjet_sm90_tst_64x8_64x16_2x4_h_bz_TNT", t + 21)
    # backward, on the autograd thread
    s.x("cpu_op", "autograd::engine::evaluate_function: CompiledFunctionBackward", t + 100, 50, tid=2)
    s.x("cpu_op", "CompiledFunctionBackward", t + 101, 45, tid=2)
    s.x("cpu_op", "## Call CompiledFxGraph fdef456 ##", t + 102, 40, tid=2)
    ident = s._id()
    s.x("cpu_op", "triton_red_fused_sum_1", t + 103, 5, tid=2, **{"External id": ident})
    s.launch(ident, "triton_red_fused_sum_1", t + 104)


def test_inductor_kernels_get_their_region_as_op_and_the_chain_without_their_launch_range(tmp_path: Path) -> None:
    s = Stream()
    compiled_training_call(s)
    prof = load_trace(write(tmp_path, s))
    fused, user, gemm, backward = prof.kernels
    assert (fused.op, fused.ops) == ("CompiledFunction", (REGION, "CompiledFunction", GRAPH))
    assert (fused.kind, fused.family) == ("pointwise", "inductor")
    # A user's @triton.jit kernel that Inductor launched: a Triton kernel, by its launcher.
    assert (user.op, user.family, user.kind) == ("CompiledFunction", "triton", "other")
    assert user.ops == (REGION, "CompiledFunction", GRAPH)
    assert (gemm.op, gemm.ops) == ("aten::mm", (REGION, "CompiledFunction", GRAPH, "aten::mm"))
    assert backward.op == "CompiledFunctionBackward"
    assert backward.ops[0] == "autograd::engine::evaluate_function: CompiledFunctionBackward"
    assert [k.module for k in prof.kernels] == [None] * 4
    # The op table still has every range, Inductor's too.
    assert prof.ops["CompiledFunction"].kernels.names == [fused.name, user.name, gemm.name]
    assert prof.ops["triton_poi_fused_add_0"].kernels.names == [fused.name]


def test_inference_kernels_get_the_compiled_region(tmp_path: Path) -> None:
    s = Stream()
    s.step(0, 0, 100)
    s.op(REGION, 1, 90)
    s.op(GRAPH, 2, 80)
    launch = s.op("triton_per_fused_mean_0", 3, 5)
    s.launch(launch, "triton_per_fused_mean_0", 4)
    kernel = load_trace(write(tmp_path, s)).kernels.one()
    assert (kernel.op, kernel.ops) == (REGION, (REGION, GRAPH))


def test_chains_do_not_depend_on_the_order_events_come_in(tmp_path: Path) -> None:
    ordered = Stream()
    compiled_training_call(ordered)
    shuffled = Stream()
    shuffled.events = list(ordered.events)
    random.Random(0).shuffle(shuffled.events)
    a = load_trace(write(tmp_path, ordered))
    b = load_trace(write(tmp_path, shuffled))
    assert [(k.op, k.ops) for k in b.kernels] == [(k.op, k.ops) for k in a.kernels]


def test_a_chain_is_the_same_in_every_call_and_in_the_fastest_call(tmp_path: Path) -> None:
    s = Stream()
    for i in range(3):
        t = 1000.0 * i
        s.step(i, t, 100)
        s.op("aten::linear", t + 1, 40)
        mm = s.op("aten::addmm", t + 10, 20)
        s.launch(mm, "nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN", t + 12)
    prof = load_trace(write(tmp_path, s))
    chains = [call.kernels[0].ops for call in (prof.call, *prof.calls)]
    assert chains == [("aten::linear", "aten::addmm")] * 4
    assert prof.ops["aten::linear"].kernels == prof.kernels  # op.kernels counts descendants


def test_a_kernel_made_by_hand_has_its_op_as_chain() -> None:
    assert Kernel(name="k", kind="other", family="unknown", op="aten::mm").ops == ("aten::mm",)
    assert Kernel(name="k", kind="other", family="unknown").ops == ()


def user_triton_trace(tmp_path: Path, **top: Any) -> KernelProfile:
    """A call of a user's own Triton kernel (its name says nothing) and a cuBLAS GEMM."""
    s = Stream()
    s.step(0, 0, 100)
    s.launch(s.op("my_lib::scale_rows", 1, 20), "my_scale_rows_kernel", 2)
    s.launch(s.op("aten::mm", 30, 20), "nvjet_sm90_tst_64x8_64x16_2x4_h_bz_TNT", 31)
    return load_trace(write(tmp_path, s, **top))


def test_kernels_capture_learned_are_triton_kernels_offline(tmp_path: Path) -> None:
    learned = {"version": 1, "triton_kernels": ["my_scale_rows_kernel", "nvjet_sm90_tst_64x8_64x16_2x4_h_bz_TNT"]}
    prof = user_triton_trace(tmp_path, kernelprof=learned)
    assert [(k.kind, k.family) for k in prof.kernels] == [("other", "triton"), ("gemm", "nvjet")]
    # A trace that torch alone wrote cannot tell: the kernel stays unknown.
    assert user_triton_trace(tmp_path).kernels[0].family == "unknown"
    # Later versions may add keys: the known ones are read, the others ignored.
    newer = {"version": 2, "triton_kernels": ["my_scale_rows_kernel"], "syncs": {}}
    assert user_triton_trace(tmp_path, kernelprof=newer).kernels[0].family == "triton"


def test_a_liger_kernel_is_liger_by_its_function_or_by_what_capture_learned(tmp_path: Path) -> None:
    # Launched by LigerRMSNormFunction: Liger's, even in a trace torch alone wrote.
    assert [(k.kind, k.family) for k in triton_trace(tmp_path).kernels] == [
        ("reduction", "liger"),
        ("gemm", "nvjet"),
        ("other", "unknown"),
    ]


def test_kernels_a_cuda_graph_replays_get_their_compiled_region_as_op(trace: Callable[[str], Path]) -> None:
    # Trial report (C): every replayed kernel read "launched by ## Call CompiledFxGraph f5fy... ##",
    # a hash that changes from run to run.
    graphs = load_trace(trace("decode_graphs"))
    replayed = [k for k in graphs.kernels if k.op != "aten::_foreach_copy_"]
    assert len(replayed) == 24
    for kernel in replayed:
        assert kernel.op == REGION
        assert kernel.ops[0] == REGION
        assert kernel.ops[-1].startswith("## Call CompiledFxGraph ")  # the chain still has the graph call
    assert "##" not in graphs.kernels.table()
    # As without CUDA graphs, where the Triton kernels' op is the same region.
    compiled = load_trace(trace("decode_compiled"))
    assert {k.op for k in compiled.kernels if k.family == "inductor"} == {REGION}
