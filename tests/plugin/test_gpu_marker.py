"""The gpu marker and --kernelprof-require-gpu where CUDA is not available, through pytester:
gpu tests skip at their own location (issue 21), or fail under --kernelprof-require-gpu, and
the header says which.

Where the option and its ini key come from is tests/plugin/test_options.py's; gpu tests with
GPUs (faked) are tests/plugin/test_gpu_skips.py's, under xdist tests/plugin/test_gpus.py's.
"""

from __future__ import annotations

import pytest

# The decorators of test_one_gpu start on line 3, those of test_two_gpus on line 7.
GPU_TESTS = """
import pytest

@pytest.mark.gpu
def test_one_gpu():
    pass

@pytest.mark.gpu(count=2)
def test_two_gpus():
    pass

def test_plain():
    pass
"""


@pytest.fixture
def cpu_only(cpu_pytester: pytest.Pytester) -> pytest.Pytester:
    cpu_pytester.makepyfile(test_gpu=GPU_TESTS)
    return cpu_pytester


def test_without_cuda_gpu_tests_skip_at_their_own_location_and_say_why(cpu_only: pytest.Pytester) -> None:
    result = cpu_only.runpytest("-rs", "--strict-markers", "-v")
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(["kernelprof: no CUDA GPU, gpu tests skip; torch *, triton *"])
    result.stdout.fnmatch_lines(["test_gpu.py::test_plain PASSED*"])
    result.stdout.fnmatch_lines(
        [
            "SKIPPED [[]1[]] test_gpu.py:3: needs a CUDA GPU: torch.cuda.is_available() is False",
            "SKIPPED [[]1[]] test_gpu.py:7: needs 2 CUDA GPUs, found 0",
        ]
    )
    assert "plugin.py" not in result.stdout.str()


def test_require_gpu_turns_each_skip_into_a_failure(cpu_only: pytest.Pytester) -> None:
    result = cpu_only.runpytest("--kernelprof-require-gpu")
    result.assert_outcomes(passed=1, errors=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["kernelprof: no CUDA GPU, gpu tests error in setup (--kernelprof-require-gpu); torch *"]
    )
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at setup of test_one_gpu _*",
            "gpu test on a machine where CUDA is not available (--kernelprof-require-gpu)",
            "*_ ERROR at setup of test_two_gpus _*",
            "needs 2 CUDA GPUs, found 0 (--kernelprof-require-gpu)",
        ],
        consecutive=True,
    )


def test_the_marker_is_registered(pytester: pytest.Pytester) -> None:
    markers = pytester.parseconfigure().getini("markers")
    assert any(line.startswith("gpu: the test needs a CUDA GPU") for line in markers)
