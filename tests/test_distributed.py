"""profile_ranks on CPU (gloo): per-rank profiles, a failing rank, a hanging rank, no process left."""

from __future__ import annotations

import multiprocessing
import time
from typing import Any

import pytest
import torch
import torch.distributed as dist

from pytest_kernelprof import Kernel, RankError, profile_ranks
from pytest_kernelprof.model import overlap_of

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="the GPU version is test_gpu_distributed.py")


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


def test_one_profile_per_rank() -> None:
    profiles = profile_ranks(all_reduce_step, 2, warmup=1, calls=2)
    assert len(profiles) == 2
    for prof in profiles:
        assert len(prof.calls) == 2
        assert any("allreduce" in name.replace("_", "") for name in prof.ops)
    assert not multiprocessing.active_children()


def test_a_failing_rank_fails_with_its_traceback() -> None:
    with pytest.raises(RankError, match=r"(?s)rank 1 failed:.*ValueError: rank one is broken"):
        profile_ranks(broken_step, 2, timeout_s=120)
    assert not multiprocessing.active_children()


def test_a_hanging_rank_fails_at_the_time_limit() -> None:
    start = time.monotonic()
    with pytest.raises(RankError, match=r"did not finish within 5 s"):
        profile_ranks(hanging_step, 2, timeout_s=5)
    assert time.monotonic() - start < 60
    assert not multiprocessing.active_children()


def test_world_size_is_checked() -> None:
    with pytest.raises(ValueError, match="world_size"):
        profile_ranks(all_reduce_step, 0)


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
