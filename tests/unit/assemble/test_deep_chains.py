"""Chains of enclosing ops are bounded: a crafted trace nested thousands deep costs depth x
items in time and memory otherwise (6,000 x 6,000 took 1 GB); the outermost and innermost
halves are kept."""

from __future__ import annotations

from pytest_kernelprof.assemble.optree import MAX_CHAIN
from tests.helpers import Stream, build

DEPTH = 600


def deep_stream(kernels: int) -> Stream:
    s = Stream()
    s.step(0, 0, 100_000)
    ids = [s.op(f"op{level}", 1 + level, 90_000 - 2 * level) for level in range(DEPTH)]
    for i in range(kernels):
        s.launch(ids[-1], f"triton_poi_fused_add_{i}", 5_000 + 10 * i)
    item = s.op("aten::item", 80_000, 10)
    s.x("cuda_runtime", "cudaStreamSynchronize", 80_001, 5, correlation=99_999, **{"External id": item})
    return s


def test_a_deep_chain_keeps_its_outermost_and_innermost_ops() -> None:
    prof = build(deep_stream(kernels=3))
    names = tuple(f"op{level}" for level in range(DEPTH))
    half = MAX_CHAIN // 2
    for kernel in prof.kernels:
        assert kernel.ops == (*names[:half], *names[-half:])
        assert kernel.op == f"op{DEPTH - 1}"
    sync = prof.syncs[0]
    assert sync.ops == (*names[:half], *(names + ("aten::item",))[-half:])
    assert sync.op == "aten::item"


def test_a_shallow_chain_is_whole() -> None:
    s = Stream()
    s.step(0, 0, 1_000)
    outer = s.op("outer", 1, 900)
    inner = s.op("aten::add", 2, 800)
    s.launch(inner, "triton_poi_fused_add_0", 10)
    assert outer
    prof = build(s)
    assert prof.kernels[0].ops == ("outer", "aten::add")
