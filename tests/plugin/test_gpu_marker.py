"""The gpu marker, --kernelprof-require-gpu and the header, through pytester.

Where the option and its ini key come from is tests/plugin/test_options.py's.
"""

from __future__ import annotations

import pytest

GPU_TESTS = """
import pytest

@pytest.mark.gpu
def test_needs_gpu():
    pass

def test_plain():
    pass
"""


@pytest.fixture
def cpu_only(cpu_pytester: pytest.Pytester) -> pytest.Pytester:
    cpu_pytester.makepyfile(test_gpu=GPU_TESTS)
    return cpu_pytester


def test_gpu_tests_skip_with_a_reason_without_cuda(cpu_only: pytest.Pytester) -> None:
    result = cpu_only.runpytest("-rs", "--strict-markers")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["kernelprof: no CUDA GPU, gpu tests skip; torch *, triton *"])
    result.stdout.fnmatch_lines(["*SKIPPED*needs a CUDA GPU: torch.cuda.is_available() is False*"])


def test_require_gpu_turns_the_skip_into_a_failure(cpu_only: pytest.Pytester) -> None:
    result = cpu_only.runpytest("--kernelprof-require-gpu")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["kernelprof: no CUDA GPU, gpu tests fail (--kernelprof-require-gpu); torch *"])
    result.stdout.fnmatch_lines(["*gpu test on a machine where CUDA is not available (--kernelprof-require-gpu)*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_the_marker_is_registered(pytester: pytest.Pytester) -> None:
    markers = pytester.parseconfigure().getini("markers")
    assert any(line.startswith("gpu: the test needs a CUDA GPU") for line in markers)
