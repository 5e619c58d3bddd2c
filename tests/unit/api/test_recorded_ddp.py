"""A DDP training step on two H200s, recorded per rank (tools/record_ddp.py): checked offline.

The step: 8 x nn.Linear(2048, 2048) fp32, batch 8192, DDP with bucket_cap_mb=8 (the default
all-reduce, no comm hook). Each 16 MB weight overflows the 8 MB cap, so each fills a bucket
of its own (the biases join them): 8 buckets, 8 NCCL all-reduces per step.
"""

from __future__ import annotations

import pytest

from pytest_kernelprof import load_trace
from tests.helpers import DATA


@pytest.mark.parametrize("rank", [0, 1])
def test_one_all_reduce_per_bucket_and_most_of_it_hidden(rank: int) -> None:
    prof = load_trace(DATA / f"h200x2_ddp_rank{rank}.json.gz")
    assert prof.device == "NVIDIA H200"
    assert len(prof.calls) == 3
    comm = prof.kernels.of_kind("communication")
    assert len(comm) == 8
    assert {(k.collective, k.dtype, k.family) for k in comm} == {("AllReduce", "fp32", "nccl")}
    assert {k.op for k in comm} == {"record_param_comms"}
    assert prof.kernels.count(kind="gemm") == 23  # forward 8; backward 8 weight grads, 7 input grads (x needs none)
    overlap = prof.overlap()
    assert overlap.fraction > 0.9
    assert overlap.communication_us > 0
    assert all(call.overlap().fraction > 0.9 for call in prof.calls)


def test_communication_runs_on_its_own_stream() -> None:
    prof = load_trace(DATA / "h200x2_ddp_rank0.json.gz")
    comm_streams = {k.stream for k in prof.kernels.of_kind("communication")}
    compute_streams = {k.stream for k in prof.kernels.of_kind("gemm")}
    assert comm_streams.isdisjoint(compute_streams)
