"""Fuzz the trace loader: any input gives a KernelProfile or one KernelProfError, nothing else.

Each test runs on both readers (msgspec's typed one and the standard library's), with
traces laid out as Kineto writes them so that the typed reader takes them on; and both
readers must give the same events or the same error for the same file.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_kernelprof import KernelProfError, KernelProfile, load_trace
from pytest_kernelprof.traces import chrome
from tests.helpers import DATA, kineto_text, read_with

CATEGORIES = [
    "cpu_op",
    "user_annotation",
    "cuda_runtime",
    "cuda_driver",
    "kernel",
    "gpu_memcpy",
    "gpu_memset",
    "gpu_user_annotation",
    "Kernel",
    "Runtime",
    "Operator",
    "python_function",
    "ac2g",
    None,
    3,
]
NAMES = [
    "aten::mm",
    "ProfilerStep#0",
    "ProfilerStep#1",
    "cudaLaunchKernel",
    "cuLaunchKernelEx",
    "cudaGraphLaunch",
    "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_TNT",
    "triton_poi_fused_mul_0",
    "Memset (Device)",
    "",
]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True), st.text(max_size=8)
)
ids = st.one_of(st.integers(0, 20), scalars)
events = st.fixed_dictionaries(
    {
        "ph": st.sampled_from(["X", "X", "X", "i", "M", "f", 1]),
        "cat": st.sampled_from(CATEGORIES),
        "name": st.one_of(st.sampled_from(NAMES), scalars),
        "ts": st.one_of(st.floats(0, 1e6), st.integers(0, 10**6), scalars),
        "dur": st.one_of(st.floats(0, 1e3), st.integers(0, 10**3), scalars),
    },
    optional={
        "tid": st.one_of(st.integers(0, 3), st.text(max_size=3), scalars),
        "args": st.one_of(
            st.fixed_dictionaries(
                {},
                optional={
                    "External id": ids,
                    "external id": ids,
                    "correlation": ids,
                    "stream": ids,
                    "device": ids,
                    "grid": st.one_of(st.lists(st.integers(0, 9), max_size=4), scalars),
                    "block": st.one_of(st.lists(st.integers(0, 9), max_size=4), scalars),
                },
            ),
            scalars,
            st.lists(scalars, max_size=2),
        ),
    },
)
trace_files = st.fixed_dictionaries(
    {"traceEvents": st.lists(events, max_size=30)},
    optional={
        "deviceProperties": st.one_of(st.lists(st.dictionaries(st.text(max_size=12), scalars), max_size=2), scalars)
    },
)

# Events of the types the typed reader takes, so that it, not the fallback, reads most of them.
ints = st.one_of(st.none(), st.integers(-5, 2**64))
well_typed_events = st.fixed_dictionaries(
    {
        "ph": st.sampled_from(["X", "X", "X", "i", "M"]),
        "cat": st.sampled_from([c for c in CATEGORIES if not isinstance(c, int)]),
        "name": st.sampled_from(NAMES),
        "ts": st.one_of(st.floats(-1e6, 1e12), st.integers(-(10**6), 2**70)),
    },
    optional={
        "dur": st.one_of(st.floats(-2, 1e3), st.integers(-2, 10**3)),
        "tid": st.one_of(st.integers(-3, 3), st.text(max_size=3)),
        "args": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {},
                optional={
                    "External id": ints,
                    "external id": ints,
                    "correlation": ints,
                    "stream": ints,
                    "device": ints,
                    "grid": st.one_of(st.none(), st.lists(st.integers(0, 9), min_size=3, max_size=3)),
                    "block": st.one_of(st.none(), st.lists(st.integers(0, 9), min_size=3, max_size=3)),
                    "queued": scalars,
                },
            ),
        ),
    },
)
well_typed_trace_files = st.fixed_dictionaries({"traceEvents": st.lists(well_typed_events, max_size=30)})


@pytest.fixture(params=["msgspec", "json"])
def reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "json":
        monkeypatch.setattr(chrome, "typed_reader", lambda: None)
    return str(request.param)


def _check(path: Path, allow_variation: bool) -> None:
    try:
        prof = load_trace(path, allow_variation=allow_variation)
    except KernelProfError:
        return
    assert isinstance(prof, KernelProfile)
    prof.table()
    if prof.has_device_activity:
        for kernel in prof.kernels:
            assert kernel.kind
    for name in prof.ops:
        prof.ops[name]


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trace=trace_files, allow_variation=st.booleans())
def test_structured_traces(reader: str, tmp_path: Path, trace: dict[str, Any], allow_variation: bool) -> None:
    path = tmp_path / "t.json"
    path.write_text(kineto_text(trace))
    _check(path, allow_variation)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trace=st.one_of(trace_files, well_typed_trace_files))
def test_both_readers_agree(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, trace: dict[str, Any]) -> None:
    path = tmp_path / "t.json"
    path.write_text(kineto_text(trace))
    assert read_with(path, "msgspec", monkeypatch) == read_with(path, "json", monkeypatch)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300), compress=st.booleans())
def test_arbitrary_bytes(reader: str, tmp_path: Path, data: bytes, compress: bool) -> None:
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(data) if compress else data)
    _check(path, True)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, 4000))
def test_truncated_real_trace(reader: str, tmp_path: Path, cut: int) -> None:
    text = gzip.decompress((DATA / "h200_linear_eager.json.gz").read_bytes())
    path = tmp_path / "t.json"
    path.write_bytes(text[: min(cut, len(text) - 1)])
    _check(path, False)
