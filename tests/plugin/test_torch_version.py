"""A torch older than the plugin supports stops a session that uses the plugin, at start and in
one line; a session that does not use it runs as if the plugin were not installed."""

from __future__ import annotations

import pytest

# The inner session's torch reads as 2.4.1 to the plugin: it asks torch.__version__ once torch is
# imported (and the package metadata otherwise, so as not to import it).
OLD_TORCH = """
import torch

torch.__version__ = "2.4.1+cu121"
"""
REFUSAL = "pytest-kernelprof needs torch>=2.6; this is 2.4.1"


def test_an_old_torch_stops_a_session_that_uses_the_plugin(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(OLD_TORCH)
    pytester.makepyfile(
        test_uses="import pytest\n\ndef test_profiles(kernelprof):\n    pass\n\n"
        "@pytest.mark.gpu\ndef test_marked():\n    pass\n",
        test_plain="def test_plain():\n    pass\n",
    )
    result = pytester.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.stderr.lines if line.strip()] == [f"ERROR: {REFUSAL}"]
    result.stdout.no_fnmatch_line("*Traceback*")
    # The gpu marker alone is use of the plugin too.
    marked = pytester.runpytest_subprocess("test_uses.py::test_marked")
    assert marked.ret == pytest.ExitCode.USAGE_ERROR
    plain = pytester.runpytest_subprocess("test_plain.py")
    plain.assert_outcomes(passed=1)


def test_an_old_torch_fails_the_plugins_tests_at_setup_under_xdist(pytester: pytest.Pytester) -> None:
    """An xdist worker cannot stop the session at collection: its tests that use the plugin
    fail at setup with the line, the others run."""
    pytester.makeconftest(OLD_TORCH)
    pytester.makepyfile(test_uses="def test_profiles(kernelprof):\n    pass\n\ndef test_plain():\n    pass\n")
    result = pytester.runpytest_subprocess("-n", "2")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*_ ERROR at setup of test_profiles _*", "[[]gw?[]] linux -- *", REFUSAL])
    result.stdout.fnmatch_lines(["ERROR test_uses.py::test_profiles - Failed: pytest-kernelprof needs torch*"])
    result.stdout.no_fnmatch_line("*INTERNALERROR*")
