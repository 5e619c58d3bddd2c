"""What users give kernel baselines, through pytester: kernels of a family they taught, check
names of any type, and test ids a shell would misread in the commands a failure suggests."""

from __future__ import annotations

import shlex

import pytest

from tests.helpers import DATA

TAUGHT = """
from pathlib import Path

DATA = Path({data!r})


def test_taught(kernelprof, kernel_baseline):
    kernel_baseline.check(kernelprof.load_trace(DATA / "h200_sync_device.json.gz"))
"""


def test_a_baseline_of_a_taught_family_is_read_back(cpu_pytester: pytest.Pytester) -> None:
    cpu_pytester.makeini("[pytest]\nkernelprof_kernels = *vectorized_elementwise*: kind=pointwise family=mylib\n")
    cpu_pytester.makepyfile(test_b=TAUGHT.format(data=str(DATA)))
    cpu_pytester.runpytest("--kernelprof-update").assert_outcomes(passed=1)
    assert '"family": "mylib"' in (cpu_pytester.path / "__kernelprof__" / "test_b" / "test_taught.json").read_text()

    cpu_pytester.runpytest().assert_outcomes(passed=1)

    # Taught no more: the kernel's family changed, which the diff says; the file is not to blame.
    cpu_pytester.makeini("[pytest]\n")
    result = cpu_pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*kernel signature differs from the baseline sm90/default*", "*- pointwise/mylib*"])
    result.stdout.no_fnmatch_line("*BaselineError*")


NAMES = """
from pathlib import Path

import torch

from pytest_kernelprof import load_trace

PROF = load_trace(Path({data!r}) / "h200_linear_eager.json.gz")


def test_dtype(kernel_baseline):
    kernel_baseline.check(PROF, name=torch.float16)


def test_int_then_str(kernel_baseline):
    kernel_baseline.check(PROF, name="default")
    kernel_baseline.check(PROF, name=1)


def test_fine(kernel_baseline):
    kernel_baseline.check(PROF)
"""


@pytest.mark.parametrize("update", [["--kernelprof-update"], []], ids=["update", "compare"])
def test_a_check_name_that_is_not_a_str_fails_its_test_and_the_run_goes_on(
    cpu_pytester: pytest.Pytester, update: list[str]
) -> None:
    cpu_pytester.makepyfile(test_b=NAMES.format(data=str(DATA)))
    if not update:
        cpu_pytester.runpytest("--kernelprof-update").assert_outcomes(passed=1, failed=2)

    result = cpu_pytester.runpytest(*update)

    result.assert_outcomes(passed=1, failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.no_fnmatch_line("*INTERNALERROR*")
    result.stdout.fnmatch_lines(
        [
            "*kernel_baseline.check(PROF, name=torch.float16)*",
            "E*TypeError: kernel_baseline.check() takes name= as a str (the entry's name in the baseline file), "
            "got dtype torch.float16: pass name=str(...) or an f-string",
            "test_b.py:11: TypeError",
        ]
    )
    result.stdout.fnmatch_lines(["*kernel_baseline.check(PROF, name=1)*", "E*TypeError: *got int 1: *"])
    if update:
        # What the failed tests checked before the bad name is recorded, and the summary says so.
        result.stdout.fnmatch_lines(["*kernelprof: 2 baselines written*"])


QUOTES = """
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace

DATA = Path({data!r})


@pytest.mark.parametrize("odd", {ids!r})
def test_quote(kernel_baseline, odd):
    kernel_baseline.check(load_trace(DATA / "h200_linear_eager.json.gz"))
"""

HOSTILE = ["a'; touch PWNED; echo '", "it's", "$(touch PWNED)", "two words"]


def test_the_suggested_update_command_records_the_test_it_names_and_runs_nothing_else(
    cpu_pytester: pytest.Pytester,
) -> None:
    cpu_pytester.makepyfile(test_b=QUOTES.format(data=str(DATA), ids=HOSTILE))
    result = cpu_pytester.runpytest()
    result.assert_outcomes(failed=len(HOSTILE))
    commands = [line.split("record it with: ", 1)[1] for line in result.outlines if "record it with: " in line]
    assert len(commands) == len(HOSTILE)
    for odd, command in zip(HOSTILE, commands, strict=True):
        assert shlex.split(command) == ["pytest", "--kernelprof-update", f"test_b.py::test_quote[{odd}]"], command

    # The words a shell makes of it record that one test.
    words = shlex.split(commands[0])
    result = cpu_pytester.runpytest(*words[1:])
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*kernelprof: 1 baseline written*"])
    assert not (cpu_pytester.path / "PWNED").exists()


def test_a_baseline_failure_names_its_file_relative_to_the_rootdir(cpu_pytester: pytest.Pytester) -> None:
    # A trial: the terminal named the file by its absolute path, the job summary and the docs'
    # sample by __kernelprof__/...: one path, read the same in both.
    cpu_pytester.makeini("[pytest]\n")
    cpu_pytester.makepyfile(test_b=TAUGHT.format(data=str(DATA)))
    cpu_pytester.runpytest("--kernelprof-update").assert_outcomes(passed=1)
    cpu_pytester.makepyfile(
        test_b=TAUGHT.format(data=str(DATA)).replace("h200_sync_device.json.gz", "h200_geglu_eager.json.gz")
    )
    result = cpu_pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "kernel_baseline = <kernel_baseline __kernelprof__/test_b/test_taught.json>",
            "*kernel signature differs from the baseline sm90/default in __kernelprof__/test_b/test_taught.json *",
        ]
    )
    result.stdout.no_fnmatch_line(f"*{cpu_pytester.path}*__kernelprof__*")
