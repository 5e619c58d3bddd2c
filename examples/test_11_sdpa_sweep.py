"""The smallest sequence length at which scaled-dot-product attention stops using flash attention.

``F.scaled_dot_product_attention`` picks its backend per call, from the inputs: on an H100 with
torch 2.11 and a recent cuDNN, cuDNN's attention comes first, and flash attention runs only
where cuDNN declines. ``kernelprof.explore`` finds where that changes without a list of lengths:
Hypothesis draws sequence lengths, keeps those where flash attention runs, and shrinks the
first where it does not to the smallest one, written as a case to pin in a sweep.

The GPU half runs live (``@pytest.mark.gpu``); the CPU half reads the sweep recorded on an H100
(``tests/data/h100_sweep_sdpa/``; tools/record_sweeps.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from examples.models import attention_case
from pytest_kernelprof import SweepError, load_sweep

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"


def runs_flash_attention(prof):
    assert {k.family for k in prof.kernels.of_kind("attention")} == {"flash"}


@pytest.mark.gpu
def test_explore_finds_where_sdpa_stops_using_flash_attention(kernelprof):
    st = pytest.importorskip("hypothesis.strategies")
    with pytest.raises(SweepError) as failure:
        kernelprof.explore(attention_case, dict(seq_len=st.integers(1, 4096)), runs_flash_attention, max_cases=20)
    print(failure.value)
    pinned = int(re.search(r"pin it: cases=\[dict\(seq_len=(\d+)\)\]", str(failure.value)).group(1))
    # The smallest: every shorter length runs flash attention, and the pinned one does not.
    kernelprof.sweep(attention_case, dict(seq_len=range(1, pinned))).every(runs_flash_attention)
    kernelprof.sweep(attention_case, [dict(seq_len=pinned)]).none(runs_flash_attention)
    assert pinned == 2  # on an H100, torch 2.11.0+cu130, cuDNN 9.19


@pytest.mark.gpu
def test_a_sweep_shows_which_backend_each_length_gets(kernelprof):
    sweep = kernelprof.sweep(attention_case, dict(seq_len=[1, 2, 3, 64, 1024]))
    print(sweep.table())
    sweep[:1].every(runs_flash_attention)
    sweep[1:].none(runs_flash_attention)


def test_recorded_sdpa_sweep_runs_flash_attention_only_at_length_1():
    sweep = load_sweep(DATA / "h100_sweep_sdpa")
    runs_flash_attention(sweep.profile(seq_len=1))
    sweep[1:].none(runs_flash_attention)
    with pytest.raises(SweepError, match=r"pin it: cases=\[dict\(seq_len=2\)\]"):
        sweep.every(runs_flash_attention)
