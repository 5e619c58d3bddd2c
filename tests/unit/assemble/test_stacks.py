"""stacks=True: the user's Python frames around syncs and kernels, and the exact line of a sync.

The frames come from the profiler's ``python_function`` events (in the Chrome trace; in
the live events only from torch 2.12 on), the exact line from torch's sync debug mode.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from pytest_kernelprof import load_trace
from pytest_kernelprof.capture import SyncLines, capture_callable, raw_events
from pytest_kernelprof.capture.sync_lines import flagging_syncs
from pytest_kernelprof.decode.sync_calls import FlaggedSync, assign_lines, is_user_file, user_frames
from pytest_kernelprof.options import ProfileOptions
from pytest_kernelprof.traces import PYTHON, events_from_kineto
from tests.helpers import TypedKinetoEvent, recorded_kineto_events

Trace = Callable[[str], Path]
SYNC_WARNING = "called a synchronizing CUDA operation"


@pytest.mark.parametrize(
    ("path", "user"),
    [
        ("main_ace.py", True),  # the profiler writes paths relative to their sys.path entry
        ("tests/test_train.py", True),
        ("examples/test_06_host_syncs.py", True),
        ("torch/nn/modules/module.py", False),
        ("torch/_tensor.py", False),
        ("typing.py", False),  # the standard library
        ("logging/__init__.py", False),
        ("pytest_kernelprof/capture.py", False),
        ("_pytest/python.py", False),
        ("<built-in method item of Tensor object at 0x7f2c4e143f20>", False),
        ("/home/me/project/tests/test_train.py", True),
        ("/home/me/code/email/test_train.py", True),  # stdlib names as plain directories
        ("/usr/lib/python3/site-packages/torch/nn/functional.py", False),
        ("/venv/lib/python3.12/site-packages/transformers/models/llama.py", True),  # a library is user code
        ("/work/checkout/src/pytest_kernelprof/capture/run.py", False),
        (str(Path(warnings.__file__)), False),
    ],
)
def test_user_files(path: str, user: bool) -> None:
    assert is_user_file(path) is user


def test_user_frames_keep_file_frames_of_the_user_in_order() -> None:
    frames = (
        "main_ace.py(40): train_step_item",
        "nn.Module: Linear_0",
        "torch/nn/modules/module.py(1783): _call_impl",
        "<built-in method item of Tensor object at 0x7f2c4e143f20>",
        "helpers.py(12): log_loss",
    )
    assert user_frames(frames) == ("main_ace.py(40): train_step_item", "helpers.py(12): log_loss")


def test_a_sync_carries_the_frames_around_it(trace: Trace) -> None:
    prof = load_trace(trace("sync_item_stacks"))
    # The profiler names the function's def line (40), not the line of loss.item() (45).
    assert prof.syncs[0].stack == ("main_ace.py(40): train_step_item",)
    assert prof.syncs[0].where == "main_ace.py(40): train_step_item"
    assert prof.syncs[0].line is None  # only a live profile learns the line
    assert all(c.syncs[0].stack == prof.syncs[0].stack for c in prof.calls)
    assert "at main_ace.py(40): train_step_item" in repr(prof.syncs)


def test_kernels_carry_the_frames_of_their_launch(trace: Trace) -> None:
    prof = load_trace(trace("sync_item_stacks"))
    forward = [k for k in prof.kernels if k.op in ("aten::addmm", "aten::clamp_min", "aten::mse_loss")]
    assert forward
    assert all(k.stack == ("main_ace.py(40): train_step_item",) for k in forward)
    # Backward runs on autograd's own thread, where no Python frame is open.
    assert any(k.stack == () for k in prof.kernels if k.op == "aten::mm")


def test_without_stacks_frames_are_none_not_empty(trace: Trace) -> None:
    prof = load_trace(trace("sync_mask_index"))
    assert prof.syncs[0].stack is None
    assert all(k.stack is None for k in prof.kernels)


def test_lines_pair_in_order_when_every_sync_was_flagged() -> None:
    flagged = [FlaggedSync("t.py:45", "step"), FlaggedSync("t.py:47", "step")]
    assert assign_lines([("t.py(40): step",), None], flagged) == ["t.py:45", "t.py:47"]


def test_lines_go_to_the_sync_in_the_same_function_or_nowhere() -> None:
    flagged = [FlaggedSync("t.py:45", "step")]
    stacks = [("lib.py(3): library_sync",), ("t.py(40): step",), None]
    assert assign_lines(stacks, flagged) == [None, "t.py:45", None]
    assert assign_lines([None, None], flagged) == [None, None]


def test_a_flagged_line_is_the_users_innermost_frame() -> None:
    lines = SyncLines()
    lines.call = 2
    lines.add(sys._getframe())
    (flagged,) = lines.by_call[2]
    line = sys._getframe().f_lineno - 2
    assert flagged.line == f"{os.path.relpath(__file__)}:{line}"  # relative to where pytest runs
    assert flagged.function == "test_a_flagged_line_is_the_users_innermost_frame"


class FakeSyncDebugMode:
    """torch.cuda's sync debug mode on a machine without CUDA: it remembers the mode, and warns
    that it is a prototype when set, as torch 2.11 does (which under -W error raised, once)."""

    def __init__(self, mode: int = 0, *, fail: bool = False) -> None:
        self.mode = mode
        self.fail = fail
        self.set: list[str | int] = []

    def set_mode(self, mode: str | int) -> None:
        self.set.append(mode)
        self.mode = {"warn": 1, "error": 2}.get(str(mode), 0)
        if self.fail and self.mode:
            raise RuntimeError("set after all, then failed")
        warnings.warn(
            "Synchronization debug mode is a prototype feature and does not yet detect all synchronizing "
            "operations (Triggered internally at /pytorch/torch/csrc/cuda/Module.cpp:1003.)",
            UserWarning,
            stacklevel=2,
        )

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "get_sync_debug_mode", lambda: self.mode)
        monkeypatch.setattr(torch.cuda, "set_sync_debug_mode", self.set_mode)


def user_code_that_syncs() -> None:
    warnings.warn(f"{SYNC_WARNING} (Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:162.)", stacklevel=1)


def test_sync_warnings_become_lines_and_other_warnings_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    mode = FakeSyncDebugMode()
    mode.install(monkeypatch)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.simplefilter("error", UserWarning)  # as under -W error: the sync warning must not raise
        with flagging_syncs(True) as lines:
            assert lines is not None
            lines.call = 1
            user_code_that_syncs()
            user_code_that_syncs()
            warnings.warn("not about syncs", DeprecationWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ["not about syncs"]
    assert mode.set == ["warn", 0]
    assert mode.mode == 0
    line = user_code_that_syncs.__code__.co_firstlineno + 1
    assert lines.by_call == {1: [FlaggedSync(f"{os.path.relpath(__file__)}:{line}", "user_code_that_syncs")] * 2}


def run_flagged(fn: Callable[[FakeSyncDebugMode], None], mode: FakeSyncDebugMode) -> None:
    with flagging_syncs(True):
        fn(mode)


def broken_user_code(mode: FakeSyncDebugMode) -> None:
    assert mode.mode == 1
    raise RuntimeError("user code broke")


@pytest.mark.parametrize("fail", [False, True], ids=["profiled-code-raises", "setting-the-mode-raises"])
def test_the_mode_is_restored_whatever_raises(monkeypatch: pytest.MonkeyPatch, fail: bool) -> None:
    mode = FakeSyncDebugMode(fail=fail)
    mode.install(monkeypatch)
    with pytest.raises(RuntimeError, match="set after all" if fail else "user code broke"):
        run_flagged(broken_user_code, mode)
    assert mode.mode == 0  # a mode left on would warn in every later test


def test_a_users_own_sync_debug_mode_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    mode = FakeSyncDebugMode(mode=2)  # "error": the user wants syncs to raise
    mode.install(monkeypatch)
    with flagging_syncs(True) as lines:
        assert lines is None
    with flagging_syncs(False) as lines:
        assert lines is None
    assert mode.set == []


class FakeTorchProfiler:
    """A finished session of torch 2.11: Kineto events without Python frames, a trace with them."""

    def __init__(self, events: list[Any], trace: Path) -> None:
        self.profiler = SimpleNamespace(kineto_results=SimpleNamespace(events=lambda: events))
        self.trace = trace
        self.exported = 0

    def export_chrome_trace(self, path: str) -> None:
        self.exported += 1
        shutil.copyfile(self.trace, path)


def test_without_live_frames_stacks_come_from_the_exported_trace(trace: Trace, tmp_path: Path) -> None:
    plain = tmp_path / "trace.json"
    plain.write_bytes(gzip.decompress(trace("sync_item_stacks").read_bytes()))
    session = FakeTorchProfiler(recorded_kineto_events("linear_eager"), plain)
    assert not any(e.category == PYTHON for e in raw_events(session))
    assert session.exported == 0
    events = raw_events(session, python_frames=True)
    assert session.exported == 1
    assert any(e.category == PYTHON and e.name == "main_ace.py(40): train_step_item" for e in events)


def test_live_python_frames_of_newer_torch_and_a_name_that_does_not_decode() -> None:
    events = events_from_kineto([TypedKinetoEvent("t.py(1): step", 5), TypedKinetoEvent(None, 6)])
    assert [(e.category, e.name, e.start, e.thread) for e in events] == [(PYTHON, "t.py(1): step", 5, 1)]


def test_stacks_record_the_callables_frames_live() -> None:
    def profiled_step(x: torch.Tensor) -> torch.Tensor:
        return x.relu()

    capture = capture_callable(profiled_step, (torch.randn(8),), options=ProfileOptions(stacks=True, warmup=0, calls=1))
    names = {e.name for e in raw_events(capture.torch_profiler, python_frames=True) if e.category == PYTHON}
    assert any(n.endswith(": profiled_step") and "test_stacks.py(" in n for n in names)
