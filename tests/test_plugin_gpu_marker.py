"""The gpu marker, --kernelprof-require-gpu, the header and option validation, through pytester."""

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
    result.stdout.fnmatch_lines(["*SKIPPED*needs a CUDA GPU: torch.cuda.is_available() is False*"])


def test_require_gpu_turns_the_skip_into_a_failure(cpu_only: pytest.Pytester) -> None:
    result = cpu_only.runpytest("--kernelprof-require-gpu")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*gpu test on a machine where CUDA is not available (--kernelprof-require-gpu)*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_require_gpu_from_the_ini_file(cpu_only: pytest.Pytester) -> None:
    cpu_only.makeini("[pytest]\nkernelprof_require_gpu = true\n")
    cpu_only.runpytest().assert_outcomes(passed=1, errors=1)


def test_the_marker_is_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.gpu: the test needs a CUDA GPU*"])


def test_header_names_the_gpu_state_and_versions(cpu_only: pytest.Pytester) -> None:
    result = cpu_only.runpytest()
    result.stdout.fnmatch_lines(["kernelprof: no CUDA GPU, gpu tests skip; torch *, triton *"])
    result = cpu_only.runpytest("--kernelprof-require-gpu")
    result.stdout.fnmatch_lines(["kernelprof: no CUDA GPU, gpu tests fail (--kernelprof-require-gpu); torch *"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kernelprof-calls", "0"], "--kernelprof-calls must be at least 1, got 0"),
        (["--kernelprof-warmup", "-1"], "--kernelprof-warmup must be at least 0, got -1"),
        (["--kernelprof-warmup", "two"], "--kernelprof-warmup takes an integer, got 'two'"),
    ],
)
def test_bad_option_values_are_usage_errors(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


def test_help_lists_the_options(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(
        [
            "GPU kernel assertions (pytest-kernelprof):",
            "*--kernelprof-require-gpu*",
            "*--kernelprof-warmup=N*",
            "*--kernelprof-calls=N*",
        ]
    )
