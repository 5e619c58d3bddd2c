"""gpu(count=N) on a machine with GPUs (faked on this CPU machine), without xdist: a test runs
where enough GPUs are visible and skips, naming its own location (issue 21), where too few
are; a malformed marker is an error; the GPU facts are told below "collected".

Without CUDA: tests/plugin/test_gpu_marker.py; one GPU per xdist worker: tests/plugin/test_gpus.py.
"""

from __future__ import annotations

import pytest

from tests.helpers import FAKE_GPUS_CONFTEST

# torch on this CPU machine made to see the GPUs that CUDA_VISIBLE_DEVICES lists.

# The decorators of test_three_gpus start on line 11.
GPU_COUNTS = """
import pytest

@pytest.mark.gpu
def test_one_gpu():
    pass

@pytest.mark.gpu(count=2)
def test_two_gpus():
    pass

@pytest.mark.gpu(count=3)
def test_three_gpus():
    pass

@pytest.mark.gpu(2)
def test_bad_marker():
    pass

def test_plain():
    pass
"""


def test_with_two_gpus_the_count_decides_and_the_device_line_follows_collected(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    pytester.makeconftest(FAKE_GPUS_CONFTEST)
    pytester.makepyfile(test_gpu=GPU_COUNTS)
    result = pytester.runpytest("-p", "no:xdist", "-v", "-rs")
    result.assert_outcomes(passed=3, skipped=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*collected 5 items", "kernelprof: Fake H100 (sm90), CUDA *, torch *, triton *"], consecutive=True
    )
    result.stdout.fnmatch_lines(
        [
            "test_gpu.py::test_one_gpu PASSED*",
            "test_gpu.py::test_two_gpus PASSED*",
            "test_gpu.py::test_three_gpus SKIPPED*",
            "test_gpu.py::test_bad_marker ERROR*",
            "test_gpu.py::test_plain PASSED*",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*_ ERROR at setup of test_bad_marker _*", "@pytest.mark.gpu: takes only count=N, got (2)"]
    )
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] test_gpu.py:11: needs 3 CUDA GPUs, found 2"])
