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
