"""--kernelprof-modules: the fixture's default for modules=. (The ini key kernelprof_modules sets the
same setting: tests/plugin/test_options.py.)"""

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


def test_the_option_gives_the_fixture_module_ranges(cpu_pytester: pytest.Pytester) -> None:
    cpu_pytester.makepyfile(test_suite=SUITE)
    result = cpu_pytester.runpytest_subprocess("--kernelprof-modules")
    result.assert_outcomes(passed=3)
