"""Compile health and GPU memory live on a real GPU (``pytest -m gpu``); the offline tests read
the same facts from H200 traces (tests/unit/test_health.py, test_memory.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof.capture import run as capture

pytestmark = pytest.mark.gpu

MiB64 = 64 * 2**20


def test_a_leak_retains_memory_every_call_and_a_steady_loop_does_not(kernelprof: kp.Profiler) -> None:
    kept: list[torch.Tensor] = []

    def leak() -> None:
        kept.append(torch.ones(MiB64 // 4, device="cuda"))

    def steady() -> torch.Tensor:
        return torch.ones(MiB64 // 4, device="cuda")

    leaking = kernelprof(leak).memory
    assert leaking.retained_bytes == MiB64
    assert leaking.peak_bytes == MiB64
    assert [r.retained for r in leaking.readings or ()] == [MiB64] * 3
    assert leaking.malloc_calls == 1  # the cache holds no free 64 MiB block: a new one each call
    kept.clear()
    torch.cuda.empty_cache()

    held = kernelprof(steady).memory
    assert held.retained_bytes == 0  # the return value is released before the reading
    assert held.peak_bytes == MiB64
    assert held.malloc_calls == 0  # the freed block is reused


def test_readings_change_neither_the_kernels_nor_the_calls(
    kernelprof: kp.Profiler, monkeypatch: pytest.MonkeyPatch
) -> None:
    x = torch.randn(1024, 1024, device="cuda")

    def fn() -> torch.Tensor:
        return torch.relu(x @ x) + 1

    measured = kernelprof(fn)
    monkeypatch.setattr(capture, "meter_for", lambda torch_module: None)
    bare = kernelprof(fn)
    assert measured.kernels.names == bare.kernels.names
    assert measured.runtime == bare.runtime  # no runtime call of the readings inside a call
    assert measured.ops.names == bare.ops.names
    assert measured.memory.peak_bytes >= 2 * 1024 * 1024 * 4
    with pytest.raises(kp.CannotTellError):
        _ = bare.memory.peak_bytes


def test_the_private_counters_agree_with_the_public_api() -> None:
    stats = torch._C._cuda_memoryStats(torch.cuda.current_device())
    assert stats["allocated_bytes"]["all"]["current"] == torch.cuda.memory_allocated()
    assert stats["allocated_bytes"]["all"]["peak"] == torch.cuda.max_memory_allocated()


def breaks_on_the_gpu(x: torch.Tensor) -> torch.Tensor:
    y = torch.sin(x) * 2
    print("a graph break")
    s = y.sum().item()
    return torch.cos(y) + s


def test_compile_health_with_inductor_and_its_trace(kernelprof: kp.Profiler, tmp_path: Path) -> None:
    prof = kernelprof(torch.compile(breaks_on_the_gpu), torch.randn(64, 64, device="cuda"))
    assert prof.compile.regions == 3
    assert prof.compile.frames == 3
    assert prof.compile.recompiles == 0
    assert [b.line for b in prof.compile.graph_breaks] == [
        breaks_on_the_gpu.__code__.co_firstlineno + 2,
        breaks_on_the_gpu.__code__.co_firstlineno + 3,
    ]
    assert prof.kernels.count("triton_*") == 3
    path = tmp_path / "breaks.json.gz"
    kernelprof.captures[-1].export_trace(path)
    loaded = kp.load_trace(path)
    assert loaded.compile.region_ids == prof.compile.region_ids
    assert loaded.memory.malloc_calls == prof.memory.malloc_calls


def test_a_forbid_rule_on_a_live_gpu_profile() -> None:
    from pytest_kernelprof.checks.rules import parse_rules

    torch.manual_seed(0)
    lin = torch.nn.Linear(256, 256, device="cuda")  # fp32
    x = torch.randn(512, 256, device="cuda")
    profiler = kp.Profiler(forbid=parse_rules(["fp32-gemm: kind=gemm dtype=fp32,tf32 | use bf16"]))
    with pytest.raises(kp.ForbiddenError, match=r"rule 'fp32-gemm' \(kind=gemm dtype=fp32,tf32\) is broken: use bf16"):
        profiler.profile(lin, (x,), no_grad=True)
    profiler.profile(lin.to(torch.bfloat16), (x.to(torch.bfloat16),), no_grad=True)


def test_a_baseline_keeps_live_metrics_and_fails_on_worse_ones(kernelprof: kp.Profiler, tmp_path: Path) -> None:
    from pytest_kernelprof.checks.baseline import BaselineNote, KernelBaseline

    x = torch.randn(1024, 1024, device="cuda")

    def lean() -> torch.Tensor:
        return (x * 2).sum()

    def heavy() -> torch.Tensor:
        y = x * 2
        z = torch.cat([y, y, y, y])  # a 16 MiB temporary: four times the peak
        return z[: len(y)].sum() + y.sum().item() * 0  # and a host sync

    notes: list[BaselineNote] = []
    path = tmp_path / "test_m.json"
    KernelBaseline(path, "t.py::t", update=True, names="loose", notes=notes).check(kernelprof(lean))
    stored = json.loads(path.read_text())["archs"][kernelprof.captures[-1].profile.arch]
    assert stored["default"]["metrics"]["syncs"] == 0
    assert stored["default"]["metrics"]["peak_bytes"] > 0
    with pytest.raises(AssertionError) as info:
        KernelBaseline(path, "t.py::t", update=False, names="loose", notes=notes).check(kernelprof(heavy))
    message = str(info.value)
    assert "syncs: 0 -> 1" in message
    assert "peak_bytes: " in message
