"""Smaller guards of issue 34: a bad --kernelprof-gpus without -n, kernelprof_allow given a list,
a --kernelprof-trace-dir no trace can be written to."""

from __future__ import annotations

import pytest


def test_a_bad_gpu_spec_is_a_usage_error_without_workers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_w="def test_a():\n    pass\n")
    result = pytester.runpytest("--kernelprof-gpus", "foo")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--kernelprof-gpus foo: takes auto, a count N or indices such as 0,2,5*"])


def test_allow_given_a_list_says_to_name_the_rules_one_by_one(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nkernelprof_forbid =\n    r1: syncs>0 | no syncs\n")
    pytester.makepyfile(
        test_a="""
import pytest

@pytest.mark.kernelprof_allow(["r1"])
def test_listed(kernelprof):
    pass
"""
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            '*@pytest.mark.kernelprof_allow takes rule names one by one, as kernelprof_allow("a", "b"), '
            "got [[]'r1'[]]; the rules are: r1"
        ]
    )
    result.stdout.no_fnmatch_line("*TypeError*")


def test_a_trace_dir_no_trace_can_be_written_to_is_said_once(cpu_pytester: pytest.Pytester) -> None:
    (cpu_pytester.path / "traces").write_text("a file, not a folder")
    cpu_pytester.makepyfile(
        test_s="""
import torch

def test_passes(kernelprof):
    kernelprof(torch.relu, torch.randn(4))
"""
    )
    result = cpu_pytester.runpytest("--kernelprof-trace-dir", "traces", "--kernelprof-save", "all")
    result.assert_outcomes(passed=1)
    said = [line for line in result.outlines if "no trace will be written" in line]
    assert said == [
        f"kernelprof: no trace will be written to --kernelprof-trace-dir {cpu_pytester.path / 'traces'}: "
        f"{cpu_pytester.path / 'traces'} is not a folder"
    ]
    # A usable one says nothing.
    result = cpu_pytester.runpytest("--kernelprof-trace-dir", "new/traces", "--kernelprof-save", "all")
    result.assert_outcomes(passed=1)
    assert not [line for line in result.outlines if "no trace will be written" in line]
    assert (cpu_pytester.path / "new" / "traces").is_dir()
