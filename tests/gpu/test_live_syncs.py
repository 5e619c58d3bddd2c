"""Host syncs, copies and stacks on a live GPU (``pytest -m gpu`` on an H100/H200).

The offline tests (tests/unit/assemble/test_syncs.py, model/test_records.py, capture/test_sync_lines.py,
decode/test_sync_calls.py) read traces; here
the live Kineto path must agree with its own exported trace, and stacks=True must name
the user's frames and, where torch's sync debug mode flags the sync, the exact line.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import pytest_kernelprof as kp

pytestmark = pytest.mark.gpu

N = 1 << 20  # 4 MiB of fp32


def line_of(fn: Callable[..., Any], text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return next(first + i for i, line in enumerate(lines) if text in line)


def test_live_syncs_copies_and_launches_equal_the_exported_trace(kernelprof: kp.Profiler, tmp_path: Path) -> None:
    x = torch.randn(N, device="cuda")
    pinned = torch.empty(N, pin_memory=True)
    side = torch.cuda.Stream()

    def mixed() -> None:
        y = x * 2
        y.sum().item()
        y.cpu()
        pinned.copy_(y, non_blocking=True)
        side.synchronize()
        torch.cuda.synchronize()

    live = kernelprof(mixed)
    path = tmp_path / "mixed.json.gz"
    kernelprof.captures[-1].export_trace(path)
    offline = kp.load_trace(path)
    shape = [(s.call, s.kind, s.ops, s.memcpy) for s in live.syncs]
    assert shape == [(s.call, s.kind, s.ops, s.memcpy) for s in offline.syncs]
    assert [s.kind for s in live.syncs] == ["stream", "copy", "stream", "stream", "device"]
    assert live.syncs[0].ops == ("aten::item", "aten::_local_scalar_dense")
    assert [(c.direction, c.host_memory, c.op) for c in live.copies] == [
        (c.direction, c.host_memory, c.op) for c in offline.copies
    ]
    assert [c.host_memory for c in live.copies] == ["pinned", "pageable", "pinned"]
    assert [c.bytes for c in offline.copies] == [4, 4 * N, 4 * N]
    # Live bytes come from the events' metadata: torch 2.12+; torch 2.11 leaves it empty.
    assert all(c.bytes in (None, o.bytes) for c, o in zip(live.copies, offline.copies, strict=True))
    assert (live.launches, live.graph_launches) == (offline.launches, offline.graph_launches)
    assert live.wall_us == pytest.approx(offline.wall_us, rel=0.01)
    assert live.gpu_busy_us == pytest.approx(offline.gpu_busy_us, rel=0.01)


def test_the_plugins_own_synchronize_is_never_a_sync(kernelprof: kp.Profiler) -> None:
    x = torch.randn(N, device="cuda")
    prof = kernelprof(torch.relu, x)
    assert not prof.syncs
    assert prof.launches == 1
    assert 0 <= prof.gpu_idle_fraction < 1


def test_stacks_name_the_function_and_the_flagged_line(kernelprof: kp.Profiler) -> None:
    x = torch.randn(N, device="cuda")
    pageable = torch.empty(N)

    def syncing_step() -> None:
        y = x * 2
        y.sum().item()
        torch.cuda.current_stream().synchronize()
        pageable.copy_(y, non_blocking=True)
        torch.cuda.synchronize()

    prof = kernelprof.profile(syncing_step, stacks=True)
    item, stream, copy, device = prof.syncs
    for sync in prof.syncs:
        assert sync.stack is not None
        assert sync.stack[-1].endswith(": syncing_step"), sync.stack
    assert item.line is not None
    assert item.line.endswith(f"gpu/test_live_syncs.py:{line_of(syncing_step, '.item()')}")
    # Stream.synchronize warns from torch/cuda/streams.py; the line kept is the user's.
    assert stream.line is not None
    assert stream.line.endswith(f"gpu/test_live_syncs.py:{line_of(syncing_step, 'current_stream')}")
    # torch's sync debug mode sees neither a pageable non_blocking copy nor an explicit synchronize.
    assert (copy.kind, copy.line) == ("copy", None)
    assert (device.kind, device.line) == ("device", None)
    assert all(k.stack is not None and k.stack[-1].endswith(": syncing_step") for k in prof.kernels)
    assert torch.cuda.get_sync_debug_mode() == 0  # restored


def test_stacks_in_a_recorded_block(kernelprof: kp.Profiler) -> None:
    x = torch.randn(N, device="cuda")
    with kernelprof.record(stacks=True) as rec:
        x.sum().item()  # first call
        rec.step()
        x.sum().item()  # second call
    first, second = (c.syncs for c in rec.profile.calls)
    here = test_stacks_in_a_recorded_block
    assert first[0].line is not None
    assert first[0].line.endswith(f"gpu/test_live_syncs.py:{line_of(here, '# first call')}")
    assert second[0].line is not None
    assert second[0].line.endswith(f"gpu/test_live_syncs.py:{line_of(here, '# second call')}")
    assert first[0].stack == ()  # the block's frame began before the call did
