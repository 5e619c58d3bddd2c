"""--kernelprof-modules and ini kernelprof_modules: the fixture's default for modules=."""

from __future__ import annotations

import pytest

SUITE = """
import pytest
import torch
from pytest_kernelprof import ModuleNotRecordedError

net = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())

def test_a_model_gets_module_ranges(kernelprof):
    prof = kernelprof(net, torch.randn(2, 8))
    assert list(prof.modules) == ["Sequential", "0", "1"]

def test_a_function_is_profiled_without_them(kernelprof):
    prof = kernelprof(lambda: net(torch.randn(2, 8)))
    with pytest.raises(ModuleNotRecordedError):
        prof.module("0")

def test_one_call_can_turn_them_off(kernelprof):
    prof = kernelprof.profile(net, (torch.randn(2, 8),), modules=False)
    with pytest.raises(ModuleNotRecordedError):
        prof.module("0")
"""


@pytest.mark.parametrize("how", ["option", "ini"])
def test_modules_default_from_the_option_or_the_ini_file(cpu_pytester: pytest.Pytester, how: str) -> None:
    cpu_pytester.makepyfile(test_suite=SUITE)
    if how == "ini":
        cpu_pytester.makeini("[pytest]\nkernelprof_modules = true\n")
        result = cpu_pytester.runpytest_subprocess()
    else:
        result = cpu_pytester.runpytest_subprocess("--kernelprof-modules")
    result.assert_outcomes(passed=3)
