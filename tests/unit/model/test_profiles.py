"""The profile's values (``model/profiles.py``) show as one line in a repr and as their table
in IPython."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import pytest_kernelprof as kp
from pytest_kernelprof import load_trace

Trace = Callable[[str], Path]


@pytest.fixture
def linear(trace: Trace) -> kp.KernelProfile:
    return load_trace(trace("linear_eager"))


def test_reprs_are_one_line_and_ipython_gets_the_table(linear: kp.KernelProfile) -> None:
    shown: list[str] = []

    class Printer:
        def text(self, text: str) -> None:
            shown.append(text)

    for value in (linear, linear.kernels, linear.ops, linear.calls[0]):
        assert "\n" not in repr(value)
        value._repr_pretty_(Printer(), False)
        assert "\n" in shown[-1]
    assert "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT" in shown[1]
