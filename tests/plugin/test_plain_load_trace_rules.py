"""The module's ``load_trace`` checks no suite rule: in a test that ``kernelprof_forbid`` rules hold,
it warns with ``UncheckedProfileWarning`` (an error under ``filterwarnings = error``) rather than
pass a trace that breaks one in silence; the fixture's ``kernelprof.load_trace`` checks the rules,
and without rules, or outside a test, nothing warns."""

from __future__ import annotations

import pytest

from tests.helpers import DATA

TRACE = str(DATA / "h200_bf16_mlp_fp32_linear.json.gz")  # one fp32 GEMM

RULES = """
kernelprof_forbid =
    fp32-gemm: kind=gemm dtype=fp32 | bf16 models must not run fp32 GEMMs
"""

SUITE = f"""
import pytest

from pytest_kernelprof import UncheckedProfileWarning, load_trace

TRACE = {TRACE!r}
AT_IMPORT = load_trace(TRACE)  # outside a test: no warning, else collection would fail

def test_plain_load_trace():
    load_trace(TRACE)

def test_fixture_load_trace(kernelprof):
    kernelprof.load_trace(TRACE)

def test_the_warning_points_at_the_callers_line():
    with pytest.warns(UncheckedProfileWarning) as record:
        load_trace(TRACE)
    assert record[0].filename == __file__

@pytest.mark.kernelprof_allow("fp32-gemm")
def test_every_rule_allowed():
    assert len(load_trace(TRACE).kernels.of_kind("gemm")) > 0
"""


def test_plain_load_trace_warns_where_suite_rules_hold_the_test(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nfilterwarnings = error\n" + RULES)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ test_plain_load_trace _*",
            ">       load_trace(TRACE)",
            "E       *UncheckedProfileWarning: load_trace('*h200_bf16_mlp_fp32_linear.json.gz') checked the profile "
            "against none of the suite's kernelprof_forbid rules (fp32-gemm): *kernelprof.load_trace(path)*",
        ]
    )
    # The fixture's load_trace checks the rule and fails on it, with no warning.
    result.stdout.fnmatch_lines(
        [
            "*_ test_fixture_load_trace _*",
            "E   *ForbiddenError: kernelprof_forbid rule 'fp32-gemm' (kind=gemm dtype=fp32) is broken: *",
        ]
    )
    section = result.stdout.str().split("_ test_fixture_load_trace _")[1].split("short test summary info")[0]
    assert "UncheckedProfileWarning" not in section


def test_no_warning_without_suite_rules(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nfilterwarnings = error\n")
    pytester.makepyfile(
        test_suite=f"""
from pytest_kernelprof import load_trace

def test_plain_load_trace():
    assert len(load_trace({TRACE!r}).kernels.of_kind("gemm")) > 0
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    result.assert_outcomes(passed=1)
