"""kernelprof_forbid and @pytest.mark.kernelprof_allow in a user's suite, through one pytester
run that holds a test per case; a bad rule is a usage error.

The suite compiles on the CPU (eager backend), every case in one process, so each test's graph
breaks and compile counts are its own, not the process's. The settings under xdist (each worker
reads the ini) are tests/plugin/test_xdist.py's.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from pytest_kernelprof.plugin.settings import SETTINGS_KEY

INI = """
[pytest]
kernelprof_forbid =
    no-relu: op=aten::relu | use gelu here
    no-breaks: graph_breaks>0 | compile the model whole
    fp32-gemm: kind=gemm dtype=fp32 | bf16 models must not run fp32 GEMMs
"""

SUITE = """
import pytest
import torch

def test_relu_breaks_a_rule(kernelprof):
    kernelprof(torch.relu, torch.randn(4))

@pytest.mark.kernelprof_allow("no-relu")
def test_an_allowed_rule(kernelprof):
    prof = kernelprof(torch.relu, torch.randn(4))
    assert prof.ops["aten::relu"].count == 1

def breaks(x):
    y = x * 2
    print("a graph break")
    return y + 1

def test_a_graph_break_breaks_a_rule(kernelprof):
    kernelprof(torch.compile(breaks, backend="eager"), torch.randn(4))

def clean(x):
    return torch.tanh(x) * 2

def test_compile_health_of_a_clean_function(kernelprof):
    prof = kernelprof(torch.compile(clean, backend="eager"), torch.randn(4))
    assert prof.compile.graph_breaks == []
    assert (prof.compile.regions, prof.compile.frames, prof.compile.recompiles) == (1, 1, 0)

def breaks_too(x):
    y = x * 2
    print("a graph break")
    return y + 1

@pytest.mark.kernelprof_allow("no-breaks")
def test_graph_breaks_in_a_failed_assertion(kernelprof):
    prof = kernelprof(torch.compile(breaks_too, backend="eager"), torch.randn(4))
    assert prof.compile.graph_breaks == []

@pytest.mark.kernelprof_allow("no-relu", "no-relus")
def test_a_marker_with_a_typo(kernelprof):
    pass

def test_kernel_rules_do_not_apply_without_gpu_activity(kernelprof):
    kernelprof(torch.mm, torch.randn(4, 4), torch.randn(4, 4))
"""


def test_rules_fail_the_tests_that_break_them_and_markers_exempt(cpu_pytester: pytest.Pytester) -> None:
    pytester = cpu_pytester
    pytester.makeini(INI)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_subprocess("-rfEp", "--junitxml", "out.xml")
    result.assert_outcomes(passed=3, failed=3, errors=1)
    # JUnit properties where no other CI output is asked for (GitLab, Jenkins): the numbers of
    # each profiled test, there whether it failed or passed.
    cases = ET.parse(pytester.path / "out.xml").getroot().iter("testcase")
    props = {case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")} for case in cases}
    assert props["test_relu_breaks_a_rule"]["kernelprof.profiles"] == "1"
    assert props["test_an_allowed_rule"]["kernelprof.profiles"] == "1"
    result.stdout.fnmatch_lines(
        [
            "FAILED test_suite.py::test_relu_breaks_a_rule - *",
            "FAILED test_suite.py::test_a_graph_break_breaks_a_rule - *",
            "FAILED test_suite.py::test_graph_breaks_in_a_failed_assertion - *",
            "ERROR test_suite.py::test_a_marker_with_a_typo - *",
            "PASSED test_suite.py::test_an_allowed_rule",
            "PASSED test_suite.py::test_compile_health_of_a_clean_function",
            "PASSED test_suite.py::test_kernel_rules_do_not_apply_without_gpu_activity",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*_ test_relu_breaks_a_rule _*",
            "E   *kernelprof_forbid rule 'no-relu' (op=aten::relu) is broken: use gelu here",
            "E   *ran in call 0:",
            "E   *aten::relu *1*",
            "E   *(a test that may break it: @pytest.mark.kernelprof_allow('no-relu'))",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*_ test_a_graph_break_breaks_a_rule _*",
            "E   *kernelprof_forbid rule 'no-breaks' (graph_breaks>0) is broken: compile the model whole",
            "E   *graph_breaks = 1:",
            "E   *test_suite.py:14: *print*",  # torch's words: "builtin: print" (2.6), "Failed to trace builtin ..."
            "E   *(a test that may break it: @pytest.mark.kernelprof_allow('no-breaks'))",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*_ test_graph_breaks_in_a_failed_assertion _*",
            "E   *assert ?1 graph break? == ??",
            "E   *the graph breaks:",
            "E   *test_suite.py:30: *print*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at setup of test_a_marker_with_a_typo _*",
            "@pytest.mark.kernelprof_allow names no kernelprof_forbid rule: 'no-relus'; "
            "the rules are: no-relu, no-breaks, fp32-gemm",
        ]
    )


def test_a_bad_rule_is_a_usage_error_that_names_its_line(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nkernelprof_forbid =\n    fine: kind=gemm\n    oops kind=gemm | no name\n")
    with pytest.raises(
        pytest.UsageError, match=r"^kernelprof_forbid line 2 'oops kind=gemm \| no name': expected 'NAME: CONDITION"
    ):
        pytester.parseconfigure().stash[SETTINGS_KEY]
