"""Kernel names as every output shows them: one rule (docs/decoding.md, "How names are shown"),
the kernel's qualified name kept whole and its functor kept longest; a shown name matches its kernel."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_kernelprof import load_trace
from pytest_kernelprof.tables import (
    CELL_WIDTH,
    LONGEST_NAME,
    NAME_WIDTH,
    display_name,
    format_share,
    name_is,
    name_matches,
    plural,
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


BF16_MUL = (
    "void at::native::vectorized_elementwise_kernel<8, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
    "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, "
    "at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
    "at::native::binary_internal::MulFunctor<float> >, "
    "std::array<char*, 3ul>)"
)
SPLIT_K = (
    "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, false, float, "
    "__nv_bfloat16, __nv_bfloat16, true, false, false, false>(cublasLt::cublasSplitKParams<float>, float const*)"
)
COPY = (
    "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::"
    "{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>, 4, "
    "TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, "
    "at::native::memory::LoadWithCast<1>, "
    "at::native::memory::StoreWithCast<1> >(int, std::array<char*, 2ul>)"
)
SUM = (
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, "
    "at::native::func_wrapper_t<c10::BFloat16, "
    "at::native::sum_functor<c10::BFloat16, float, "
    "c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
    "unsigned int, c10::BFloat16, 4, 8> >(at::native::ReduceOp<c10::BFloat16, float>)"
)
CUDNN = (
    "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize64x64x64_warpgroupsize1x1x1_g1_"
    "execute_segment_k_off_kernel__5x_cudnn"
)


@pytest.mark.parametrize(
    ("name", "width", "shown"),
    [
        # what fits stays whole: the return type and the parameter list go, and the namespaces
        # inside the template arguments
        (ADD, NAME_WIDTH, "at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, array<char*, 3ul> >"),
        (SIN, NAME_WIDTH, "at::native::vectorized_elementwise_kernel<4, sin_kernel_cuda(...), array<char*, 2ul> >"),
        (
            MUL,
            NAME_WIDTH,
            "at::native::vectorized_elementwise_kernel<4, AUnaryFunctor<float, float, float, MulFunctor<float> >, "
            "array<char*, 2ul> >",
        ),
        (
            f"void {ANONYMOUS}softmax_warp_forward<float, 7>(float*)",
            NAME_WIDTH,
            f"{ANONYMOUS}softmax_warp_forward<float, 7>",
        ),
        # nsys writes the anonymous namespace <unnamed>: a namespace, not template arguments
        (
            "void at::native::<unnamed>::max_pool_forward_nchw<float, float>(int, const T1 *)",
            NAME_WIDTH,
            "at::native::<unnamed>::max_pool_forward_nchw<float, float>",
        ),
        # a ">" inside parentheses is a comparison, not the end of the template arguments
        (
            "std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type "
            "vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long)",
            NAME_WIDTH,
            "vllm::fused_add_rms_norm_kernel<BFloat16, 8>",
        ),
        # too wide: innermost first, the last of a list first; the functor (the first argument
        # that names something) after every other: what tells ATen's mul from its add stays
        (
            BF16_MUL,
            NAME_WIDTH,
            "at::native::vectorized_elementwise_kernel<8, BinaryFunctor<BFloat16, BFloat16, ..., "
            "MulFunctor<...> >, array<..., 3ul> >",
        ),
        (MUL, 96, "at::native::vectorized_elementwise_kernel<4, AUnaryFunctor<..., MulFunctor<...> >, array<...> >"),
        (MUL, 80, "at::native::vectorized_elementwise_kernel<4, AUnaryFunctor<...>, ...>"),
        (ADD, 80, "at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<...>, array<...> >"),
        (
            COPY,
            NAME_WIDTH,
            "at::native::unrolled_elementwise_kernel<direct_copy_kernel_cuda(...), array<...>, 4, "
            "TrivialOffsetCalculator<...>, ...>",
        ),
        # a lambda in a functor's call operator is the functor
        (
            SUM,
            NAME_WIDTH,
            "at::native::reduce_kernel<512, 1, ReduceOp<BFloat16, func_wrapper_t<..., "
            "sum_functor<...> >, unsigned int, ..., 4, 8> >",
        ),
        # a list of plain arguments keeps its first ones, not "<...>"
        (
            SPLIT_K,
            NAME_WIDTH,
            "cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, "
            "false, float, __nv_bfloat16, ...>",
        ),
        (
            GEMV,
            NAME_WIDTH,
            "internal::gemvx::kernel<int, int, ..., 7, ..., cublasGemvParamsEx<int, "
            "cublasGemvTensorStridedBatched<...>, ...> >",
        ),
        (
            MULTI_TENSOR,
            NAME_WIDTH,
            f"{ANONYMOUS}multi_tensor_apply_kernel<TensorListMetadata<2>, BinaryOpListAlphaFunctor<...>, ...>",
        ),
        # the qualified name is never shortened: narrower than it, only its arguments go
        (MULTI_TENSOR, 50, f"{ANONYMOUS}multi_tensor_apply_kernel<...>"),
        (CUDNN, NAME_WIDTH, CUDNN),
        ("triton_poi_fused_" + "x" * 100, 20, "triton_poi_fused_" + "x" * 100),
    ],
)
def test_names_keep_their_qualified_name_and_lose_template_arguments_first(name: str, width: int, shown: str) -> None:
    assert display_name(name, width) == shown
    assert display_name(shown, width) == shown  # shown again, it stays as it is
    assert name_is(name, display_name(name))  # a name copied from any output is its kernel's


def test_names_no_kernel_has_lose_their_middle_and_truncated_ones_stay() -> None:
    hostile = display_name("k" * 1000)
    assert len(hostile) == LONGEST_NAME
    assert hostile.startswith("k" * 100)
    assert "..." in hostile
    truncated = "void internal::region_transform_ABC_val<int, (int)32, (bool)0, internal::TransformParamsAB\u2026"
    assert display_name(truncated) == truncated.removeprefix("void ")
    assert display_name("k<" + "a" * 200) == "k<" + "a" * 200
    # nested too deep or too many arguments to weigh one by one: the arguments go at once
    assert display_name("k" + "<" * 100 + "a" + ">" * 100 + "(int)") == "k<...>"
    assert display_name("k<" + ", ".join(["abcd"] * 1000) + ">") == "k<...>"


def _recorded_names() -> dict[str, set[str]]:
    names = {}
    for path in sorted(DATA.glob("*.json.gz")):
        try:
            names[path.name] = set(load_trace(path, allow_variation=True, check_complete=False).kernels.names)
        except Exception:  # a trace of no GPU activity, or of none this checkout reads
            continue
    return names


def _corpus() -> set[str]:
    corpus = {line.split("\t")[0] for line in (DATA / "names_corpus.tsv").read_text().splitlines()[1:]}
    for zoo in (DATA / "zoo").glob("*_kernels.tsv"):
        corpus |= {line.split("\t")[0] for line in zoo.read_text().splitlines()[1:]}
    return corpus


def test_every_known_name_is_shown_once_and_for_all_and_matches_its_kernel() -> None:
    names = _corpus().union(*_recorded_names().values())
    assert len(names) > 1000
    for name in names:
        shown = display_name(name)
        assert display_name(shown) == shown, name
        assert name_is(name, shown), name
        assert name_matches(name, shown), name
        assert len(shown) <= LONGEST_NAME, name


# Kernels whose names differ only in the lambdas inside them: "a lambda as the function that
# defines it" shows them alike (their dtypes tell them apart in the tables).
_LAMBDAS = re.compile(r"\{lambda\([^()]*\)#\d+\}")


def test_each_kernel_of_a_recorded_trace_has_its_own_shown_name() -> None:
    for trace, names in _recorded_names().items():
        by_shown: dict[str, set[str]] = {}
        for name in names:
            by_shown.setdefault(display_name(name), set()).add(name)
        for shown, same in by_shown.items():
            assert len({_LAMBDAS.sub("{lambda}", name) for name in same}) == 1, (trace, shown, same)


def test_a_trace_shows_each_kernel_under_its_qualified_name(trace: Trace) -> None:
    # Issue 32 item 3: one rule, so no row keeps at::native:: while the next drops it, and the
    # cuBLAS gemv shows what it is rather than its return type.
    shown = {display_name(name) for name in load_trace(trace("decode_eager")).kernels.names}
    assert shown == {
        "internal::gemvx::kernel<int, int, ..., 7, ..., cublasGemvParamsEx<int, "
        "cublasGemvTensorStridedBatched<...>, ...> >",
        "at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, array<char*, 3ul> >",
        "at::native::vectorized_elementwise_kernel<4, tanh_kernel_cuda(...), array<char*, 2ul> >",
        "at::native::vectorized_elementwise_kernel<4, AUnaryFunctor<float, float, float, "
        "MulFunctor<float> >, array<char*, 2ul> >",
        "(anonymous namespace)::softmax_warp_forward<float, float, float, 8, false, false>",
    }


@settings(max_examples=500, deadline=None)
@given(
    parts=st.lists(
        st.sampled_from(
            ["<", ">", "<", ">", "(", ")", "a", "bb", "ccccc", ", ", "::", " ", "<unnamed>", "void ", "{lambda", "}"]
            + ["#1", "...", "::operator()(", "(anonymous namespace)::", "std::"]
        ),
        max_size=40,
    ),
    width=st.integers(0, 60),
)
def test_any_name_is_shown_once_and_for_all(parts: list[str], width: int) -> None:
    # A trace's name is anyone's text: brackets that do not close, or close out of order, too.
    name = "".join(parts)
    shown = display_name(name, width)
    if len(shown) < LONGEST_NAME:  # not cut in the middle, which may cut a bracket's pair off
        assert display_name(shown, width) == shown
    assert name_is(name, display_name(name))


@pytest.mark.parametrize(
    "name",
    [
        "f" + "<a" * 20_000 + ">" * 20_000,  # deep: every list holds the next
        "f<" + ",".join("abcd<efgh>" for _ in range(4_000)) + ">",  # wide: thousands of lists side by side
        "f<" + ",".join("g<h>(x)" for _ in range(6_000)) + ">(int)",  # thousands of calls
        "f<" + ", ".join("abcd<e, f>" for _ in range(300)) + ">",  # under the size where all go at once
    ],
    ids=["deep", "wide", "calls", "many"],
)
def test_a_crafted_name_of_tens_of_kilobytes_is_shown_within_the_width(name: str) -> None:
    # A trace's name is anyone's text: such names took 20 s and more when each list cost a pass;
    # that it stays linear is benchmarks/test_bench_growth.py's test_shown_name_growth, measured
    # against a tenth of it (a clock in a unit test breaks on a loaded machine).
    assert len(display_name(name)) <= NAME_WIDTH


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


@pytest.mark.parametrize(
    ("fraction", "shown"),
    [(0.0, "0%"), (1.0, "100%"), (0.38, "38%"), (0.998, ">99%"), (0.9949, "99%"), (0.004, "<1%"), (0.006, "1%")],
)
def test_a_share_that_rounds_to_all_or_none_says_it_is_not(fraction: float, shown: str) -> None:
    # Trial: a call with 2.6us busy in a 1336.4us host span read "idle 100%" while the GPU did work.
    assert format_share(fraction) == shown


def test_plural_writes_a_consonant_y_as_ies() -> None:
    # The one way a count is written: "2 copies" was spelled out by hand in two places.
    assert [plural(n, "copy") for n in (1, 2)] == ["1 copy", "2 copies"]
    assert plural(2, "key") == "2 keys"
    assert plural(0, "call") == "0 calls"
