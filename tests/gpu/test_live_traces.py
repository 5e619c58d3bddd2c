"""Traces of a test's earlier profiles, live on a GPU: a later session takes the Kineto buffers an
earlier session's trace is written from (torch 2.11 on an H100: the traces saved at a test's end
held 0, 0 and 1 kernels). CPU CI plays it with tests/fake_gpu.py; this is the real thing.

    python -m pytest -p no:randomly -n 0 -m gpu --kernelprof-require-gpu tests/gpu/test_live_traces.py
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof.paths import trace_file_name

pytestmark = pytest.mark.gpu

THREE_PROFILES = """
import json

import torch


def test_three_profiles(kernelprof, request):
    a = torch.randn(256, 256, device="cuda")
    first = kernelprof(lambda: a @ a)
    second = kernelprof(lambda: torch.relu(a) + 1)
    third = kernelprof(lambda: a.sum())
    live = [[k.name for k in prof.kernels] for prof in (first, second, third)]
    (request.config.rootpath / "live.json").write_text(json.dumps(live))
"""


@pytest.mark.parametrize("save", ["all", "failed"])
def test_the_traces_saved_at_a_tests_end_hold_each_profiles_kernels(pytester: pytest.Pytester, save: str) -> None:
    failing = THREE_PROFILES + "    assert False, 'on purpose'\n" if save == "failed" else THREE_PROFILES
    pytester.makepyfile(test_two=failing)
    result = pytester.runpytest_subprocess("--kernelprof-trace-dir=traces", f"--kernelprof-save={save}")
    result.assert_outcomes(**({"failed": 1} if save == "failed" else {"passed": 1}))
    live = json.loads((pytester.path / "live.json").read_text())
    assert all(live), live  # a GEMM; relu and add; a reduction
    saved = []
    for index in range(3):
        path = pytester.path / "traces" / trace_file_name("test_two.py::test_three_profiles", index)
        saved.append([k.name for k in kp.load_trace(path).kernels])
    assert saved == live


def test_a_late_export_raises_and_a_kept_one_holds_its_kernels(tmp_path: Path) -> None:
    a = torch.randn(256, 256, device="cuda")
    profiler = kp.Profiler()
    profiler(lambda: a @ a)
    profiler(lambda: a.sum())
    with pytest.raises(kp.TraceNotKeptError):
        profiler.captures[0].export_trace(tmp_path / "late.json.gz")
    kept = kp.Profiler(keep_traces=True)
    first = kept(lambda: a @ a)
    kept(lambda: a.sum())
    kept.captures[0].export_trace(tmp_path / "kept.json.gz")
    assert kp.load_trace(tmp_path / "kept.json.gz").kernels.names == first.kernels.names
