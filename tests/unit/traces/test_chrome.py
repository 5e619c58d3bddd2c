"""The "kernelprof" key of exported traces: what capture learned, written without rewriting the
trace, read back by load_trace, refused when malformed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof import RecordingError, TraceError
from pytest_kernelprof.traces.kernelprof_key import append_kernelprof_key
from tests.helpers import triton_trace


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"traceEvents": [\n  ],"traceName": "x" }', {"traceEvents": [], "traceName": "x"}),
        ('{"traceEvents": []}\n\n  \n', {"traceEvents": []}),
        ("{ }", {}),
    ],
)
def test_the_key_goes_before_the_closing_brace(tmp_path: Path, text: str, expected: dict[str, object]) -> None:
    path = tmp_path / "t.json"
    path.write_text(text)
    append_kernelprof_key(str(path), {"version": 1, "triton_kernels": ["k"]})
    assert json.loads(path.read_text()) == {**expected, "kernelprof": {"version": 1, "triton_kernels": ["k"]}}


def test_a_file_that_is_no_json_object_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text("[1, 2]")
    with pytest.raises(RecordingError, match="does not end with"):
        append_kernelprof_key(str(path), {"version": 1})
    assert path.read_text() == "[1, 2]"


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CPU session: no kernel to learn")
def test_an_uncompressed_export_carries_the_key_and_loads(tmp_path: Path) -> None:
    profiler = kp.Profiler(warmup=0, calls=2)
    profiler(torch.relu, torch.ones(2))
    path = tmp_path / "relu.json"
    profiler.captures[-1].export_trace(path)
    assert json.loads(path.read_text())["kernelprof"] == {"version": 1, "triton_kernels": []}
    assert [p.name for p in tmp_path.iterdir()] == ["relu.json"]
    assert kp.load_trace(path).ops["aten::relu"].count == 1


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ([1], "not an object with an integer 'version'"),
        ({"triton_kernels": []}, "not an object with an integer 'version'"),
        ({"version": 1, "triton_kernels": "k"}, "not a list of kernel names"),
        ({"version": 1, "triton_kernels": [3]}, "not a list of kernel names"),
    ],
)
def test_a_malformed_kernelprof_key_is_a_trace_error_naming_the_file(
    tmp_path: Path, section: object, message: str
) -> None:
    with pytest.raises(TraceError, match=f"trace.json: .*{message}"):
        triton_trace(tmp_path, kernelprof=section)
