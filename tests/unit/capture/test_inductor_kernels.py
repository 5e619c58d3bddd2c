"""Inductor's kernels read from their autotuners (capture/inductor_kernels.py), on objects shaped
as torch 2.11's are on an H100 (a ``CachingAutotuner`` with ``triton_meta["signature"]`` and
statically launched compile results that keep no TTIR), and on ones that lack those attributes."""

from __future__ import annotations

import gzip
import json
import sys
import types
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof.capture import inductor_kernels
from pytest_kernelprof.capture.inductor_kernels import HEURISTICS_MODULE, inductor_ir_facts, launching_graphs
from pytest_kernelprof.decode.triton_ir import IrFacts
from pytest_kernelprof.traces import KERNEL, OP, RUNTIME, RawEvent
from tests import fake_gpu
from tests.helpers import DATA

GELU = "triton_poi_fused_gelu_mul_0"
SOFTMAX = "triton_red_fused__softmax_1"


class CachingAutotuner:
    """What capture reads of Inductor's: the kernel's names, its signature, its compile results."""

    def __init__(self, name: str, signature: dict[Any, Any], ttir: str | None = None) -> None:
        self.fn = SimpleNamespace(__name__=name, arg_names=[str(key) for key in signature])
        self.inductor_meta = {"kernel_name": name}
        self.triton_meta = {"signature": signature, "device": 0}
        kernel = SimpleNamespace(asm={"ttir": ttir}) if ttir is not None else SimpleNamespace(name=name)
        self.compile_results = [SimpleNamespace(kernel=kernel)]
        self.launchers = [SimpleNamespace(bin=None)]


def _module(key: str, **tuners: Any) -> tuple[str, types.ModuleType]:
    module = types.ModuleType(f"torch._inductor.runtime.compile_tasks.{key}")
    vars(module).update(tuners)
    return module.__name__, module


def _signature(*pointers: str) -> dict[str, str]:
    return {
        **{f"in_ptr{i}": f"*{t}" for i, t in enumerate(pointers[:-1])},
        "out_ptr0": f"*{pointers[-1]}",
        "xnumel": "i32",
    }


REAL_AUTOTUNER_TYPE = inductor_kernels._autotuner_type


@pytest.fixture(autouse=True)
def heuristics(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inductor's runtime, imported, with the fake autotuners; nothing read yet. (Not a fake
    runtime module in sys.modules: torch's profiler may import from the real one.)"""
    monkeypatch.setattr(inductor_kernels, "_autotuner_type", lambda: CachingAutotuner)
    monkeypatch.setattr(inductor_kernels._Read, "modules", None)
    monkeypatch.setattr(inductor_kernels._Read, "facts", {})


def _graph_events(*graphs: tuple[str, list[str]]) -> list[RawEvent]:
    """A profile: per graph, its ``## Call CompiledFxGraph`` range around a launch of each kernel."""
    events, time, correlation = [], 0, 0
    for graph, kernels in graphs:
        start = time
        for name in kernels:
            correlation += 1
            time += 10
            events.append(
                RawEvent(
                    category=RUNTIME, name="cuLaunchKernel", start=time, end=time + 5, thread=1, correlation=correlation
                )
            )
            events.append(
                RawEvent(category=KERNEL, name=name, start=time + 6, end=time + 9, stream=7, correlation=correlation)
            )
        time += 10
        events.append(
            RawEvent(category=OP, name=f"## Call CompiledFxGraph {graph} ##", start=start, end=time, thread=1)
        )
    return events


def test_a_statically_launched_kernel_reads_its_signature_with_the_kind_its_name_says() -> None:
    modules = [
        _module("a", gelu=CachingAutotuner(GELU, {"in_out_ptr0": "*bf16", "xnumel": "i32", "XBLOCK": "constexpr"})),
        _module("b", softmax=CachingAutotuner(SOFTMAX, _signature("i64", "fp16", "fp16"))),
    ]
    facts = inductor_ir_facts({GELU, SOFTMAX, "triton_poi_fused_add_2"}, [], 0, modules)
    assert facts == {GELU: IrFacts("pointwise", "bf16"), SOFTMAX: IrFacts("reduction", "fp16")}


def test_a_kernel_that_keeps_its_ttir_is_read_from_it() -> None:
    ttir = gzip.decompress((DATA / "triton_ir" / "gemm_bf16_matmul.ttir.gz").read_bytes()).decode()
    # a template that names no op: its name does not place it, its TTIR does
    template = CachingAutotuner("triton_tem_fused_0", {"arg_A": "*fp32", "arg_B": "*fp32", "out_ptr0": "*fp32"}, ttir)
    signature_only = CachingAutotuner("triton_tem_fused_1", {"arg_A": "*fp32", "arg_B": "*fp32", "out_ptr0": "*fp32"})
    facts = inductor_ir_facts(
        {"triton_tem_fused_0", "triton_tem_fused_1"}, [], 0, [_module("t", a=template, b=signature_only)]
    )
    assert facts == {"triton_tem_fused_0": IrFacts("gemm", "bf16")}  # the TTIR over the signature


def test_a_signature_keyed_by_position_is_named_from_the_kernels_arguments() -> None:
    tuner = CachingAutotuner(GELU, {0: "*i64", 1: "*bf16", 2: "*fp32", 3: "i32"})
    tuner.fn.arg_names = ["in_ptr0", "in_ptr1", "out_ptr0", "xnumel"]
    assert inductor_ir_facts({GELU}, [], 0, [_module("a", k=tuner)]) == {
        GELU: IrFacts("pointwise", "fp32")
    }  # out_ptr0 stores fp32


@pytest.mark.parametrize(
    "damage",
    [
        lambda t: delattr(t, "triton_meta"),
        lambda t: setattr(t, "triton_meta", {"device": 0}),  # no signature
        lambda t: setattr(t, "triton_meta", {"signature": ["*bf16"]}),  # not a mapping
        lambda t: setattr(t, "triton_meta", {"signature": {"in_ptr0": object()}}),
        lambda t: setattr(t, "triton_meta", None),
    ],
)
def test_an_autotuner_without_the_attributes_read_gives_no_facts(damage: Any) -> None:
    tuner = CachingAutotuner(GELU, _signature("bf16", "bf16"))
    damage(tuner)
    del tuner.compile_results, tuner.launchers
    assert inductor_ir_facts({GELU}, [], 0, [_module("a", k=tuner)]) == {}


def test_the_kernel_name_comes_from_inductor_meta_where_the_function_has_none() -> None:
    tuner = CachingAutotuner(GELU, _signature("bf16", "bf16"))
    tuner.fn = SimpleNamespace()
    assert inductor_ir_facts({GELU}, [], 0, [_module("a", k=tuner)]) == {GELU: IrFacts("pointwise", "bf16")}
    del tuner.inductor_meta
    inductor_kernels._Read.modules = None
    assert inductor_ir_facts({GELU}, [], 0, [_module("a", k=tuner)]) == {}


def test_the_autotuner_type_is_inductors_where_its_runtime_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = types.ModuleType(HEURISTICS_MODULE)
    runtime.CachingAutotuner = CachingAutotuner  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, HEURISTICS_MODULE, runtime)
    assert REAL_AUTOTUNER_TYPE() is CachingAutotuner
    runtime.CachingAutotuner = "renamed"  # type: ignore[attr-defined]
    assert REAL_AUTOTUNER_TYPE() is None


def test_without_inductors_runtime_nothing_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inductor_kernels, "_autotuner_type", REAL_AUTOTUNER_TYPE)
    monkeypatch.delitem(sys.modules, HEURISTICS_MODULE, raising=False)
    tuner = CachingAutotuner(GELU, _signature("bf16", "bf16"))
    assert inductor_ir_facts({GELU}, [], 0, [_module("a", k=tuner)]) == {}
    assert HEURISTICS_MODULE not in sys.modules  # and nothing imported it


def test_only_the_code_caches_modules_are_scanned_and_a_dead_proxy_is_skipped() -> None:
    tuner = CachingAutotuner(GELU, _signature("bf16", "bf16"))

    class Gone:
        pass

    gone = Gone()
    import weakref

    proxy = weakref.proxy(gone)
    del gone
    user = types.ModuleType("user_code")
    user.k = tuner  # type: ignore[attr-defined]
    user.p = proxy  # type: ignore[attr-defined]
    assert inductor_ir_facts({GELU}, [], 0, [("user_code", user)]) == {}
    inductor_kernels._Read.modules = None
    assert inductor_ir_facts({GELU}, [], 0, [_module("a", k=tuner, p=proxy)]) == {GELU: IrFacts("pointwise", "bf16")}


def test_a_name_is_read_again_only_once_more_modules_are_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    scans: list[int] = []
    real = inductor_kernels.autotuners

    def counted(modules: Any, autotuner: type) -> Any:
        scans.append(1)
        return real(modules, autotuner)

    monkeypatch.setattr(inductor_kernels, "autotuners", counted)
    modules = [_module("a", k=CachingAutotuner(GELU, _signature("bf16", "bf16")))]
    assert inductor_ir_facts({GELU}, [], 0, modules) == {GELU: IrFacts("pointwise", "bf16")}
    assert inductor_ir_facts({GELU}, [], 0, modules) == {GELU: IrFacts("pointwise", "bf16")}
    assert len(scans) == 1
    # a graph compiled since, whose kernel of the same name reads fp32: no dtype the two agree on
    modules.append(_module("b", k=CachingAutotuner(GELU, _signature("fp32", "fp32"))))
    assert inductor_ir_facts({GELU}, [], len(modules), modules) == {GELU: IrFacts("pointwise", None)}
    assert len(scans) == 2


def test_where_graphs_disagree_the_graph_the_capture_compiled_tells() -> None:
    """A bf16 graph of an earlier test and this capture's fp32 graph both hold the kernel name:
    the profile ran it under one graph, which the capture compiled."""
    modules = [
        _module("old", k=CachingAutotuner(GELU, _signature("bf16", "bf16"))),
        ("torch.nn", types.ModuleType("torch.nn")),
    ]
    since = len(modules)
    modules.append(_module("new", k=CachingAutotuner(GELU, _signature("fp32", "fp32"))))
    events = _graph_events(("fp32graph", [GELU]), ("fp32graph", [GELU]))
    assert inductor_ir_facts({GELU}, events, since, modules) == {GELU: IrFacts("pointwise", "fp32")}
    # nothing compiled during the capture: which graph ran cannot be told
    assert inductor_ir_facts({GELU}, events, len(modules), modules) == {GELU: IrFacts("pointwise", None)}


def test_a_name_the_profile_ran_under_two_graphs_gets_no_dtype() -> None:
    modules = [_module("old", k=CachingAutotuner(GELU, _signature("bf16", "bf16")))]
    modules.append(_module("new", k=CachingAutotuner(GELU, _signature("fp32", "fp32"))))
    events = _graph_events(("bf16graph", [GELU]), ("fp32graph", [GELU]))
    assert inductor_ir_facts({GELU}, events, 1, modules) == {GELU: IrFacts("pointwise", None)}
    outside = [e for e in _graph_events(("g", [GELU])) if e.category != OP]  # no graph range around it
    assert inductor_ir_facts({GELU}, outside, 1, modules) == {GELU: IrFacts("pointwise", None)}


def test_each_kernel_is_placed_under_the_graph_call_around_its_launch() -> None:
    events = _graph_events(("g1", [GELU, SOFTMAX]), ("g2", [GELU]))
    graphs = launching_graphs(events, {GELU, SOFTMAX})
    assert graphs == {
        GELU: {"## Call CompiledFxGraph g1 ##", "## Call CompiledFxGraph g2 ##"},
        SOFTMAX: {"## Call CompiledFxGraph g1 ##"},
    }
    # a launch on another thread than the graph call's is not under it
    moved = [RawEvent(**{**_fields(e), "thread": 2}) if e.category == RUNTIME else e for e in events]
    assert launching_graphs(moved, {SOFTMAX}) == {SOFTMAX: {None}}


def _fields(event: RawEvent) -> dict[str, Any]:
    return {name: getattr(event, name) for name in RawEvent.__slots__}


@pytest.mark.usefixtures("fake_gpu_sessions")
def test_capture_reads_inductors_kernels_and_writes_them_into_the_trace(
    fake_gpu_sessions: type[fake_gpu.Counts], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The session plays a compiled training step recorded on an H200 (tests/fake_gpu.py), whose
    Inductor kernels the generated module's autotuners read as bf16."""
    fake_gpu_sessions.started = fake_gpu.RECORDED.index("train_compiled")
    forward, backward = (
        "triton_poi_fused__unsafe_view_gelu_mul_0",
        "triton_poi_fused__unsafe_view_gelu_gelu_backward_mul_view_0",
    )
    name, module = _module(
        "fake",
        fwd=CachingAutotuner(forward, {"in_ptr0": "*bf16", "in_ptr1": "*bf16", "out_ptr0": "*bf16", "xnumel": "i32"}),
        bwd=CachingAutotuner(backward, {"in_out_ptr0": "*bf16", "in_ptr0": "*bf16", "xnumel": "i32"}),
    )
    monkeypatch.setitem(sys.modules, name, module)
    profiler = kp.Profiler()
    prof = profiler(lambda: torch.ones(4).sum())
    expected = {forward: {"kind": "pointwise", "dtype": "bf16"}, backward: {"kind": "pointwise", "dtype": "bf16"}}
    assert profiler.captures[-1].learned["triton_ir"] == expected
    assert {k.name: (k.dtype, k.evidence.dtype) for k in prof.kernels if k.name in expected} == {
        forward: ("bf16", "ir"),
        backward: ("bf16", "ir"),
    }
    path = tmp_path / "compiled.json.gz"
    profiler.captures[-1].export_trace(path)
    assert json.loads(gzip.decompress(path.read_bytes()))["kernelprof"]["triton_ir"] == expected
    offline = kp.load_trace(path).kernels
    assert {k.name: k.dtype for k in offline if k.name in expected} == {forward: "bf16", backward: "bf16"}
    # the third Inductor kernel has no autotuner here: no dtype, and it is not in the trace's key
    assert offline.one("triton_poi_fused_add_view_1").dtype is None
