"""Compiled pointwise kernels of three dtypes, recorded on an NVIDIA H100 (torch 2.11, Triton 3.6;
tools/record_inductor.py), checked offline: the dtypes the live capture read from Inductor's
autotuners, kept in the trace's ``kernelprof.triton_ir``, are what load_trace gives."""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import pytest

from pytest_kernelprof import UndecodedKernelWarning, load_trace
from tests.helpers import DATA

# trace -> (Inductor's kernel, the dtype it writes)
RECORDED = {
    "h100_inductor_geglu_bf16": ("triton_poi_fused_gelu_mul_0", "bf16"),
    "h100_inductor_geglu_fp32": ("triton_poi_fused_gelu_mul_0", "fp32"),
    # sigmoid(x).float() * 2.0 on a bf16 x: reads bf16, writes fp32
    "h100_inductor_bf16_to_fp32": ("triton_poi_fused__to_copy_mul_sigmoid_0", "fp32"),
}


@pytest.mark.parametrize("trace", sorted(RECORDED))
def test_a_compiled_kernel_reads_as_the_dtype_the_capture_read(trace: str) -> None:
    name, dtype = RECORDED[trace]
    prof = load_trace(DATA / f"{trace}.json.gz")
    kernel = prof.kernels.one(kind="pointwise")
    assert (kernel.name, kernel.family, kernel.dtype, kernel.evidence.dtype) == (name, "inductor", dtype, "ir")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no kernel of unknown dtype to warn about
        assert prof.kernels.count(kind="pointwise", dtype=dtype) == 1
    gemms = 2 if "geglu" in trace else 0
    assert [k.dtype for k in prof.kernels.of_kind("gemm")] == [dtype] * gemms  # the GEMMs' names say theirs


@pytest.mark.parametrize("trace", sorted(RECORDED))
def test_without_the_capture_s_key_the_dtype_is_unknown_and_a_question_says_how_to_get_it(
    trace: str, tmp_path: Path
) -> None:
    """The trace as torch wrote it: the name says no dtype, and a dtype taught by name would pin
    it (the same name recompiled for another dtype would pass): the question says to record the
    trace with the plugin, not to teach a glob."""
    name, dtype = RECORDED[trace]
    recorded = json.loads(gzip.decompress((DATA / f"{trace}.json.gz").read_bytes()))
    del recorded["kernelprof"]["triton_ir"]
    path = tmp_path / "bare.json"
    path.write_text(json.dumps(recorded))
    prof = load_trace(path)
    assert prof.kernels.one(kind="pointwise").dtype is None
    with pytest.warns(UndecodedKernelWarning) as warned:
        prof.kernels.count(kind="pointwise", dtype=dtype)
    text = str(warned[0].message)
    assert f"{name.removesuffix('_0')}_[0-9]*: dtype=..." not in text
    assert "save the trace it takes (kernelprof.captures[i].export_trace(path), --kernelprof-trace-dir)" in text


def test_a_compiled_cast_has_the_dtype_of_the_eager_cast() -> None:
    """A bf16 -> fp32 cast is fp32 compiled (Inductor, H100) as eager (ATen's ``.float()`` kernel,
    H200), and fp32 -> bf16 is bf16 eager: a ``kind="pointwise", dtype="fp32"`` rule flags both."""
    compiled = load_trace(DATA / "h100_inductor_bf16_to_fp32.json.gz").kernels.one(kind="pointwise")
    eager = load_trace(DATA / "h200_bf16_mlp_fp32_linear.json.gz").kernels.of_kind("pointwise")
    to_fp32 = [k for k in eager if "direct_copy_kernel_cuda" in k.name]  # reads bf16
    to_bf16 = [k for k in eager if "bfloat16_copy_kernel_cuda" in k.name]  # reads fp32
    assert len(to_fp32) == len(to_bf16) >= 1
    assert {k.dtype for k in to_fp32} == {compiled.dtype} == {"fp32"}
    assert {k.dtype for k in to_bf16} == {"bf16"}
