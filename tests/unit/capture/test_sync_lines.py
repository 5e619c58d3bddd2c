"""The exact line of each sync (``capture/sync_lines.py``): torch's sync debug mode, switched on
around the profiled calls under ``stacks=True``, flags the user's line; the mode is restored
whatever happens, and a user's own mode is left alone."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable

import pytest
import torch

from pytest_kernelprof.capture import SyncLines
from pytest_kernelprof.capture.sync_lines import flagging_syncs
from pytest_kernelprof.decode.sync_calls import FlaggedSync

SYNC_WARNING = "called a synchronizing CUDA operation"


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
