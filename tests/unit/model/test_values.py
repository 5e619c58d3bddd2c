"""Profile values that cannot give a silent wrong answer: KernelList == names, `in`, counts that
remember what they counted, one-line reprs, and runtime calls of a profile that measured nothing."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof import NoDeviceActivityError, load_trace
from pytest_kernelprof.model.explain import explain
from pytest_kernelprof.types import KernelCount, KernelList

Trace = Callable[[str], Path]


@pytest.fixture
def linear(trace: Trace) -> kp.KernelProfile:
    return load_trace(trace("linear_eager"))


def test_a_kernel_list_equals_the_list_of_its_names(linear: kp.KernelProfile) -> None:
    name = linear.kernels[0].name
    assert linear.kernels == [name]
    assert linear.kernels == (name,)
    assert linear.kernels != [name + "x"]
    assert linear.kernels != []
    assert linear.kernels == list(linear.kernels)  # Kernels still compare as Kernels
    with pytest.raises(TypeError, match=r"not of Kernel, str: write prof.kernels == \['name', ...\]"):
        _ = linear.kernels == [name, linear.kernels[0]]
    with pytest.raises(TypeError, match="not of int"):
        _ = linear.kernels == [1]


def test_in_asks_for_an_exact_name(linear: kp.KernelProfile) -> None:
    name = linear.kernels[0].name
    assert name in linear.kernels
    assert name[:-1] not in linear.kernels
    assert linear.kernels[0] in linear.kernels


def test_count_is_an_int_that_remembers_what_it_counted(trace: Trace) -> None:
    kernels = load_trace(trace("geglu_compiled")).kernels
    count = kernels.count("triton_poi_fused_*gelu*mul*")
    assert count == 1
    assert isinstance(count, int)
    assert repr(count) == "1"
    assert count + 1 == 2
    assert type(count + 1) is int
    assert isinstance(count, KernelCount)
    assert count.matched == (2,)
    assert count.kernels is kernels
    assert count.query == "count('triton_poi_fused_*gelu*mul*')"
    assert kernels.count(re.compile("nvjet"), kind="gemm").query == "count(re.compile('nvjet'), kind='gemm')"


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


def test_explanations_give_pytest_lines(trace: Trace) -> None:
    kernels = load_trace(trace("geglu_eager")).kernels
    failed = explain("==", kernels.count("triton_poi_fused_*gelu*mul*"), 1)
    assert failed is not None
    assert failed.head == ["0 == 1", "kernels.count('triton_poi_fused_*gelu*mul*') matched 0 of 5 kernels"]
    assert failed.body == kernels.table().splitlines()
    # pytest's default limits (8 lines, 640 characters): head shown, body to a section.
    shown, section = failed.shown(8, 640)
    assert shown[:2] == failed.head
    assert "'kernelprof assertion' section" in shown[2]
    assert section == [*failed.head[1:], *failed.body]
    assert failed.shown(0, 0) == ([*failed.head, *failed.body], [])  # -vv: no limit
    names = explain("==", kernels, ["nvjet_x", *kernels.names[1:]])
    assert names is not None
    assert names.body[:2] == ["- nvjet_x", "+ " + kernels.names[0]]
    gemm = explain("==", kernels.count(kind="gemm"), 2)
    assert gemm is not None
    assert gemm.head[1] == "kernels.count(kind='gemm') matched 3 of 5 kernels: #0, #2, #4"
    assert [line[:2] for line in gemm.body[1:]] == ["*0", " 1", "*2", " 3", "*4"]
    assert explain("==", 3, 1) is None


def test_runtime_of_a_profile_that_measured_nothing_raises() -> None:
    if torch.cuda.is_available():
        pytest.skip("pins the CPU-only behaviour")
    prof = kp.profile(torch.relu, torch.randn(4))
    runtime = prof.runtime
    assert not runtime.measured
    for read in (
        lambda: runtime["cudaLaunchKernel"],
        lambda: "cudaStreamSynchronize" in runtime,
        lambda: len(runtime),
        lambda: dict(runtime),
        lambda: runtime == {},
        lambda: runtime.get("cudaLaunchKernel", 0),
        lambda: list(prof.calls[1].runtime.items()),
    ):
        with pytest.raises(NoDeviceActivityError, match="CUDA is not available"):
            read()
    # prof.kernels itself is the list, so that .measured can be asked; reading it raises.
    assert isinstance(prof.kernels, KernelList)
    assert not prof.kernels.measured
    with pytest.raises(NoDeviceActivityError):
        prof.kernels.names  # noqa: B018


def test_runtime_of_a_gpu_trace_reads(linear: kp.KernelProfile) -> None:
    assert linear.runtime.measured
    assert linear.runtime["cuLaunchKernelEx"] == 1
    assert "cudaStreamSynchronize" not in linear.runtime
    assert dict(linear.runtime) == dict(linear.calls[2].runtime)
