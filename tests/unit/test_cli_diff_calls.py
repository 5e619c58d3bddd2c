"""``kernelprof diff``'s verdict: of traces whose calls launched different kernels, each call of a
against the call of b of its index, never "same kernels" where a call differs; never "same kernels"
where the calls' counts (copies, syncs, launches) differ, as a baseline would fail on them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelprof.cli import main
from tests.helpers import DATA

ADD, MUL = "triton_poi_fused_add_0", "triton_poi_fused_mul_1"
GEMM = "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT"


def _trace(path: Path, calls: list[list[str]]) -> str:
    """A trace of one profiled call (``ProfilerStep#N``) per list of kernel names."""
    events: list[dict[str, Any]] = []
    t, ext, corr = 1000.0, 1, 1
    for step, names in enumerate(calls):
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": 1, "tid": 1,
                       "ts": t, "dur": 100.0, "args": {"External id": ext}})  # fmt: skip
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::foo", "pid": 1, "tid": 1, "ts": t + 1,
                       "dur": 90.0, "args": {"External id": ext + 1}})  # fmt: skip
        op, ext, kt = ext + 1, ext + 2, t + 2
        for name in names:
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                           "ts": kt, "dur": 1.0, "args": {"correlation": corr, "External id": op}})  # fmt: skip
            events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": kt + 5, "dur": 2.0,
                           "args": {"External id": op, "device": 0, "stream": 7, "correlation": corr}})  # fmt: skip
            corr, kt = corr + 1, kt + 3
        t += 200
    props = [{"name": "NVIDIA H200", "computeMajor": 9, "computeMinor": 0}]
    path.write_text(json.dumps({"deviceProperties": props, "traceEvents": events}))
    return str(path)


def test_a_later_call_that_differs_is_a_difference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _trace(tmp_path / "a.json", [[ADD, GEMM]] * 3)
    b = _trace(tmp_path / "b.json", [[ADD, GEMM], [MUL, GEMM], [MUL, GEMM]])
    assert main(["diff", a, b]) == 1
    out = capsys.readouterr().out
    assert "same kernels" not in out
    assert "b's calls launched different kernels: each call of a against the call of b of its index" in out
    assert "call 1 of a against call 1 of b (call 2 differs too):" in out
    assert f"  - pointwise/inductor ? [add]  {ADD}" in out
    assert out.rstrip().endswith("the kernels differ")


def test_calls_that_vary_alike_on_both_sides_are_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calls = [[ADD, GEMM], [MUL, GEMM], [ADD, GEMM]]
    assert main(["diff", _trace(tmp_path / "a.json", calls), _trace(tmp_path / "b.json", calls)]) == 0
    out = capsys.readouterr().out
    assert "each call of a against the call of b of its index: each the same" in out
    assert out.rstrip().endswith("same kernels")


def test_varied_calls_of_other_counts_are_not_called_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _trace(tmp_path / "a.json", [[ADD, GEMM], [MUL, GEMM]])
    b = _trace(tmp_path / "b.json", [[ADD, GEMM], [MUL, GEMM], [MUL, GEMM]])
    assert main(["diff", a, b]) == 1
    out = capsys.readouterr().out
    assert "a has 2 calls and b 3: call 2 of b has no call to compare with" in out
    assert out.rstrip().endswith("the kernels differ")


def test_calls_that_do_not_vary_are_compared_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _trace(tmp_path / "a.json", [[ADD, GEMM]] * 3)
    b = _trace(tmp_path / "b.json", [[ADD, GEMM]] * 2)
    assert main(["diff", a, b]) == 0
    out = capsys.readouterr().out
    assert "each call of a against" not in out
    assert out.rstrip().endswith("same kernels")


def test_the_same_kernels_with_other_copies_and_syncs_are_a_difference(capsys: pytest.CaptureFixture[str]) -> None:
    # A trial: a DtoH copy dropped (memcpys 1 0, DtoH copies 1 0 in the tables) read
    # "same kernels", exit 0, where a baseline fails on memcpys and DtoH copies: a CI gate passed it.
    copy, device = str(DATA / "h200_copy_dtoh_pageable_nonblocking.json.gz"), str(DATA / "h200_sync_device.json.gz")
    assert main(["diff", copy, device]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        "same kernels, but the calls differ: memcpys 1 -> 0, DtoH copies 1 -> 0"
    )
    assert main(["diff", device, str(DATA / "h200_sync_cpu_copy.json.gz")]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        "same kernels, but the calls differ: memcpys 0 -> 1, host syncs 1 -> 2, DtoH copies 0 -> 1"
    )


def test_kernels_that_differ_name_the_counts_that_differ_too(capsys: pytest.CaptureFixture[str]) -> None:
    eager, graphs = str(DATA / "h200_decode_eager.json.gz"), str(DATA / "h200_decode_graphs.json.gz")
    assert main(["diff", eager, graphs]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        "the kernels differ; the calls differ too: kernels 49 -> 25, launches 49 -> 2 (1 graph)"
    )


def test_times_alone_do_not_make_a_difference(capsys: pytest.CaptureFixture[str]) -> None:
    # Two workloads of one kernel and one host sync each (a device's sync, a stream's): every count
    # the same, the times not (noise from run to run), so the same.
    device, stream = str(DATA / "h200_sync_device.json.gz"), str(DATA / "h200_sync_stream.json.gz")
    assert main(["diff", device, stream]) == 0
    out = capsys.readouterr().out.splitlines()
    host_span = next(line.split() for line in out if line.startswith("host span "))
    assert host_span[2:4] == ["46.9us", "65.0us"]
    assert out[-1] == "same kernels"
