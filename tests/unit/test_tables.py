"""Kernel names shortened for tables keep the kernel's own name and its functor (issue 21)."""

from __future__ import annotations

import pytest

from pytest_kernelprof.tables import display_name

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


@pytest.mark.parametrize(
    ("name", "width", "shown"),
    [
        (
            MULTI_TENSOR,
            100,
            "multi_tensor_apply_kernel<TensorListMetadata<2>, BinaryOpListAlphaFunctor<...>, plus<float>, float>",
        ),
        (MULTI_TENSOR, 96, "multi_tensor_apply_kernel<...>"),
        (SIN, 96, "at::native::vectorized_elementwise_kernel<4, sin_kernel_cuda(...), array<char*, 2ul> >"),
        # what fits is left whole, an anonymous namespace included
        (f"void {ANONYMOUS}softmax_warp_forward<float, 7>(float*)", 96, f"{ANONYMOUS}softmax_warp_forward<float, 7>"),
        ("triton_poi_fused_" + "x" * 100, 20, "triton_poi_...xxxxxx"),
    ],
)
def test_long_names_lose_namespaces_and_inner_arguments_first(name: str, width: int, shown: str) -> None:
    assert display_name(name, width) == shown
    assert len(display_name(name, width)) <= width


def test_unbalanced_brackets_lose_their_middle() -> None:
    assert display_name("k<" + "a" * 200, 30) == "k<aaaaaaaaaaaaaaaa...aaaaaaaaa"
