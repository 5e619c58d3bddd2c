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


def test_a_trace_files_name_stays_on_the_tables_first_line(trace: Trace, tmp_path: Path) -> None:
    """The table starts with where the profile came from: a file named with a newline and
    ``::error::`` (an artifact from another job) must not start a line, a workflow command."""
    path = tmp_path / "x\n::error::fromfilename.json.gz"
    path.write_bytes(trace("sync_device").read_bytes())
    prof = load_trace(path)
    assert len(prof.kernels) == 1
    text = prof.table()
    assert not [line for line in text.splitlines() if line.strip().startswith("::")], text
    assert text.splitlines()[0].endswith(r"x\n::error::fromfilename.json.gz on NVIDIA H200 (sm90): 3 calls")
    assert "\n" not in repr(prof)
