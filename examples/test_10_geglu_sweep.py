"""The gelu*mul fusion at every shape: a sweep, and the smallest shape that breaks it.

A test of one input (``[64, 128, 768]``, ``test_03_geglu_mlp.py``) says nothing of the other
shapes a model runs at. ``kernelprof.sweep(build, cases)`` profiles the compiled GeGLU MLP per
case (batch sizes, hidden sizes, static and dynamic compile), and ``sweep.every(check)`` fails
naming each case that breaks the check:

* compiled, it fuses the GELU and the mul into one Triton kernel at every batch and hidden
  size, statically and dynamically compiled. Static compile recompiles per new batch size (the
  ``compiled`` column: each case's warm-up compiled a frame); the dynamic one reuses its graph;
* a graph break for odd batch sizes only (``GeGLUBreakingOddBatches``) leaves the GELU and the
  mul in two graphs for those batches, two kernels: the sweep fails naming the smallest odd
  batch, with its kernels beside those of the nearest case that fused;
* ``kernelprof.explore`` finds that case without a list: Hypothesis draws batch sizes and shrinks
  the first that breaks the fusion to the smallest, ``batch=3``, written as a case to pin.

The GPU halves run live (``@pytest.mark.gpu``); the CPU halves read the sweeps recorded on an
H100 (``tests/data/h100_sweep_geglu/``, ``h100_sweep_geglu_odd_break/``; tools/record_sweeps.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from examples.models import GeGLUBreakingOddBatches, geglu_cases
from pytest_kernelprof import SweepError, load_sweep

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"


def fuses_gelu_and_mul(prof):
    assert prof.kernels.count("triton_*gelu*mul*") == 1


@pytest.fixture
def many_shapes():
    """Each shape of a static compile is a recompile of the same ``forward``; past dynamo's
    limit (8 per function) it runs ``forward`` eagerly, unfused: allow a sweep's worth."""
    with torch._dynamo.config.patch(recompile_limit=64):
        yield


@pytest.mark.gpu
def test_compiled_geglu_fuses_gelu_and_mul_at_every_shape(kernelprof, many_shapes):
    kernelprof.no_grad = True
    sweep = kernelprof.sweep(geglu_cases(), dict(dynamic=[False, True], hidden=[1024, 3072], batch=[1, 17, 64]))
    print(sweep.table())
    assert len(sweep) == 12
    sweep.every(fuses_gelu_and_mul)
    static = [case for case in sweep if not case["dynamic"]]
    assert all(case.compiled >= 1 for case in static)  # a new batch size: a recompile in the warm-up
    assert any(case.compiled == 0 for case in sweep if case["dynamic"])  # the dynamic graph serves it
    assert all(case.profile.compile.recompiles == 0 for case in sweep)  # none inside the profiled calls


@pytest.mark.gpu
def test_a_graph_break_for_odd_batches_fails_naming_the_smallest(kernelprof, many_shapes):
    kernelprof.no_grad = True
    sweep = kernelprof.sweep(geglu_cases(GeGLUBreakingOddBatches), dict(hidden=[1024], batch=[2, 8, 17, 33, 64]))
    with pytest.raises(SweepError) as failure:
        sweep.every(fuses_gelu_and_mul)
    message = str(failure.value)
    print(message)
    assert "the check broke in 2 of 5 cases: hidden=1024, batch=17; hidden=1024, batch=33" in message
    assert "pin it: cases=[dict(hidden=1024, batch=17)]" in message
    assert "left: hidden=1024, batch=8 (the nearest case that passed); right: hidden=1024, batch=17" in message


@pytest.mark.gpu
def test_hypothesis_shrinks_to_the_smallest_odd_batch(kernelprof, many_shapes):
    st = pytest.importorskip("hypothesis.strategies")
    kernelprof.no_grad = True
    with pytest.raises(SweepError) as failure:
        kernelprof.explore(
            geglu_cases(GeGLUBreakingOddBatches),
            dict(hidden=st.just(1024), batch=st.integers(2, 64)),
            fuses_gelu_and_mul,
            max_cases=16,
        )
    print(failure.value)
    assert "pin it: cases=[dict(hidden=1024, batch=3)]" in str(failure.value)


def test_recorded_geglu_sweep_fuses_at_every_shape():
    sweep = load_sweep(DATA / "h100_sweep_geglu")
    assert len(sweep) == 8
    sweep.every(fuses_gelu_and_mul)
    assert all(case.compiled >= 1 for case in sweep)  # statically compiled: a recompile per shape


def test_recorded_odd_batch_break_names_the_smallest_odd_batch():
    sweep = load_sweep(DATA / "h100_sweep_geglu_odd_break")
    with pytest.raises(SweepError, match=r"pin it: cases=\[dict\(hidden=1024, batch=3\)\]") as failure:
        sweep.every(fuses_gelu_and_mul)
    assert "left: hidden=1024, batch=2 (the nearest case that passed)" in str(failure.value)
    unfused = sweep.profile(hidden=1024, batch=3)
    assert unfused.compile.regions == 2  # the break: two compiled graphs per call
    assert unfused.kernels.count("triton_*gelu*") == unfused.kernels.count("triton_*mul*") == 1
