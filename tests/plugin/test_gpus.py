"""--kernelprof-gpus: which GPU each xdist worker gets, and how a gpu(count=N) test is lent them
all in turn (CPU-testable through CUDA_VISIBLE_DEVICES, torch made to see those GPUs)."""

from __future__ import annotations

import json

import pytest

from pytest_kernelprof import GpuSpecError
from pytest_kernelprof.plugin.gpus import gpu_for_worker, parse_gpu_spec, visible_gpus
from tests.helpers import FAKE_GPUS_CONFTEST


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
        ("0,1,,2", ["0", "1", "2"], "takes auto, a count N or indices"),  # an adversarial probe's
        ("0,0", ["0", "1"], "GPU index 0 is listed twice in '0,0'"),  # two workers on one GPU, silently
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
    # As CUDA reads it: up to the first entry that names no device; -1 hides every GPU.
    assert visible_gpus("-1", 2) == []
    assert visible_gpus("1,-1,0", 2) == ["1"]
    assert visible_gpus("GPU-12ab, MIG-7, 2, 2", 4) == ["GPU-12ab", "MIG-7", "2"]


# torch on this CPU machine made to see the GPUs that CUDA_VISIBLE_DEVICES lists.

# Each worker writes the CUDA_VISIBLE_DEVICES it saw; the decorators of test_two_gpus start on line 15.
SUITE = """
import os

import pytest

def test_a(worker_id):
    open(f"gpu_{worker_id}.txt", "w").write(os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))

def test_b(worker_id):
    open(f"gpu_{worker_id}.txt", "w").write(os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))

@pytest.mark.gpu
def test_one_gpu():
    pass

@pytest.mark.gpu(count=2)
def test_two_gpus():
    open("lent.txt", "w").write(os.environ["CUDA_VISIBLE_DEVICES"])

@pytest.mark.gpu(count=3)
def test_three_gpus():
    pass
"""


def test_each_worker_gets_its_gpu_and_a_test_needing_more_is_lent_them_all(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("xdist")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5,6")
    pytester.makeconftest(FAKE_GPUS_CONFTEST)
    pytester.makepyfile(test_w=SUITE)
    result = pytester.runpytest("-n", "2", "--kernelprof-gpus", "1,2", "-rs")
    result.assert_outcomes(passed=4, skipped=1)
    # Told at collection, by the controller: which GPU each worker gets, and how more are lent.
    result.stdout.fnmatch_lines(
        [
            "kernelprof GPUs per worker (CUDA_VISIBLE_DEVICES): gw0 -> GPU 5, gw1 -> GPU 6",
            "kernelprof: a test marked gpu(count=N), N <= 2, is lent every chosen GPU in turn "
            "(the other workers' GPU tests wait; the processes it starts see them all)",
        ]
    )
    # gpu(count=2) ran with both chosen GPUs visible; gpu(count=3) is more than were chosen.
    assert (pytester.path / "lent.txt").read_text() == "5,6"
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] test_w.py:*: needs 3 CUDA GPUs, and --kernelprof-gpus chose 2 (5,6)"])
    # The GPU facts of the workers whose tests used the plugin, at the end.
    result.stdout.fnmatch_lines(["kernelprof: Fake H100 (sm90), CUDA *, torch *, triton * (gw*)"])
    seen = {p.name: p.read_text() for p in pytester.path.glob("gpu_gw*.txt")}
    assert seen  # each worker that ran a test wrote what it saw: its own GPU, restored after the lending
    assert all(seen[name] == {"gpu_gw0.txt": "5", "gpu_gw1.txt": "6"}[name] for name in seen)


def test_require_gpu_fails_a_test_needing_more_gpus_than_were_chosen(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("xdist")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    pytester.makeconftest(FAKE_GPUS_CONFTEST)
    pytester.makepyfile(test_w=SUITE)
    result = pytester.runpytest("-n", "1", "--kernelprof-gpus", "auto", "--kernelprof-require-gpu", "-k", "gpu")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at setup of test_three_gpus _*",
            "needs 3 CUDA GPUs, and --kernelprof-gpus chose 2 (0,1) (--kernelprof-require-gpu)",
        ]
    )


# Each GPU test writes when it started and ended; the lending must overlap none of the others.
TIMED = """
import json, os, time

import pytest

def _timed(name):
    start = time.monotonic()
    time.sleep(0.4)
    with open(f"times_{name}.json", "w") as f:
        json.dump([start, time.monotonic(), os.environ["CUDA_VISIBLE_DEVICES"]], f)

@pytest.mark.parametrize("i", range(6))
@pytest.mark.gpu
def test_one(i):
    _timed(f"one{i}")

@pytest.mark.gpu(count=2)
def test_lent():
    _timed("lent")
"""


def test_a_lent_test_runs_alone_among_the_workers_gpu_tests(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("xdist")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    pytester.makeconftest(FAKE_GPUS_CONFTEST)
    pytester.makepyfile(test_t=TIMED)
    pytester.runpytest("-n", "2", "--kernelprof-gpus", "auto").assert_outcomes(passed=7)
    times = {p.stem[len("times_") :]: json.loads(p.read_text()) for p in pytester.path.glob("times_*.json")}
    start, end, visible = times.pop("lent")
    assert visible == "0,1"
    assert len(times) == 6
    for other_start, other_end, other_visible in times.values():
        assert other_visible in ("0", "1")
        assert other_end <= start or other_start >= end, "a one-GPU test ran while the GPUs were lent"


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
