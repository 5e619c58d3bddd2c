"""Traces exported by every torch from 2.4 on read to the same profile.

tests/data/cpu_torch<VERSION>_*.json.gz were recorded on the CPU by ``python -m
tools.record_cpu_traces`` in each version's environment (``dev.py compat`` makes them): one
workload, ``calls`` with a ``ProfilerStep#N`` range per call as the plugin's capture marks them,
``step`` with torch's own marks (a schedule and ``prof.step()``). The layouts differ from one
version to the next (below); what ``load_trace`` reads from them must not.
"""

from __future__ import annotations

import gzip
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelprof import KernelProfile, NoDeviceActivityError, load_trace
from pytest_kernelprof.traces import chrome
from tests.helpers import DATA, fields, read_with

# Every release recorded: the supported ones (docs/versions.md) and the two below the floor,
# whose traces load_trace reads all the same (reading needs no torch).
VERSIONS = ["2.4.1", "2.5.1", "2.6.0", "2.7.1", "2.8.0", "2.9.1", "2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1"]
WORKLOADS = ["calls", "step"]

# What each of the 3 calls ran: my_block > Sequential(Linear, ReLU, Linear), then x @ x.T, sum.
OPS_PER_CALL = {
    "my_block": 1,
    "aten::linear": 2,
    "aten::t": 2,
    "aten::transpose": 2,
    "aten::as_strided": 6,
    "aten::addmm": 2,
    "aten::expand": 2,
    "aten::copy_": 2,
    "aten::resolve_conj": 6,
    "aten::relu": 1,
    "aten::clamp_min": 1,
    "aten::numpy_T": 1,
    "aten::permute": 1,
    "aten::matmul": 1,
    "aten::mm": 1,
    "aten::sum": 1,  # one x.sum(): the aten::sum it calls (sum.IntList_out) is part of it
    "aten::fill_": 1,
}
TREE = {
    "my_block": ["aten::linear", "aten::relu", "aten::linear"],
    "aten::linear": ["aten::t", "aten::addmm"],
    "aten::relu": ["aten::clamp_min"],
    "aten::matmul": ["aten::mm"],
}


def _path(version: str, workload: str) -> Path:
    return DATA / f"cpu_torch{version}_{workload}.json.gz"


@cache
def _trace(version: str, workload: str) -> dict[str, Any]:
    return json.loads(gzip.decompress(_path(version, workload).read_bytes()))  # type: ignore[no-any-return]


def _facts(profile: KernelProfile) -> tuple[object, ...]:
    """What a CPU profile says, less the times: the calls, each call's ops and counts, the op tree."""
    calls = [{name: call.ops[name].count for name in call.ops} for call in profile.calls]
    tree = {name: profile.ops[name].children for name in TREE}
    return len(profile.calls), calls, tree


def test_every_release_from_the_oldest_read_is_recorded() -> None:
    recorded = sorted(DATA.glob("cpu_torch*.json.gz"))
    names = {re.fullmatch(r"cpu_torch([\d.]+)_(\w+)\.json\.gz", p.name).groups() for p in recorded}  # type: ignore[union-attr]
    assert names == {(v, w) for v in VERSIONS for w in WORKLOADS}


@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("version", VERSIONS)
def test_each_torchs_trace_reads_to_the_same_profile(version: str, workload: str) -> None:
    profile = load_trace(_path(version, workload))
    assert _facts(profile) == (3, [OPS_PER_CALL] * 3, TREE)
    with pytest.raises(NoDeviceActivityError):  # recorded without a GPU: no kernel, and none lost
        len(profile.kernels)


def test_the_step_marks_are_the_plugins_or_torchs_own() -> None:
    """The plugin marks calls 0..2; torch's schedule marks steps 1..3 (step 0 was its warm-up)."""
    for version in VERSIONS:
        marks = {workload: _marks(_trace(version, workload)) for workload in WORKLOADS}
        assert marks == {"calls": ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"], "step": STEP_MARKS}


STEP_MARKS = ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"]


def _marks(trace: dict[str, Any]) -> list[str]:
    return [e["name"] for e in trace["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")]


def _layout(version: str) -> tuple[frozenset[str], frozenset[str]]:
    """The top-level keys of a version's trace, and the argument names of its ops."""
    trace = _trace(version, "calls")
    args = {k for e in trace["traceEvents"] if e.get("cat") == "cpu_op" for k in e.get("args", {})}
    return frozenset(trace) - {"traceEvents"}, frozenset(args)


def test_the_layouts_differ_where_the_reader_must_not_care() -> None:
    """What changed between the versions recorded (so that the test above reads more than one layout)."""
    keys = {v: _layout(v)[0] for v in VERSIONS}
    args = {v: _layout(v)[1] for v in VERSIONS}
    assert [v for v in VERSIONS if "trace_id" in keys[v]] == VERSIONS[2:]  # from 2.6 on
    assert [v for v in VERSIONS if "host_name" in keys[v]] == VERSIONS[8:]  # from 2.12 on
    # Kineto's own errors go into the trace from 2.6 (a CPU machine's "gpuGetDeviceCount failed").
    assert {v for v in VERSIONS if "ERROR" in keys[v]} <= set(VERSIONS[2:9])
    assert [v for v in VERSIONS if "finished" in args[v]] == ["2.7.1"]  # an op argument of 2.7 alone
    # Every version names the op's link to its launches "External id"; a CPU trace has no flow events.
    assert all({"External id", "Record function id", "Ev Idx"} <= args[v] for v in VERSIONS)
    for version in VERSIONS:
        phases = {e.get("ph") for e in _trace(version, "calls")["traceEvents"]}
        assert phases == {"X", "M", "i"}


def test_kineto_errors_after_the_events_leave_the_fast_reader_its_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """torch 2.6 to 2.12 write Kineto's errors after the event list, each with a ``]`` of its
    own ("DeviceProperties.cpp:47]"): the typed reader (msgspec) still finds the list's end,
    and reads what the standard library's reader reads."""
    text = gzip.decompress(_path("2.10.0", "calls").read_bytes()).decode()
    error = '"ERROR:2026-11-27 00:40:30 8205:8205 DeviceProperties.cpp:47] gpuGetDeviceCount failed"'
    many = re.sub(r'"ERROR": \[.*\]', '"ERROR": [' + ", ".join([error] * 40) + "]", text)
    assert many.count("cpp:47]") == 40
    typed = chrome.typed_reader()
    assert typed is not None
    for variant in (text, many):
        read = typed.read(variant.encode(), 0)
        assert read is not None, "the typed reader gave the trace up"
        header, events = read
        assert header["ERROR"][0].startswith("ERROR:")
        path = tmp_path / "variant.json"
        path.write_text(variant)
        assert read_with(path, "json", monkeypatch) == ("ok", repr((header, fields(events))))
