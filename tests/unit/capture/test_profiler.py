"""How a session starts: below torch.profiler.profile where that records the same, else through it.

torch.profiler.profile's start imports Inductor (over 3 s in a fresh process) only to read
one setting; capture skips it where the setting cannot apply, and must record the same.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof.api import Capture, capture_profile
from pytest_kernelprof.capture import KinetoSession, profiler_running
from pytest_kernelprof.capture import profiler as capture
from pytest_kernelprof.options import ProfileOptions

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="these tests pin the CPU-only behaviour")


def _step(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.linear(x, x).relu().sum()


@pytest.fixture
def direct(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capture, "_direct_session_is_equivalent", lambda _torch: True)


@pytest.fixture
def public(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capture, "_direct_session_is_equivalent", lambda _torch: False)


def _capture(stacks: bool = False) -> Capture:
    return capture_profile(_step, (torch.randn(8, 8),), options=ProfileOptions(stacks=stacks))


def test_a_fresh_process_profiles_without_importing_inductor() -> None:
    code = (
        "import sys, torch, pytest_kernelprof as kp\n"
        "c = kp.Profiler()\n"
        "c(torch.relu, torch.randn(4))\n"
        "print(type(c.captures[-1].torch_profiler).__name__, 'torch._inductor' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["KinetoSession", "False"]


def test_where_inductors_cudagraphs_is_on_or_unreadable_torch_profiler_profile_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "torch._inductor", raising=False)
    monkeypatch.delenv("TORCHINDUCTOR_CUDAGRAPHS", raising=False)
    assert capture._direct_session_is_equivalent(torch)
    assert isinstance(_capture().torch_profiler, KinetoSession)
    monkeypatch.setenv("TORCHINDUCTOR_CUDAGRAPHS", "1")
    assert not capture._direct_session_is_equivalent(torch)
    assert isinstance(_capture().torch_profiler, torch.profiler.profile)
    monkeypatch.delenv("TORCHINDUCTOR_CUDAGRAPHS")
    monkeypatch.setitem(sys.modules, "torch._inductor", types.ModuleType("torch._inductor"))
    monkeypatch.delitem(sys.modules, "torch._inductor.config", raising=False)
    assert not capture._direct_session_is_equivalent(torch)  # no config to read
    config = types.ModuleType("torch._inductor.config")
    config.triton = types.SimpleNamespace(cudagraphs=True)
    monkeypatch.setitem(sys.modules, "torch._inductor.config", config)
    assert not capture._direct_session_is_equivalent(torch)
    # Imported Inductor with its cudagraphs off: torch.profiler.profile would skip the workaround too.
    config.triton.cudagraphs = False
    assert capture._direct_session_is_equivalent(torch)
    assert isinstance(_capture().torch_profiler, KinetoSession)


def test_a_torch_without_the_autograd_profilers_steps_takes_torch_profiler_profile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "torch._inductor", raising=False)
    monkeypatch.delattr(torch.autograd.profiler.profile, "_prepare_trace")
    assert not capture._direct_session_is_equivalent(torch)


def _summary(prof: kp.KernelProfile) -> Any:
    return [(n, prof.ops[n].count, prof.ops[n].children) for n in prof.ops], len(prof.calls)


@pytest.mark.parametrize("stacks", [False, True])
def test_both_starts_give_the_same_profile_and_trace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, stacks: bool
) -> None:
    results = []
    for direct in (True, False):
        monkeypatch.setattr(capture, "_direct_session_is_equivalent", lambda _torch, d=direct: d)
        captured = _capture(stacks=stacks)
        assert isinstance(captured.torch_profiler, KinetoSession) is direct
        path = tmp_path / f"{direct}.json.gz"
        captured.export_trace(path)
        trace = json.loads(gzip.decompress(path.read_bytes()))
        names = {e.get("cat") for e in trace["traceEvents"]}
        results.append((_summary(captured.profile), _summary(kp.load_trace(path)), names, trace.get("with_stack")))
    direct_result, public_result = results
    assert direct_result == public_result
    assert direct_result[0] == direct_result[1]  # the trace says what the live profile says
    assert ("python_function" in direct_result[2]) is stacks
    assert direct_result[3] == (1 if stacks else None)  # torch writes the value as JSON


@pytest.mark.usefixtures("direct")
def test_a_direct_start_that_fails_is_reported_and_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: Any) -> None:
        raise RuntimeError("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES")

    monkeypatch.setattr(torch.autograd.profiler.profile, "_start_trace", refuse)
    with pytest.raises(kp.ProfilerStartError, match="CUPTI_ERROR_INSUFFICIENT_PRIVILEGES.*nsys"):
        _capture()
    monkeypatch.undo()
    assert not profiler_running()
    assert len(_capture().profile.calls) == 3  # the next session starts


@pytest.mark.usefixtures("direct")
def test_a_direct_session_is_busy_detected_and_stopped_when_the_callable_raises() -> None:
    with torch.profiler.profile(), pytest.raises(kp.ProfilerBusyError):
        _capture()

    def broken(x: torch.Tensor) -> None:
        torch.relu(x)
        raise KeyError("x")

    with pytest.raises(KeyError):
        capture_profile(broken, (torch.randn(4),), options=ProfileOptions(warmup=0))
    assert not profiler_running()
    assert len(_capture().profile.calls) == 3
