"""A profile made without the ``kernelprof`` fixture checks no suite rule: the module's
``load_trace``, ``load_sweep`` and ``profile``, and a ``Profiler`` the test made. In a test that
``kernelprof_forbid`` rules hold, each warns with ``UncheckedProfileWarning`` (an error under
``filterwarnings = error``) rather than pass a profile that breaks one in silence; the fixture's
``kernelprof.load_trace`` and ``kernelprof.load_sweep`` check the rules, and without rules, or
outside a test, nothing warns."""

from __future__ import annotations

import sys

import pytest

from tests.helpers import DATA

TRACE = str(DATA / "h200_bf16_mlp_fp32_linear.json.gz")  # one fp32 GEMM
SWEEP = str(DATA / "h100_sweep_geglu")  # bf16 GEMMs only

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


PROFILES = f"""
import pytest
import torch

from pytest_kernelprof import Profiler, load_sweep, profile

def step():
    return torch.ones(4) * 2

def test_module_profile():
    profile(step)

def test_profiler_made_in_the_test():
    Profiler()(step)

def test_record_of_a_profiler_made_in_the_test():
    with Profiler().record():
        step()

def test_profiler_given_the_rule():
    Profiler(forbid=["fp32-gemm: kind=gemm dtype=fp32"])(step)

def test_module_load_sweep():
    load_sweep({SWEEP!r})

def test_fixture_load_sweep(kernelprof):
    assert len(kernelprof.load_sweep({SWEEP!r})) == 8

def test_fixture_profile(kernelprof):
    kernelprof(step)

@pytest.mark.kernelprof_allow("fp32-gemm")
def test_every_rule_allowed():
    profile(step)
    load_sweep({SWEEP!r})
"""


def test_every_profile_made_without_the_fixture_warns_where_suite_rules_hold(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nfilterwarnings = error\n" + RULES)
    pytester.makepyfile(test_suite=PROFILES)
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    result.assert_outcomes(passed=4, failed=4)
    against = "against none of the suite's kernelprof_forbid rules (fp32-gemm): "
    for test, line, warned in [
        ("test_module_profile", ">       profile(step)", "pytest_kernelprof.profile(fn) checked the profile "),
        (
            "test_profiler_made_in_the_test",
            ">       Profiler()(step)",
            "a Profiler made in the test checked the profile ",
        ),
        (
            "test_record_of_a_profiler_made_in_the_test",
            ">       with Profiler().record():",
            "record() of a Profiler made in the test checked the profile ",
        ),
        ("test_module_load_sweep", ">       load_sweep(*)", "load_sweep('*h100_sweep_geglu') checked its profiles "),
    ]:
        result.stdout.fnmatch_lines([f"*_ {test} _*", line, f"E   *UncheckedProfileWarning: {warned}{against}*"])
    result.stdout.fnmatch_lines(["*kernelprof.load_sweep(path), which checks them*"])
    result.stdout.fnmatch_lines(
        ["*Use the kernelprof fixture (kernelprof(fn), kernelprof.profile(...)), which holds them*"]
    )


def test_the_fixtures_load_sweep_holds_each_case_to_the_suite_rules(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nfilterwarnings = error\nkernelprof_forbid =\n    bf16-gemm: kind=gemm dtype=bf16\n")
    pytester.makepyfile(
        test_suite=f"""
def test_fixture_load_sweep(kernelprof):
    kernelprof.load_sweep({SWEEP!r})
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E   *ForbiddenError: kernelprof_forbid rule 'bf16-gemm' (kind=gemm dtype=bf16) is broken",
            "E   *3 of 4 kernels per call match:",
        ]
    )
    if sys.version_info >= (3, 11):  # exceptions take notes
        result.stdout.fnmatch_lines(["E   *raised for the loaded sweep's case hidden=1024, batch=2"])
    assert "UncheckedProfileWarning" not in result.stdout.str()
