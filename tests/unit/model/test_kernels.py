"""Queries on KernelList and OpTable, and how their failures read; values that cannot give a silent
wrong answer: KernelList == names, `in`, counts that remember what they counted."""

from __future__ import annotations

import ast
import copy
import dataclasses
import json
import os
import pickle
import re
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

import pytest_kernelprof as kp
from pytest_kernelprof import (
    KernelMatchError,
    NoDeviceActivityError,
    OpNotFoundError,
    QueryError,
    QueryTypeError,
    UndecodedKernelWarning,
    load_trace,
)
from pytest_kernelprof.decode import Evidence, parse_kernel_name
from pytest_kernelprof.model.kernel_matching import nearest_lines, undecided_lines
from pytest_kernelprof.model.kernels import KERNEL_CELLS
from pytest_kernelprof.model.unknowns import describe
from pytest_kernelprof.tables import display_name
from pytest_kernelprof.types import Kernel, KernelCount, KernelList
from tests.helpers import DATA

# What a failed query on a recorded profile of three calls says of its table's times.
MEDIANS = " (times: each kernel's median over the 3 calls)"


Trace = Callable[[str], Path]


@pytest.fixture
def geglu(trace: Trace) -> KernelList:
    return load_trace(trace("geglu_eager")).kernels


def test_glob_regex_and_kind_queries(geglu: KernelList) -> None:
    assert len(geglu.matching("nvjet_*")) == 3
    assert len(geglu.matching(re.compile(r"Gelu"))) == 1
    assert geglu.count("*elementwise_kernel*") == 2
    assert geglu.count(kind="pointwise") == 2
    assert geglu.count("nvjet_*", kind="pointwise") == 0
    assert geglu.count() == len(geglu) == 5
    assert geglu.of_kind("gemm").names == geglu.matching("nvjet_*").names
    assert geglu.total_us == pytest.approx(sum(k.duration_us for k in geglu))


def test_glob_matches_the_whole_name(geglu: KernelList) -> None:
    assert geglu.count("nvjet") == 0
    assert geglu.count("*nvjet*") == 3


def test_slices_are_kernel_lists_and_compare_with_lists(geglu: KernelList) -> None:
    head = geglu[:2]
    assert isinstance(head, KernelList)
    assert head == list(geglu)[:2]
    assert isinstance(geglu[0], Kernel)


def test_one_returns_the_single_match(geglu: KernelList) -> None:
    assert geglu.one("*Gelu*").fused_ops == ("gelu",)


def test_one_failure_shows_the_table_and_nearest_names(geglu: KernelList) -> None:
    with pytest.raises(AssertionError) as info:
        geglu.one(kind="gemm")
    message = str(info.value)
    assert "expected exactly one kernel with kind='gemm', matched 3 of 5" in message
    assert "launched by" in message  # the table
    assert "aten::mm" in message

    with pytest.raises(AssertionError) as info:
        geglu.one("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNN")
    assert "nearest names: 'nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT'" in str(info.value)


def test_typos_in_kind_and_pattern_type_are_errors(geglu: KernelList) -> None:
    with pytest.raises(ValueError, match=r"unknown kernel kind 'gemms' \(did you mean 'gemm'\?\); the kinds are: gemm"):
        geglu.of_kind("gemms")
    with pytest.raises(TypeError, match="glob string or a compiled re.Pattern"):
        geglu.count(3)  # type: ignore[arg-type]
    # A trial copied a table's cell, evidence and all: what the parenthesis is, and what to write.
    with pytest.raises(ValueError, match=r"'reduction \(ir\)' is kind 'reduction', .* write kind='reduction'$"):
        geglu.count(kind="reduction (ir)")
    with pytest.raises(ValueError, match="unknown kernel kind 'gemms \\(op\\)'; the kinds are"):
        geglu.count(kind="gemms (op)")  # no kind in the parenthesis's way: the list of kinds


# A word users reach for, a recorded trace, and the op that launched the kernels it means there:
# the hint must name the kind this decoder gives them (a trial's `count(kind="matmul")` got no hint).
KIND_WORDS = [
    ("matmul", "h200_matmul_add_eager", "aten::mm"),
    ("bmm", "h200_sdpa_math", "aten::bmm"),
    ("softmax", "h200_sdpa_math", "aten::_softmax"),
    ("layer_norm", "h100_liger_layer_norm", "LigerLayerNormFunction"),
    ("RMSNorm", "h100_liger_rms_norm", "LigerRMSNormFunction"),
    ("sdpa", "h200_sdpa_default", "aten::_cudnn_attention_forward"),
    ("conv2d", "h200_resnet50_forward_cl_modules", "aten::cudnn_convolution"),  # and helpers, and GEMMs: told
]


@pytest.mark.parametrize(("word", "name", "op"), KIND_WORDS, ids=[w for w, _, _ in KIND_WORDS])
def test_a_word_for_kernels_is_told_their_kind(word: str, name: str, op: str) -> None:
    kernels = load_trace(DATA / f"{name}.json.gz").kernels
    with pytest.raises(
        ValueError, match=rf"^unknown kernel kind '{word}' \(did you mean '\w+'\? {word} kernels"
    ) as info:
        kernels.count(kind=word)
    hint = str(info.value).split("(did you mean ", 1)[1].split("; the kinds are:")[0]
    # Every kind the hint names (each word it quotes) is one the decoder gave the kernels of the
    # op the word stands for.
    told = re.findall(r"'(\w+)'", hint)
    assert told
    assert set(told) <= {k.kind for k in kernels if k.op == op}, hint


@pytest.mark.parametrize(
    ("kind", "hint"), [("atention", " (did you mean 'attention'?)"), ("GEMM", " (did you mean 'gemm'?)"), ("foo", "")]
)
def test_a_misspelt_kind_is_told_the_nearest_and_a_word_far_from_all_none(
    geglu: KernelList, kind: str, hint: str
) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(f'unknown kernel kind {kind!r}{hint}; the kinds are: gemm, ')}"):
        geglu.count(kind=kind)


def test_of_kind_none_and_a_kind_of_another_type_are_errors_not_empty_lists(geglu: KernelList) -> None:
    with pytest.raises(TypeError, match=r"^of_kind takes a kind, one of gemm, .*; got None$"):
        geglu.of_kind(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^a kernel kind is a str, one of gemm, .*; got int$"):
        geglu.count(kind=3)  # type: ignore[arg-type]


def test_missing_op_lists_near_names(trace: Trace) -> None:
    ops = load_trace(trace("linear_eager")).ops
    with pytest.raises(OpNotFoundError, match=r"op 'aten::addm' did not run .*nearest: aten::addmm"):
        ops["aten::addm"]
    with pytest.raises(KeyError):
        ops["aten::add"]
    assert "aten::addmm" in ops
    assert "aten::add" not in ops


def test_tables_are_tables_and_reprs_one_line(trace: Trace) -> None:
    prof = load_trace(trace("geglu_compiled"))
    text = prof.table()
    assert text.splitlines()[0].startswith("KernelProfile from ")
    assert text.splitlines()[0].endswith("NVIDIA H200 (sm90): 3 calls (each kernel's time its median over them)")
    assert "triton_poi_fused__unsafe_view_gelu_mul_0" in text
    assert "memory ops per call: Memset (Device) x2" in text.splitlines()
    assert "aten::mm" in prof.ops.table()
    # One line each: pytest prints reprs in an assertion's "where" lines, a newline as "\n".
    # The trace named as the failure's section names it: relative to the working folder where under it.
    path = str(trace("geglu_compiled"))
    shown = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
    assert repr(prof) == f"KernelProfile({shown!r} on NVIDIA H200 (sm90): 4 kernels per call, 3 calls)"
    assert text.splitlines()[0].startswith(f"KernelProfile from {path} on ")
    assert repr(prof.kernels) == "KernelList(4 kernels)"
    assert repr(prof.ops).startswith("OpTable(")
    assert repr(prof.calls[1]) == "CallProfile(call 1: KernelList(4 kernels))"
    assert repr(prof.kernels[0]).startswith("Kernel(gemm/nvjet bf16 tn ")  # a trial: the dtype was left out


def test_long_cpp_names_are_shortened_in_tables(geglu: KernelList) -> None:
    longest = max(len(line) for line in geglu.table().splitlines())
    assert longest < 200
    assert max(len(k.name) for k in geglu) > 200  # the names themselves stay whole


def test_measured_says_whether_gpu_work_was_recorded(trace: Trace) -> None:

    prof = load_trace(trace("linear_eager"))
    assert prof.kernels.measured
    prof.require_device_activity()
    nothing = KernelList([], unavailable="nothing was recorded")
    assert not nothing.measured
    with pytest.raises(NoDeviceActivityError, match="nothing was recorded"):
        nothing.require_measured()
    assert nothing.table() == "(unmeasured: no GPU activity recorded)"  # a display: never "(no kernels)"
    assert KernelList([]).table() == "(no kernels)"


@pytest.mark.parametrize("name", ["geglu_eager", "decode_eager", "train_compiled"])
def test_names_copied_from_a_table_match_their_kernels(trace: Trace, name: str) -> None:
    # Issue 21 item 3: tables drop "void " and shorten names; a shown name pasted into a query matches.
    # Issue 32 item 3: one rule, so the repr and the "nearest names" line show the table's name.
    prof = load_trace(trace(name))
    for line in prof.kernels.table().splitlines()[1:]:
        shown = line.split("  ")[-1].strip()
        assert prof.kernels.count(shown) >= 1, shown
        assert any(repr(shown) in repr(k) for k in prof.kernels), shown
    for kernel in prof.kernels:
        (line,) = nearest_lines(prof.kernels, kernel.name[:-3] + "x")
        assert display_name(kernel.name) in line


def test_a_shown_name_with_brackets_matches_its_kernel_though_a_glob_reads_them() -> None:
    kernel = Kernel(name="void scan<float[4], (int)2>(float*)", kind="other", family="other")
    assert KernelList([kernel]).count("scan<float[4], (int)2>") == 1


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


def _compiled_mlp() -> KernelList:
    """A max-autotune MLP's kernels, made by hand: two GEMM templates, a pointwise kernel, and a
    user's Triton kernel that no evidence placed."""
    return KernelList(
        [
            Kernel(name="triton_tem_fused_addmm_gelu_t_0", kind="gemm", family="inductor", template=True),
            Kernel(name="triton_poi_fused_mul_1", kind="pointwise", family="inductor"),
            Kernel(name="triton_tem_fused_mm_2", kind="gemm", family="inductor", template=True),
            Kernel(name="my_kernel", kind="other", family="triton"),
        ]
    )


def test_a_template_is_counted_by_what_it_computes_and_as_a_template() -> None:
    kernels = _compiled_mlp()
    with pytest.warns(UndecodedKernelWarning):  # my_kernel could be a GEMM
        assert kernels.count(kind="gemm") == 2
    # kind="template" asks for the template fact; a name always says it, so nothing is undecided.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert kernels.count(kind="template") == 2
        assert kernels.of_kind("template").names == ["triton_tem_fused_addmm_gelu_t_0", "triton_tem_fused_mm_2"]
        assert kernels.count("*mm_2", kind="template") == 1
        assert kernels.one("*addmm*", kind="template").kind == "gemm"


def test_the_kernels_that_could_answer_a_query_are_named_on_a_line_that_stays_short() -> None:
    kernels = KernelList([Kernel(name=f"my_kernel_{i}", kind="other", family="triton") for i in range(3_000)])
    (line,) = undecided_lines(kernels, None, "gemm")
    # Before: every index, a line of some 20,000 characters.
    named = ", ".join(f"#{i}" for i in range(20))
    assert line == f"3000 kernels of unknown kind ({named}, ... and 2980 more) could be it: teach the decoder"
    (few,) = undecided_lines(KernelList(list(kernels)[:20]), None, "gemm")
    assert few == f"20 kernels of unknown kind ({named}) could be it: teach the decoder"


def test_tables_and_reprs_say_a_kernel_came_from_a_template() -> None:
    kernels = _compiled_mlp()
    rows = kernels.table().splitlines()
    assert "inductor template" in rows[1]
    assert "inductor template" not in rows[2]
    assert repr(kernels[0]) == "Kernel(gemm/inductor template 0.0us 'triton_tem_fused_addmm_gelu_t_0')"
    assert repr(kernels[1]) == "Kernel(pointwise/inductor 0.0us 'triton_poi_fused_mul_1')"


def test_the_table_shows_each_kernels_dtype_and_the_work_a_helper_is_part_of(trace: Trace) -> None:
    # Issue 32 item 5: the bf16 MLP with its middle layer in fp32; which GEMM runs in fp32 is in the table.
    table = load_trace(trace("bf16_mlp_fp32_linear")).kernels.table().splitlines()
    assert table[-1] == "(op): from the op that launched it"  # the fp32 GEMM's bias: its addmm's
    rows = [row.split() for row in table[:-1]]
    assert rows[0][:6] == ["#", "kind", "part", "of", "family", "dtype"]
    assert [row[4] for row in rows[1:]] == ["bf16", "bf16", "fp32", "fp32", "fp32", "bf16", "bf16"]
    assert rows[4][:5] == ["3", "gemm", "-", "cutlass", "fp32"]
    assert rows[5][:5] == ["4", "reduction", "gemm", "cublas", "fp32"]  # cuBLAS's split-K reduce
    # No helper, no "part of" column; an unknown dtype is "?".
    kernels = KernelList([Kernel(name="k", kind="pointwise", family="aten")])
    assert kernels.table().splitlines() == [
        "#  kind       family  dtype  layout  fused ops   us  launched by  name",
        "0  pointwise  aten    ?      -       -          0.0  -            k",
    ]


def test_a_helper_kernel_says_what_it_is_part_of_on_one_line_as_in_the_table(trace: Trace) -> None:
    # A trial read scal_kernel as "part of gemm" in the table and as a plain pointwise kernel
    # elsewhere: every one-line description says it in the table's words (model.kernel_text.kind_text).
    helper = next(k for k in load_trace(trace("compile_clean")).kernels if "scal_kernel" in k.name)
    assert repr(helper).startswith("Kernel(pointwise/cublas (part of gemm) fp32 ")
    # An undecided dtype's line (what the decoder knows of the kernel, and what not) too.
    undecided = dataclasses.replace(parse_kernel_name("scal_kernel<float>"), dtype=None)
    assert describe([undecided]) == ["  scal_kernel<float>  (pointwise/cublas (part of gemm), dtype unknown)"]


def test_the_fused_ops_column_is_named_for_the_attribute_it_shows() -> None:
    # Trial report: the column headed "ops" showed Kernel.fused_ops ("gelu"), and a user wrote
    # `assert k.ops == ("gelu",)`, which is the launch chain (("aten::gelu",)): the header says
    # whose words its cells are.
    kernel = Kernel(name="k", kind="pointwise", family="inductor", fused_ops=("_unsafe_view", "gelu"))
    header, row = KernelList([kernel]).table().splitlines()
    assert "  fused ops  " in header
    assert "  ops  " not in header
    assert row[header.index("fused ops") :].startswith("_unsafe_view,gelu ")
    assert KERNEL_CELLS[-1] == "fused ops"


def test_the_time_column_says_whether_it_holds_medians_or_one_calls_times(trace: Trace) -> None:
    # Issue 32: kernel #1 was 59.2 in prof.table() (its median over the calls) and 60.1 in
    # `kernelprof show` (the median call's own), both under "us": the header says which.
    prof = load_trace(trace("geglu_compiled"))
    medians, own = prof.kernels.table().splitlines(), prof.calls[1].kernels.table().splitlines()
    assert medians[0].split()[7:9] == ["median", "us"]  # after "fused ops", two words in the header
    assert medians[2].split()[6] == "59.2"
    assert own[0].split()[7:9] == ["us", "launched"]
    assert own[2].split()[6] == "60.1"
    # A selection keeps its list's times, and so its header.
    assert prof.kernels.of_kind("gemm").table().splitlines()[0].split()[7:9] == ["median", "us"]


def test_dtype_questions_count_and_explain_themselves(trace: Trace) -> None:
    from pytest_kernelprof.model.explain import explain

    kernels = load_trace(trace("bf16_mlp_fp32_linear")).kernels
    fp32 = kernels.count(kind="gemm", dtype="fp32")
    assert fp32 == 1
    assert fp32.query == "count(kind='gemm', dtype='fp32')"
    assert kernels.count(kind="gemm", dtype="bf16") == 2
    assert kernels.count(dtype="fp32") == 3
    assert kernels.one(kind="gemm", dtype="fp32").family == "cutlass"
    explanation = explain("==", fp32, 0)
    assert explanation is not None
    assert explanation.head[1] == f"kernels.count(kind='gemm', dtype='fp32') matched 1 of 7 kernels: #3{MEDIANS}"
    assert "dtype" in explanation.body[0]
    with pytest.raises(AssertionError, match=r"exactly one kernel with kind='gemm' and dtype='bf16', matched 2 of 7"):
        kernels.one(kind="gemm", dtype="bf16")
    with pytest.raises(ValueError, match=r"unknown dtype 'torch.float32' \(did you mean 'fp32'\?\); the dtypes are"):
        kernels.count(dtype="torch.float32")


def test_one_names_the_kernels_it_found_as_count_does(trace: Trace) -> None:
    # A trial: count() said "matched 2 of 7 kernels: #0, #6", one() only "found 2 of 7" over a starred table.
    from pytest_kernelprof.model.explain import explain

    kernels = load_trace(trace("bf16_mlp_fp32_linear")).kernels
    explanation = explain("==", kernels.count(kind="gemm", dtype="bf16"), 1)
    assert explanation is not None
    assert explanation.head[1] == f"kernels.count(kind='gemm', dtype='bf16') matched 2 of 7 kernels: #0, #6{MEDIANS}"
    with pytest.raises(KernelMatchError) as raised:
        kernels.one(kind="gemm", dtype="bf16")
    head = "expected exactly one kernel with kind='gemm' and dtype='bf16', matched 2 of 7 kernels: #0, #6"
    assert str(raised.value).splitlines()[0] == f"{head}{MEDIANS}:"
    with pytest.raises(KernelMatchError) as raised:
        kernels.one("nothing*")
    head = "expected exactly one kernel with name matching 'nothing*', matched 0 of 7 kernels"
    assert str(raised.value).splitlines()[0] == f"{head}{MEDIANS}:"


def test_a_dtype_question_warns_about_the_kernels_of_unknown_dtype() -> None:
    kernels = KernelList(
        [
            Kernel(name="nvjet_bf16", kind="gemm", family="nvjet", dtype="bf16"),
            Kernel(name="my_gemm", kind="gemm", family="aten"),  # a GEMM, of no known dtype
            Kernel(name="relu", kind="pointwise", family="aten"),  # no dtype either, but no GEMM
        ]
    )
    with pytest.warns(UndecodedKernelWarning, match=r"count\(kind='gemm', dtype='bf16'\) may not hold: 1 kernel"):
        assert kernels.count(kind="gemm", dtype="bf16") == 1
    told = r"of known kind but unknown dtype could change it:\n  my_gemm  \(gemm/aten, dtype unknown\)"
    with pytest.warns(UndecodedKernelWarning, match=told):
        kernels.count(kind="gemm", dtype="fp32")
    with pytest.warns(UndecodedKernelWarning), pytest.raises(AssertionError) as failed:
        kernels.one(kind="gemm", dtype="fp32")
    assert "1 kernel of unknown dtype (#1) could be it: teach the decoder" in str(failed.value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert kernels.count(kind="gemm") == 2  # no dtype asked: no dtype unknown
        assert kernels.count("nvjet*", dtype="bf16") == 1  # the pattern rules my_gemm out


# Trial report (A): the name a failure printed, pasted back, did not match its kernel, and the
# failure offered as "nearest" the very string that had been written.
@pytest.mark.parametrize("name", ["geglu_eager", "decode_eager", "decode_graphs", "train_compiled"])
def test_every_name_query_takes_a_name_as_the_outputs_show_it(trace: Trace, name: str) -> None:
    kernels = load_trace(trace(name)).kernels
    for kernel in kernels:
        shown = display_name(kernel.name)
        assert shown in kernels, shown
        assert kernel.name.removeprefix("void ") in kernels
        assert kernels.count(shown) == sum(display_name(k.name) == shown for k in kernels) >= 1
        assert kernel in kernels.matching(shown)
        if kernels.count(shown) == 1:
            assert kernels.one(shown) == kernel
    assert kernels == [display_name(k.name) for k in kernels]  # a list copied from a diff or a table
    assert kernels == [k.name.removeprefix("void ") for k in kernels]
    assert kernels != [display_name(k.name) for k in kernels][:-1]


def test_the_name_a_failure_prints_is_in_the_kernels(trace: Trace) -> None:
    kernels = load_trace(trace("geglu_eager")).kernels
    shown = (
        "at::native::vectorized_elementwise_kernel<8, BinaryFunctor<BFloat16, BFloat16, ..., MulFunctor<...> >, "
        "array<..., 3ul> >"
    )
    assert shown in kernels
    assert shown + " " not in kernels  # `in` asks for a name, not a pattern: a near one is not it
    assert "at::native::vectorized_elementwise_kernel<8, BinaryFunctor<...>, array<char*, 3ul> >" not in kernels


# Trust (issue 34): `in` asked for an exact name, so `assert "triton_*" not in prof.kernels`
# passed on the very Triton kernels it was written to forbid.
def test_in_never_reads_a_pattern_as_a_name(trace: Trace) -> None:
    kernels = load_trace(trace("geglu_compiled")).kernels
    expected = (
        r"^'triton_\*' is no kernel's name, but as a glob it matches 1 kernel name "
        r"\(triton_poi_fused__unsafe_view_gelu_mul_0\): `in` asks for a whole name, and never reads a pattern "
        r"as one\. For the pattern, write prof\.kernels\.count\('triton_\*'\) > 0 \(or == 0 for none\)$"
    )
    with pytest.raises(QueryError, match=expected):
        assert "triton_*" not in kernels
    with pytest.raises(QueryError, match=r"matches 2 kernel names \(nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT, "):
        assert "nvjet_*" in kernels  # three kernels, one name twice
    with pytest.raises(QueryTypeError, match=r"prof\.kernels\.count\(re\.compile\('triton_'\)\) > 0"):
        assert re.compile("triton_") not in kernels  # type: ignore[operator]
    assert "cutlass_*" not in kernels  # a glob that matches no kernel: as a name, no kernel has it either
    assert "triton_poi_fused__unsafe_view_gelu_mul_0" in kernels


def test_a_name_with_glob_characters_in_it_is_still_a_name(trace: Trace) -> None:
    kernels = load_trace(trace("geglu_eager")).kernels
    pointers = [k.name for k in kernels if "*" in k.name]  # std::array<char*, 2ul>
    assert len(pointers) == 2
    for name in pointers:
        assert name in kernels
        assert display_name(name) in kernels
    with pytest.raises(QueryError, match=r"as a glob it matches 2 kernel names"):
        assert "*std::array<char?, *" in kernels


def test_nearest_names_never_offer_what_the_query_matches(trace: Trace) -> None:
    kernels = load_trace(trace("geglu_eager")).kernels
    for kernel in kernels:
        shown = display_name(kernel.name)
        for query in (shown[:-3], shown + "x", kernel.name[:-3] + "x"):
            (line,) = nearest_lines(kernels, query, exact=True)
            offered = ast.literal_eval(f"[{line.removeprefix('nearest names: ')}]")
            assert query not in offered
            assert all(name in kernels for name in offered), offered  # each offer is a name that matches
    # The name matches, another condition ruled the kernel out: that is said, no name offered.
    gelu = display_name(kernels[1].name)
    (line,) = nearest_lines(kernels, gelu)
    assert line == f"{gelu!r} matches #1 by name: its kind or dtype ruled it out"
    with pytest.raises(AssertionError, match=r"matches #1 by name: its kind ruled it out"):
        kernels.one(gelu, kind="gemm")


def test_a_kernel_of_unknown_dtype_is_not_said_to_be_ruled_out(trace: Trace) -> None:
    kernels = load_trace(trace("geglu_compiled")).kernels
    with pytest.warns(UndecodedKernelWarning), pytest.raises(AssertionError) as info:
        kernels.one("triton_poi_fused_*", dtype="bf16")  # #2, of unknown dtype
    last = str(info.value).splitlines()[-1]
    assert last == "1 kernel of unknown dtype (#2) could be it: record the trace with the plugin"  # Inductor's
    with pytest.raises(AssertionError, match=r"'nvjet\*' matches #0, #1, #3 by name: their dtype ruled them out$"):
        kernels.one("nvjet*", dtype="fp32")
    with pytest.raises(AssertionError, match=r"'nvjet\*coopB\*' matches #3 by name: its kind ruled it out$"):
        kernels.one("nvjet*coopB*", kind="pointwise", dtype="bf16")


def test_an_ops_repr_uses_the_documented_names(trace: Trace) -> None:
    # A trial: the repr showed child_names=(...), a field, where the docs name .children.
    op = load_trace(trace("linear_eager")).ops["aten::linear"]
    assert repr(op).startswith("Op('aten::linear', count=1, cpu ")
    assert repr(op).endswith(f", device {op.device_time_us:.1f}us, children=['aten::t', 'aten::addmm'])")
    assert "child_names" not in repr(op)


def test_a_dtype_question_takes_a_torch_dtype_and_hints_torch_names(trace: Trace) -> None:
    import torch

    kernels = load_trace(trace("geglu_compiled")).kernels
    assert kernels.count(kind="gemm", dtype=torch.bfloat16) == 3
    assert kernels.count(kind="gemm", dtype=torch.float32).query == "count(kind='gemm', dtype='fp32')"
    with pytest.raises(AssertionError, match=r"kind='gemm' and dtype='fp32', matched 0"):
        kernels.one(kind="gemm", dtype=torch.float32)
    with pytest.raises(ValueError, match=r"no kernel dtype is torch.int16; the dtypes are"):
        kernels.count(dtype=torch.int16)
    with pytest.raises(TypeError, match=r"or a torch.dtype, got int"):
        kernels.count(dtype=16)  # type: ignore[arg-type]
    for name, meant in [
        ("bfloat16", "bf16"),
        ("torch.bfloat16", "bf16"),
        ("float", "fp32"),
        ("float32", "fp32"),
        ("half", "fp16"),
        ("float16", "fp16"),
        ("double", "fp64"),
        ("torch.float64", "fp64"),
    ]:
        with pytest.raises(ValueError, match=rf"unknown dtype {name!r} \(did you mean {meant!r}\?\)"):
            kernels.count(dtype=name)


def test_names_refuse_a_glob_in_as_the_kernels_do() -> None:
    # An adversarial probe: `"triton_*" not in prof.kernels.names` passed on the Triton kernels
    # it forbids (plain list membership), where `in prof.kernels` refuses the glob.
    from pytest_kernelprof import QueryError, load_trace
    from tests.helpers import DATA

    names = load_trace(DATA / "h200_geglu_compiled.json.gz").kernels.names
    with pytest.raises(QueryError, match=r"prof\.kernels\.count\('triton_\*'\) > 0"):
        assert "triton_*" not in names
    assert names[0] in names
    assert "cutlass_*" not in names  # a glob that matches none is False, as either reading says
    assert "nothing" not in names


def test_a_kernels_dtype_equals_its_torch_dtype_and_is_written_as_the_plain_string(trace: Trace) -> None:
    import torch

    gemms = load_trace(trace("bf16_mlp_fp32_linear")).kernels.of_kind("gemm")
    # A trial: `assert not any(k.dtype == torch.float32 for k in gemms)` passed on the fp32 GEMM.
    assert [k.dtype == torch.float32 for k in gemms] == [False, True, False]
    assert [torch.bfloat16 == k.dtype for k in gemms] == [True, False, True]
    assert [k.dtype != torch.bfloat16 for k in gemms] == [False, True, False]
    dtype = gemms[0].dtype
    assert dtype == "bf16"
    assert dtype != "fp32"
    assert dtype != torch.float16
    assert dtype != 16
    assert dtype in {"bf16"}
    assert hash(dtype) == hash("bf16")
    assert repr(dtype) == "'bf16'"
    # What files and copies hold is the plain string.
    assert json.dumps({"dtype": dtype}) == '{"dtype": "bf16"}'
    for plain in (pickle.loads(pickle.dumps(dtype)), copy.deepcopy(dtype), str(dtype), f"{dtype}"):
        assert type(plain) is str
        assert plain == "bf16"
    made = Kernel(name="k", kind="gemm", family="cublas", dtype="fp32")
    assert type(dataclasses.asdict(made)["dtype"]) is str
    # A kernel however made or copied compares with its torch dtype.
    fp32 = gemms[1]
    copies = (pickle.loads(pickle.dumps(fp32)), copy.deepcopy(fp32), dataclasses.replace(fp32, duration_us=1.0), made)
    assert [k.dtype == torch.float32 for k in copies] == [True] * 4
    assert Kernel(name="k", kind="gemm", family="cublas").dtype is None


def test_a_reduction_query_counts_persistent_reductions_too(trace: Trace) -> None:
    # A trial: the compiled softmax (triton_per_*) counted no reduction where eager counted one.
    eager = load_trace(trace("decode_eager")).kernels
    compiled = load_trace(trace("decode_compiled")).kernels
    assert eager.count(kind="reduction") == compiled.count(kind="reduction") == 1
    assert (eager.count(kind="persistent_reduction"), compiled.count(kind="persistent_reduction")) == (0, 1)
    assert compiled.of_kind("reduction").names == compiled.of_kind("persistent_reduction").names
    assert compiled.one(kind="reduction").kind == "persistent_reduction"


def test_a_taught_dtype_says_so_in_the_table_as_a_taught_kind_does() -> None:
    taught = Kernel(
        name="k", kind="pointwise", family="aten", dtype="bf16", evidence=Evidence(kind="user", dtype="user")
    )
    named = Kernel(
        name="n", kind="pointwise", family="aten", dtype="bf16", evidence=Evidence(kind="name", dtype="name")
    )
    rows = [row.split() for row in KernelList([taught, named]).table().splitlines()[1:]]
    assert rows[0][:6] == ["0", "pointwise", "(user)", "aten", "bf16", "(user)"]
    assert rows[1][:4] == ["1", "pointwise", "aten", "bf16"]


def test_a_family_question_counts_and_explains_itself(trace: Trace) -> None:
    # A trial: "the compiled model launches no eager ATen pointwise kernel" could not be asked
    # (count() took no family=), though kernelprof_forbid's rules take family=aten kind=pointwise.
    from pytest_kernelprof.model.explain import explain

    eager = load_trace(trace("decode_eager")).kernels
    compiled = load_trace(trace("decode_compiled")).kernels
    assert compiled.count(family="aten", kind="pointwise") == 0
    aten = eager.count(family="aten", kind="pointwise")
    assert aten == 36
    assert aten.query == "count(kind='pointwise', family='aten')"
    assert eager.count(family="cublas") == eager.count(kind="gemm") == 12
    assert compiled.matching(family="inductor").names == compiled.matching("triton_*").names
    assert compiled.matching("triton_*", family="cublas") == []
    assert compiled.one("*softmax*", family="inductor").kind == "persistent_reduction"
    # Its failure reads as every count's: the expectation, the matches named and starred.
    explanation = explain("==", aten, 0)
    assert explanation is not None
    assert explanation.head[0] == "36 == 0"
    assert explanation.head[1].startswith(
        "kernels.count(kind='pointwise', family='aten') matched 36 of 49 kernels: #1, #2"
    )
    starred = [row.split()[1] for row in explanation.body if row.lstrip().startswith("*")]
    assert len(starred) == 36
    assert eager.one(kind="reduction", family="aten").fused_ops == ("softmax",)
    with pytest.raises(
        KernelMatchError, match=r"exactly one kernel with kind='pointwise' and family='aten', matched 36"
    ):
        eager.one(kind="pointwise", family="aten")
    # A family no kernel has: the failure says which families the kernels have.
    explanation = explain("==", compiled.count(family="aten"), 1)
    assert explanation is not None
    assert "no kernel's family is 'aten'; the kernels' families: cublas, inductor" in explanation.head
    with pytest.raises(KernelMatchError) as raised:
        eager.one("*tanh*", family="atne")
    lines = str(raised.value).splitlines()
    assert lines[-2:] == [
        "no kernel's family is 'atne' (did you mean 'aten'?); the kernels' families: aten, cublas",
        f"'*tanh*' matches {', '.join(f'#{n}' for n in range(2, 49, 4))} by name: their family ruled them out",
    ]


def test_a_family_is_one_name_of_a_str() -> None:
    kernels = KernelList([Kernel(name="relu", kind="pointwise", family="aten")])
    with pytest.raises(QueryTypeError, match=r"a kernel family is a str, .*; got tuple"):
        kernels.count(family=("aten", "cudnn"))  # type: ignore[arg-type]
    with pytest.raises(QueryError, match=r"add their counts: count\(family='aten'\) \+ count\(family='cudnn'\)"):
        kernels.count(family="aten,cudnn")
    for bad in ("", "aten*", "family=aten"):
        with pytest.raises(QueryError, match=r"is no kernel family: a family is one name"):
            kernels.one(family=bad)
        with pytest.raises(QueryError, match=r"is no kernel family"):
            kernels.matching(family=bad)
    # Free-form: a family the decoder does not know (a taught one) is a question, not an error.
    assert kernels.count(family="flash-attn") == 0


def test_a_family_question_warns_about_the_kernels_of_unknown_family() -> None:
    kernels = KernelList(
        [
            Kernel(name="relu", kind="pointwise", family="aten"),
            Kernel(name="mystery_kernel_v2", kind="other", family="unknown"),  # no evidence placed it
            Kernel(name="cutlass_gemm", kind="gemm", family="cutlass"),
        ]
    )
    with pytest.warns(UndecodedKernelWarning, match=r"count\(family='aten'\) may not hold: 1 kernel"):
        assert kernels.count(family="aten") == 1
    with pytest.warns(UndecodedKernelWarning), pytest.raises(AssertionError) as failed:
        kernels.one(family="cudnn")
    assert "1 kernel of unknown family (#1) could be it: teach the decoder" in str(failed.value)
