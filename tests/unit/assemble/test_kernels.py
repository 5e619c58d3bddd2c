"""Kernels as the builder makes them (``assemble/kernels.py``): each carries the user's frames of
its launch under ``stacks=True``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pytest_kernelprof import load_trace

Trace = Callable[[str], Path]


def test_kernels_carry_the_frames_of_their_launch(trace: Trace) -> None:
    prof = load_trace(trace("sync_item_stacks"))
    forward = [k for k in prof.kernels if k.op in ("aten::addmm", "aten::clamp_min", "aten::mse_loss")]
    assert forward
    assert all(k.stack == ("main_ace.py(40): train_step_item",) for k in forward)
    # Backward runs on autograd's own thread, where no Python frame is open.
    assert any(k.stack == () for k in prof.kernels if k.op == "aten::mm")
