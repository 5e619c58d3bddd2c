"""profile_ranks with NCCL on two GPUs (run on a 2-GPU machine: pytest -m gpu)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.distributed as dist

from pytest_kernelprof import RankError, profile_ranks

pytestmark = pytest.mark.gpu(count=2)


def nccl_all_reduce_step(rank: int, world_size: int) -> Any:
    tensor = torch.ones(1 << 20, device="cuda", dtype=torch.bfloat16)

    def step() -> None:
        dist.all_reduce(tensor)

    return step


def failing_nccl_step(rank: int, world_size: int) -> Any:
    if rank == 0:
        raise RuntimeError("rank zero gives up")
    tensor = torch.ones(16, device="cuda")
    return lambda: dist.all_reduce(tensor)


def test_nccl_all_reduce_is_one_communication_kernel_per_call() -> None:
    profiles = profile_ranks(nccl_all_reduce_step, 2)
    for prof in profiles:
        comm = prof.kernels.one(kind="communication")
        assert comm.collective == "AllReduce"
        assert comm.dtype == "bf16"
        assert comm.family == "nccl"
    assert profiles[0].device == torch.cuda.get_device_name(0)


def test_a_failing_nccl_rank_does_not_hang_the_test() -> None:
    import multiprocessing

    with pytest.raises(RankError, match="rank zero gives up"):
        profile_ranks(failing_nccl_step, 2, timeout_s=120)
    assert not multiprocessing.active_children()
