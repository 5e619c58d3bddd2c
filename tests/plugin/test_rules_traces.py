"""Suite rules on recorded traces: ``kernelprof.load_trace`` on the fixture checks the ini's
``kernelprof_forbid`` rules, shows the profile of a failing test and saves its trace, as a live
profile does (one pytester run, a test per case); the rule parser takes every family a kernel
can have."""

from __future__ import annotations

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.rules import FAMILIES, parse_rule
from pytest_kernelprof.decode import RULES
from pytest_kernelprof.paths import trace_file_name
from tests.helpers import DATA

INI = """
[pytest]
kernelprof_forbid =
    no-tanh: kind=pointwise name=*tanh* | fuse the activation
    user-triton: family=triton | only Inductor's kernels here
"""

SUITE = f"""
import pytest

TRACE = {str(DATA / "h200_decode_eager.json.gz")!r}

def test_a_recorded_trace_breaks_a_rule(kernelprof):
    kernelprof.load_trace(TRACE)

@pytest.mark.kernelprof_allow("no-tanh")
def test_an_allowed_rule(kernelprof):
    prof = kernelprof.load_trace(TRACE, allow_variation=True)
    assert prof.kernels.count("*tanh*") > 0

@pytest.mark.kernelprof_allow("no-tanh")
def test_a_failing_assertion_shows_the_loaded_profile(kernelprof):
    prof = kernelprof.load_trace(TRACE)
    assert len(prof.kernels) == 0

@pytest.mark.kernelprof_allow("no-tanh")
def test_saved(kernelprof):
    kernelprof.load_trace(TRACE)
"""


def test_rules_apply_to_recorded_traces_and_a_saved_one_reads_back_the_same(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_subprocess("--kernelprof-trace-dir", "traces", "--kernelprof-save", "all")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ test_a_recorded_trace_breaks_a_rule _*",
            "E   *ForbiddenError: kernelprof_forbid rule 'no-tanh' (*) is broken: fuse the activation",
            "E   * kernels per call match:",
        ]
    )
    # The profile of each failing test is in its report, as for a live profile.
    result.stdout.fnmatch_lines(
        [
            "*_ test_a_failing_assertion_shows_the_loaded_profile _*",
            "*- kernelprof profile 1 of 1 -*",
            "*pointwise*aten*tanh*",
        ]
    )
    assert "api.py" not in result.stdout.str()  # the plugin's frames are hidden
    # --kernelprof-save all writes the loaded trace of a passing test; it reads back the same.
    saved = pytester.path / "traces" / trace_file_name("test_suite.py::test_saved", 0)
    assert [p for p in saved.parent.iterdir() if "test_saved" in p.name] == [saved]
    assert load_trace(saved).kernels.names == load_trace(DATA / "h200_decode_eager.json.gz").kernels.names


def test_every_family_a_kernel_can_have_is_a_rule_value() -> None:
    decoded = {rule.family for rule in RULES} | {"unknown", "triton"}  # triton: user kernels capture learned
    assert decoded <= set(FAMILIES)
    for family in sorted(decoded):
        assert parse_rule(f"r: family={family}").fields == (("family", (family,)),)
