"""--kernelprof-gpus: which GPU each xdist worker gets (CPU-testable through CUDA_VISIBLE_DEVICES)."""

from __future__ import annotations

import pytest

from pytest_kernelprof import GpuSpecError
from pytest_kernelprof.gpus import gpu_for_worker, parse_gpu_spec, visible_gpus


@pytest.mark.parametrize(
    ("spec", "visible", "workers", "expected"),
    [
        ("auto", ["0", "1"], 4, ["0", "1", "0", "1"]),
        ("1", ["0", "1"], 3, ["0", "0", "0"]),
        ("0,2", ["4", "5", "6"], 3, ["4", "6", "4"]),
        ("2,", ["4", "5", "6"], 2, ["6", "6"]),
        ("auto", ["GPU-1234", "GPU-abcd"], 2, ["GPU-1234", "GPU-abcd"]),
    ],
)
def test_assignment(spec: str, visible: list[str], workers: int, expected: list[str]) -> None:
    chosen = parse_gpu_spec(spec).choose(visible)
    assert [gpu_for_worker(chosen, f"gw{i}") for i in range(workers)] == expected


@pytest.mark.parametrize(
    ("spec", "visible", "message"),
    [
        ("0", ["0"], "a count must be at least 1"),
        ("3", ["0", "1"], "3 GPUs asked for, 2 visible"),
        ("0,7", ["0", "1"], "GPU index 7 is out of range"),
        ("gpu0", ["0"], "takes auto, a count N or indices"),
        ("-1,", ["0"], "takes auto, a count N or indices"),
        ("auto", [], "no CUDA GPU is visible"),
    ],
)
def test_bad_specs(spec: str, visible: list[str], message: str) -> None:
    with pytest.raises(GpuSpecError, match=message):
        parse_gpu_spec(spec).choose(visible)


def test_visible_gpus_index_into_the_callers_selection() -> None:
    assert visible_gpus("3, 5", 8) == ["3", "5"]
    assert visible_gpus(None, 2) == ["0", "1"]
    assert visible_gpus("", 2) == []


SUITE = """
import os

def test_a(worker_id):
    open(f"gpu_{worker_id}.txt", "w").write(os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))

def test_b(worker_id):
    open(f"gpu_{worker_id}.txt", "w").write(os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))
"""


def test_each_worker_gets_its_gpu(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("xdist")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5,6")
    pytester.makepyfile(test_w=SUITE)
    result = pytester.runpytest("-n", "2", "--kernelprof-gpus", "1,2")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["kernelprof GPUs per worker (CUDA_VISIBLE_DEVICES): gw0 -> GPU 5, gw1 -> GPU 6"])
    seen = {p.name: p.read_text() for p in pytester.path.glob("gpu_gw*.txt")}
    assert seen  # each worker that ran a test wrote what it saw
    assert all(seen[name] == {"gpu_gw0.txt": "5", "gpu_gw1.txt": "6"}[name] for name in seen)


def test_without_xdist_it_does_nothing(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5")
    pytester.makepyfile(test_w="import os\n\ndef test_a():\n    assert os.environ['CUDA_VISIBLE_DEVICES'] == '4,5'\n")
    pytester.runpytest("--kernelprof-gpus", "auto", "-p", "no:xdist").assert_outcomes(passed=1)


def test_a_bad_spec_is_a_usage_error(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("xdist")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    pytester.makepyfile(test_w="def test_a():\n    pass\n")
    result = pytester.runpytest("-n", "2", "--kernelprof-gpus", "3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--kernelprof-gpus 3: 3 GPUs asked for, 1 visible (0)*"])
