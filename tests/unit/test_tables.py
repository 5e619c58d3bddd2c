"""Kernel names shortened for tables keep the kernel's own name and its functor (issue 21)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.tables import display_name

Trace = Callable[[str], Path]
ANONYMOUS = "at::native::(anonymous namespace)::"
MULTI_TENSOR = (
    f"void {ANONYMOUS}multi_tensor_apply_kernel<{ANONYMOUS}TensorListMetadata<2>, "
    f"{ANONYMOUS}BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float>"
    f"({ANONYMOUS}TensorListMetadata<2>, {ANONYMOUS}BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float)"
)
SIN = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::sin_kernel_cuda(at::TensorIteratorBase&)"
    "::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, "
    "std::array<char*, 2ul> >(int, at::native::sin_kernel_cuda(at::TensorIteratorBase&)::{lambda()#1}"
    "::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)"
)


GEMV = (
    "std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float, float, float, float, false, true, "
    "false, false, 7, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, "
    "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >("
    "cublasGemvParamsEx<int, "
    "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, "
    "cublasGemvTensorStridedBatched<float>, float>)"
)
MUL = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, "
    "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, at::native::AUnaryFunctor<float, "
    "float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)"
)
ADD = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >"
    "(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)"
)


@pytest.mark.parametrize(
    ("name", "width", "shown"),
    [
        # issue 32 item 3: the kernel's namespaces stay; template arguments go first
        (MULTI_TENSOR, 96, f"{ANONYMOUS}multi_tensor_apply_kernel<...>"),
        (SIN, 96, "at::native::vectorized_elementwise_kernel<4, sin_kernel_cuda(...), array<char*, 2ul> >"),
        (MUL, 96, "at::native::vectorized_elementwise_kernel<4, AUnaryFunctor<...>, array<char*, 2ul> >"),
        (ADD, 96, "at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, array<char*, 3ul> >"),
        # the return type goes: it is not what the kernel is
        (GEMV, 96, "internal::gemvx::kernel<...>"),
        (f"void {ANONYMOUS}softmax_warp_forward<float, 7>(float*)", 96, f"{ANONYMOUS}softmax_warp_forward<float, 7>"),
        # nsys writes the anonymous namespace <unnamed>: a namespace, not template arguments
        (
            "void at::native::<unnamed>::max_pool_forward_nchw<float, float>(int, const T1 *)",
            96,
            "at::native::<unnamed>::max_pool_forward_nchw<float, float>",
        ),
        # a name with no template arguments to drop loses its middle
        ("triton_poi_fused_" + "x" * 100, 20, "triton_poi_...xxxxxx"),
        (MULTI_TENSOR, 50, "at::native::(anonymous namespac...pply_kernel<...>"),
    ],
)
def test_names_keep_their_qualified_name_and_lose_template_arguments_first(name: str, width: int, shown: str) -> None:
    assert display_name(name, width) == shown
    assert len(display_name(name, width)) <= width


def test_unbalanced_brackets_lose_their_middle() -> None:
    assert display_name("k<" + "a" * 200, 30) == "k<aaaaaaaaaaaaaaaa...aaaaaaaaa"


def test_a_trace_shows_each_kernel_under_its_qualified_name(trace: Trace) -> None:
    # Issue 32 item 3: one rule, so no row keeps at::native:: while the next drops it, and the
    # cuBLAS gemv shows what it is rather than its return type.
    shown = {display_name(name) for name in load_trace(trace("decode_eager")).kernels.names}
    assert shown == {
        "internal::gemvx::kernel<...>",
        "at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, array<char*, 3ul> >",
        "at::native::vectorized_elementwise_kernel<4, tanh_kernel_cuda(...), array<char*, 2ul> >",
        "at::native::vectorized_elementwise_kernel<4, AUnaryFunctor<...>, array<char*, 2ul> >",
        "(anonymous namespace)::softmax_warp_forward<float, float, float, 8, false, false>",
    }
