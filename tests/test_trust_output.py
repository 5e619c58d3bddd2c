"""What a failing test's report shows, read as a user reads it (issue 21)."""

from __future__ import annotations

import pytest


def test_a_failing_compiled_test_shows_no_torch_trace_log_lines(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import torch

        def double(x):
            return torch.sin(x) * 2

        def test_compiled(kernelprof):
            compiled = torch.compile(double, backend="eager")
            prof = kernelprof(compiled, torch.randn(4))
            assert prof.compile.frames == 99
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert "torch.__trace" not in result.stdout.str()


def test_a_compile_in_a_test_without_the_fixture_logs_nothing_either(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        import torch

        def triple(x):
            return torch.cos(x) * 3

        @pytest.fixture
        def compiled():
            return torch.compile(triple, backend="eager")(torch.randn(4))

        def test_compiled(compiled):
            torch.compile(triple, backend="eager")(torch.randn(5))
            assert compiled is None
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--log-level=DEBUG")
    result.assert_outcomes(errors=0, failed=1)
    assert "torch.__trace" not in result.stdout.str()
