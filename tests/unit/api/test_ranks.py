"""profile_ranks on CPU (gloo): per-rank profiles, a failing rank, a hanging rank, no process left."""

from __future__ import annotations

import multiprocessing
import queue
import time
from typing import Any

import pytest
import torch
import torch.distributed as dist

from pytest_kernelprof import RankError, profile_ranks
from pytest_kernelprof.api import ranks as distributed
from pytest_kernelprof.api.ranks import _stop
from pytest_kernelprof.model import overlap_of
from pytest_kernelprof.types import Kernel

pytestmark = [
    pytest.mark.skipif(torch.cuda.is_available(), reason="the GPU version is tests/gpu/test_distributed.py"),
    pytest.mark.usefixtures("warm_subprocesses"),  # each spawned rank would import torch
]


def all_reduce_step(rank: int, world_size: int) -> Any:
    tensor = torch.ones(64) * (rank + 1)

    def step() -> None:
        dist.all_reduce(tensor)

    return step


def broken_step(rank: int, world_size: int) -> Any:
    if rank == 1:
        raise ValueError("rank one is broken")
    return lambda: None


def hanging_step(rank: int, world_size: int) -> Any:
    if rank == 1:
        time.sleep(3600)
    return lambda: None


@pytest.fixture
def stops(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The ``hung`` argument of each ``_stop`` that profile_ranks makes."""
    seen: list[bool] = []

    def recording(processes: list[Any], *, hung: bool) -> None:
        seen.append(hung)
        _stop(processes, hung=hung)

    monkeypatch.setattr(distributed, "_stop", recording)
    return seen


def test_one_profile_per_rank() -> None:
    profiles = profile_ranks(all_reduce_step, 2, warmup=1, calls=2)
    assert len(profiles) == 2
    for prof in profiles:
        assert len(prof.calls) == 2
        assert any("allreduce" in name.replace("_", "") for name in prof.ops)
    assert not multiprocessing.active_children()


def test_a_failing_rank_fails_with_its_traceback(stops: list[bool]) -> None:
    with pytest.raises(RankError, match=r"(?s)rank 1 failed:.*ValueError: rank one is broken"):
        profile_ranks(broken_step, 2, timeout_s=120)
    assert stops == [False]  # the other rank gets its moment to exit on its own
    assert not multiprocessing.active_children()


def test_a_hanging_rank_fails_at_the_time_limit(stops: list[bool]) -> None:
    start = time.monotonic()
    with pytest.raises(RankError, match=r"did not finish within 2 s"):
        profile_ranks(hanging_step, 2, timeout_s=2)
    assert time.monotonic() - start < 60
    assert stops == [True]  # terminated at once, no wait for ranks past the time limit
    assert not multiprocessing.active_children()


class FakeRank:
    """A rank process that exits on its own after ``exits_after_s`` of joining (never when None)."""

    def __init__(self, exits_after_s: float | None) -> None:
        self.exits_after_s = exits_after_s
        self.alive = True
        self.calls: list[str] = []

    def is_alive(self) -> bool:
        return self.alive

    def join(self, timeout: float | None = None) -> None:
        self.calls.append(f"join({timeout})")
        if self.exits_after_s is not None and (timeout is None or timeout >= self.exits_after_s):
            self.alive = False

    def terminate(self) -> None:
        self.calls.append("terminate")
        self.alive = False

    def kill(self) -> None:
        self.calls.append("kill")
        self.alive = False


def test_stop_waits_for_ranks_to_exit_unless_they_are_hung() -> None:
    exiting, stuck = FakeRank(exits_after_s=1), FakeRank(exits_after_s=None)
    _stop([exiting, stuck], hung=False)
    assert exiting.calls == ["join(5)"]
    assert stuck.calls == ["join(5)", "terminate", "join(5)"]
    hung = [FakeRank(exits_after_s=None), FakeRank(exits_after_s=None)]
    _stop(hung, hung=True)
    assert [rank.calls for rank in hung] == [["terminate", "join(5)"]] * 2


def test_the_rank_that_failed_first_is_named_whichever_report_comes_first() -> None:
    """Rank 1 fails; rank 0's barrier then loses its peer and reports first: rank 1 is named."""
    reports: queue.Queue[tuple[int, str, str, float]] = queue.Queue()
    reports.put((0, "error", "RuntimeError: Connection closed by peer", 20.0))
    reports.put((1, "error", "ValueError: rank one is broken", 10.0))
    ranks = [FakeRank(exits_after_s=None), FakeRank(exits_after_s=None)]
    with pytest.raises(RankError, match=r"(?s)^rank 1 failed:\nValueError: rank one is broken$"):
        distributed._collect(reports, ranks, 2, time.monotonic() + 30, 30)
    # A rank whose process has ended without a report is not waited for.
    reports.put((0, "error", "RuntimeError: Connection closed by peer", 20.0))
    ranks[1].alive = False
    start = time.monotonic()
    with pytest.raises(RankError, match=r"^rank 0 failed"):
        distributed._collect(reports, ranks, 2, time.monotonic() + 30, 30)
    assert time.monotonic() - start < 5


def test_world_size_is_checked() -> None:
    with pytest.raises(ValueError, match="world_size"):
        profile_ranks(all_reduce_step, 0)


def test_world_size_and_make_step_are_checked_before_a_rank_starts() -> None:
    with pytest.raises(TypeError, match=r"^world_size must be an int >= 1, got '2'$"):
        profile_ranks(all_reduce_step, "2")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^make_step must be a module-level function: the ranks are spawned processes"):
        profile_ranks(lambda rank, world_size: all_reduce_step(rank, world_size), 2)


def _k(kind: str, start: float, duration: float) -> Kernel:
    return Kernel(name=f"{kind}_{start}", kind=kind, family="x", start_us=start, duration_us=duration)


def test_overlap_counts_communication_covered_by_compute() -> None:
    kernels = [
        _k("gemm", 0, 10),
        _k("communication", 5, 10),  # 5..15: 5..10 hidden
        _k("pointwise", 12, 2),  # 12..14: hidden
        _k("communication", 20, 4),  # exposed
    ]
    assert kernels[1].end_us == 15
    overlap = overlap_of(kernels)
    assert overlap.communication_us == 14
    assert overlap.hidden_us == 7
    assert overlap.exposed_us == 7
    assert overlap.fraction == pytest.approx(0.5)
    assert overlap_of([_k("gemm", 0, 1)]).fraction == 1.0


def test_ranks_count_the_gpus_they_will_see_not_the_ones_this_process_saw(monkeypatch: pytest.MonkeyPatch) -> None:
    # An xdist worker lent every chosen GPU started CUDA with one: its own count says 1, while the
    # ranks it spawns see what CUDA_VISIBLE_DEVICES lists now.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    with pytest.raises(RankError, match=r"world_size=2 needs 2 GPUs; 1 are visible"):
        profile_ranks(all_reduce_step, world_size=2)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    assert distributed._gpus_for_ranks(torch) == 2
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert distributed._gpus_for_ranks(torch) == 1
