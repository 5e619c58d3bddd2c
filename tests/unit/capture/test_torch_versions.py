"""The torch a capture runs on: one older than the floor is refused in one line before anything
runs, and what older supported ones need (a failed start leaves Kineto prepared on torch 2.11
and older) is done on every one, so that CI on the default torch covers it."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof.capture import profiler as capture
from pytest_kernelprof.capture import profiler_running
from tests.helpers import DATA

ROOT = Path(__file__).resolve().parents[3]
REFUSAL = "pytest-kernelprof needs torch>=2.6; this is 2.4.1"


@pytest.mark.parametrize(
    ("version", "refusal"),
    [
        ("2.4.1", REFUSAL),
        ("2.4.1+cu121", REFUSAL),  # the release is what to upgrade, not the build
        ("2.5.0.dev20240801", "pytest-kernelprof needs torch>=2.6; this is 2.5.0.dev20240801"),
        ("1.13.1", "pytest-kernelprof needs torch>=2.6; this is 1.13.1"),
        ("2.6.0", None),
        ("2.6.0a0+git1234", None),
        ("2.10.0", None),  # compared as numbers: "2.10" < "2.6" as text
        ("3.0.0", None),
        ("unknown", None),  # a source build that cannot say: not refused on a guess
        (None, None),
    ],
)
def test_a_torch_older_than_the_floor_is_refused_in_one_line(version: str | None, refusal: str | None) -> None:
    assert capture.unsupported_torch(version) == refusal


def test_the_floor_is_what_pyproject_requires() -> None:
    floor = ".".join(map(str, capture.MIN_TORCH))
    assert f'"torch>={floor}"' in (ROOT / "pyproject.toml").read_text()


def test_every_entry_point_that_profiles_refuses_an_old_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(torch, "__version__", "2.4.1+cu121")
        with pytest.raises(ImportError) as info:
            kp.profile(torch.relu, torch.randn(4))
        assert str(info.value) == REFUSAL
        with pytest.raises(ImportError, match=f"^{REFUSAL}$"):
            kp.Profiler()(torch.relu, torch.randn(4))
        with pytest.raises(ImportError, match=f"^{REFUSAL}$"), kp.Profiler().record():
            pass
        with pytest.raises(ImportError, match=f"^{REFUSAL}$"):
            kp.profile_ranks(_rank_step, 2)  # in this process, before a rank starts
    assert not profiler_running()  # refused before a session started
    # Reading a trace needs no torch at all, so any torch reads one.
    assert len(kp.load_trace(DATA / "h200_linear_eager.json.gz").kernels) == 1


def _rank_step(rank: int, world_size: int) -> Any:
    return lambda: None


def test_the_version_is_read_without_importing_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "torch")
    assert capture.torch_version() == importlib.metadata.version("torch")
    assert "torch" not in sys.modules
    monkeypatch.setitem(sys.modules, "torch", type(sys)("torch"))  # imported, without a version
    assert capture.torch_version() == importlib.metadata.version("torch")


@pytest.mark.skipif(torch.cuda.is_available(), reason="pins the CPU-only session")
def test_a_start_that_fails_once_prepared_releases_kineto(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch 2.11 and older keep a prepared trace that no session started, and the next
    session's prepare then fails ("Can't disable Kineto profiler when it's not running"): a
    failed start starts and stops it. torch 2.12+ needs none, so here the calls are watched."""
    autograd = torch._C._autograd
    calls: list[str] = []

    def watched(name: str) -> Any:
        real = getattr(autograd, name)

        def call(*args: Any) -> Any:
            calls.append(name)
            return real(*args)

        return call

    def refuse(self: Any) -> None:
        raise RuntimeError("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES")

    monkeypatch.setattr(capture, "_direct_session_is_equivalent", lambda _torch: True)
    monkeypatch.setattr(torch.autograd.profiler.profile, "_start_trace", refuse)
    for name in ("_enable_profiler", "_disable_profiler"):
        monkeypatch.setattr(autograd, name, watched(name))
    with pytest.raises(kp.ProfilerStartError, match="CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"):
        kp.profile(torch.relu, torch.randn(4))
    assert calls == ["_enable_profiler", "_disable_profiler"]
    assert not profiler_running()
    monkeypatch.undo()
    assert kp.profile(torch.relu, torch.randn(4)).ops["aten::relu"].count == 1


def own_profiler(x: torch.Tensor) -> torch.Tensor:
    with torch.profiler.profile():
        return torch.relu(x)


@pytest.mark.parametrize("direct", [True, False], ids=["below-torch-profiler", "torch-profiler"])
def test_a_session_another_profiler_stopped_is_reported_not_its_stop(
    monkeypatch: pytest.MonkeyPatch, direct: bool
) -> None:
    """torch 2.11 and older raise at the stop of a session that another profiler in the process
    already stopped; the user is told what happened (ProfilerBusyError), not torch's RuntimeError."""
    real = torch.autograd.profiler._disable_profiler

    def disable_as_torch_2_11() -> Any:
        if not torch._C._autograd._profiler_enabled():
            raise RuntimeError("Can't disable Kineto profiler when it's not running")
        return real()

    monkeypatch.setattr(capture, "_direct_session_is_equivalent", lambda _torch: direct)
    monkeypatch.setattr(torch.autograd.profiler, "_disable_profiler", disable_as_torch_2_11)
    with pytest.raises(kp.ProfilerBusyError, match="the callable started or stopped a torch profiler"):
        kp.profile(own_profiler, torch.randn(4))
    assert not profiler_running()
    assert kp.profile(torch.relu, torch.randn(4)).ops["aten::relu"].count == 1


def test_a_torch_that_cannot_be_imported_is_a_missing_torch_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A trace-only install (docs/versions.md): what needs torch raises one line that says what to
    do and what works without it; an ImportError still, for code that caught the old one."""
    monkeypatch.setitem(sys.modules, "torch", None)  # as an interpreter without torch: import fails
    with pytest.raises(kp.MissingTorchError) as raised:
        capture.import_torch()
    assert isinstance(raised.value, ImportError)
    assert str(raised.value) == (
        "pytest-kernelprof needs PyTorch for this, and torch cannot be imported (import of torch halted; "
        "None in sys.modules): pip install torch (saved traces load without it: load_trace, kernelprof show)"
    )


def test_pytest_benchmarks_machine_info_does_without_torch(
    monkeypatch: pytest.MonkeyPatch, pytestconfig: pytest.Config
) -> None:
    """pytest-benchmark asks for it when it saves or compares a run: without torch that ended the session."""
    from pytest_kernelprof.plugin.hooks import pytest_benchmark_update_machine_info

    monkeypatch.setitem(sys.modules, "torch", None)
    machine_info: dict[str, Any] = {}
    pytest_benchmark_update_machine_info(pytestconfig, machine_info)
    assert machine_info == {"kernelprof": {"torch": None}}
