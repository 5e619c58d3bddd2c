"""GPU skips name the test (issue 21): where pytest's own skip marks put it, the line the
decorators start on."""

from __future__ import annotations

import pytest

GPU_TESTS = """
import pytest

@pytest.mark.gpu
def test_one_gpu():
    pass

@pytest.mark.gpu(count=2)
def test_two_gpus():
    pass
"""


def test_a_gpu_skip_names_the_tests_own_location(cpu_pytester: pytest.Pytester) -> None:
    cpu_pytester.makepyfile(test_gpu=GPU_TESTS)
    result = cpu_pytester.runpytest("-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(
        [
            "SKIPPED [[]1[]] test_gpu.py:3: needs a CUDA GPU: torch.cuda.is_available() is False",
            "SKIPPED [[]1[]] test_gpu.py:7: needs 2 CUDA GPUs, found 0",
        ]
    )
    assert "plugin.py" not in result.stdout.str()


# torch on this CPU machine made to see the GPUs that CUDA_VISIBLE_DEVICES lists.
FAKE_GPUS_CONFTEST = """
import os
import torch

def _count():
    return len([d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()])

torch.cuda.is_available = lambda: _count() > 0
torch.cuda.device_count = _count
torch.cuda.current_device = lambda: 0
torch.cuda.get_device_capability = lambda index=None: (9, 0)
torch.cuda.get_device_name = lambda index=None: "Fake H100"
"""


@pytest.mark.parametrize(("option", "outcome"), [((), "skipped"), (("--kernelprof-require-gpu",), "errors")])
def test_tests_no_worker_can_run_are_told_at_collection_and_why(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, option: tuple[str, ...], outcome: str
) -> None:
    pytest.importorskip("xdist")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    pytester.makeconftest(FAKE_GPUS_CONFTEST)
    pytester.makepyfile(test_gpu=GPU_TESTS)
    result = pytester.runpytest("-n", "2", "--kernelprof-gpus", "auto", "-rsE", *option)
    result.assert_outcomes(passed=1, **{outcome: 1})
    verb = "fail" if option else "skip"
    result.stdout.fnmatch_lines(
        [
            "kernelprof GPUs per worker (CUDA_VISIBLE_DEVICES): gw0 -> GPU 0, gw1 -> GPU 1",
            f"kernelprof: each worker sees one GPU, so tests marked gpu(count=N) with N > 1 {verb}: "
            "run them without -n (-n 0)",
            "*needs 2 CUDA GPUs, and --kernelprof-gpus gives each xdist worker one (GPU ? here): "
            "run it without -n (-n 0)*",
        ]
    )


def test_without_a_gpu_per_worker_two_gpus_run_a_two_gpu_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    pytester.makeconftest(FAKE_GPUS_CONFTEST)
    pytester.makepyfile(test_gpu=GPU_TESTS)
    result = pytester.runpytest("-p", "no:xdist")
    result.assert_outcomes(passed=2)
    assert "each worker sees one GPU" not in result.stdout.str()
