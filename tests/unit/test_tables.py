"""Kernel names shortened for tables keep the kernel's own name and its functor (issue 21)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_kernelprof import load_trace
from pytest_kernelprof.tables import (
    _MARK,
    CELL_WIDTH,
    _collapsed,
    _depths_balance,
    _shown_length,
    display_name,
    render_table,
)
from tests.helpers import DATA, Stream, build

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


def _reference_collapsed(text: str, width: int) -> str:
    """The collapse as the first version did it: one pass over the name per list (quadratic),
    which the heap must match list for list."""

    def collapse_longest(text: str) -> str | None:
        opened: list[list[int]] = []
        best: tuple[int, int, int, int] | None = None
        for index, char in enumerate(text):
            if char == "<":
                opened.append([index, 0])
            elif char == ">":
                start, holds_long = opened.pop()
                long = index - start - 1 > 3
                candidate = (len(opened), index - start, start, index)
                if long and not holds_long and (best is None or candidate[:2] > best[:2]):
                    best = candidate
                if long and opened:
                    opened[-1][1] = 1
        return None if best is None else text[: best[2]] + "<...>" + text[best[3] + 1 :]

    while _shown_length(text) > width and (collapsed := collapse_longest(text)) is not None:
        text = collapsed
    return text


def _nested(parts: list[str], close: bool) -> str:
    """``parts`` (words, ``<`` and ``>``) without the ``>`` that close nothing; with ``close``,
    the lists left open closed. (Open lists are left where a parameter list inside template
    arguments runs to the end of the name, as ``kernel_wrapper<unsigned int, &(void f<...>(...)``.)"""
    depth, out = 0, []
    for part in parts:
        if part == ">" and not depth:
            continue
        depth += (part == "<") - (part == ">")
        out.append(part)
    return "".join(out) + ">" * depth * close


@settings(max_examples=500, deadline=None)
@given(
    parts=st.lists(st.sampled_from(["<", ">", "<", ">", "a", "bb", "ccccc", ", ", "::", _MARK, "(x)"]), max_size=60),
    width=st.integers(0, 40),
    close=st.booleans(),
)
def test_the_heap_collapses_the_lists_the_first_version_did(parts: list[str], width: int, close: bool) -> None:
    text = _nested(parts, close)
    assert _collapsed(text, width) == _reference_collapsed(text, width)


def test_the_names_corpus_is_shown_as_the_first_version_showed_it() -> None:
    names = [line.split("\t", 1)[0] for line in (DATA / "names_corpus.tsv").read_text(encoding="utf-8").splitlines()]
    balanced = [name for name in names if _depths_balance(name)]
    assert len(balanced) > 500
    for name in balanced:
        for width in (20, 50, 96):
            assert _collapsed(name, width) == _reference_collapsed(name, width), (name, width)


@pytest.mark.parametrize(
    "name",
    [
        "f" + "<a" * 20_000 + ">" * 20_000,  # deep: every list holds the next
        "f<" + ",".join("abcd<efgh>" for _ in range(4_000)) + ">",  # wide: thousands of lists side by side
    ],
    ids=["deep", "wide"],
)
def test_a_crafted_name_of_tens_of_kilobytes_is_shown_at_once(name: str) -> None:
    # A trace's name is anyone's text: these took 20 s and more (a pass over the name per list).
    started = time.perf_counter()
    shown = display_name(name)
    assert time.perf_counter() - started < 2.0  # linear: 0.1 s; quadratic, as it was: 20 s and more
    assert len(shown) <= 96


def test_one_long_cell_does_not_widen_every_row() -> None:
    # A column is padded to its widest cell: an op named with 100 KB in a trace made each of the
    # kernel table's rows 100 KB wide (a 1 MB trace printed 200 MB).
    s = Stream()
    s.step(0, 0, 10_000)
    s.launch(s.op("my_ext::" + "x" * 100_000 + "::end", 1, 10), "k_long_op", 2)
    for i in range(200):
        s.launch(s.op("aten::mul", 100 + i * 20, 10), f"k{i}", 101 + i * 20)
    table = build(s).kernels.table()
    lines = table.splitlines()
    assert len(lines) == 202
    assert max(map(len, lines)) < CELL_WIDTH + 200
    assert "my_ext::xxx" in lines[1]
    assert "xxx::end" in lines[1]
    assert render_table(("a", "b"), [("y" * 1000, "z")]) == "a" + " " * (CELL_WIDTH + 1) + "b\n" + (
        "y" * 168 + "..." + "y" * 85 + "  z"
    )
