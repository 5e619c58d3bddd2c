"""Kernel diffs (``checks/diff.py``, ``kernelprof diff``): no invented fusions; a one-for-one
replacement is no fusion, and each removed kernel is fused into one kernel at most."""

from __future__ import annotations

import dataclasses
import gzip
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.diff import (
    count_changes,
    describe_kernel,
    diff_kernels,
    dtype_changes,
    render_diff,
    time_change,
    unknown_dtypes,
)
from pytest_kernelprof.cli import main
from pytest_kernelprof.decode import KernelName, parse_kernel_name
from pytest_kernelprof.tables import display_name
from tests.helpers import DATA, user_kernel_trace

Trace = Callable[[str], Path]


def test_a_one_for_one_replacement_is_no_fusion() -> None:
    gemm = parse_kernel_name("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT")
    tanh = parse_kernel_name(
        "void at::native::vectorized_elementwise_kernel<4, at::native::tanh_kernel_cuda(at::TensorIteratorBase&)"
        "::{lambda()#2}::operator()() const::{lambda()#1}::operator()() const::{lambda(float)#1}, "
        "std::array<char*, 2ul> >(int, at::native::tanh_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}"
        "::operator()() const::{lambda()#1}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)"
    )
    fused = parse_kernel_name("triton_poi_fused_tanh_0")
    assert tanh.fused_ops == fused.fused_ops == ("tanh",)
    diff = diff_kernels([gemm, tanh] * 64, [gemm, fused] * 64)
    assert diff.fusions == ()
    assert not any(line.startswith("fused:") for line in render_diff(diff))


def test_each_removed_kernel_is_fused_into_one_kernel(trace: Trace) -> None:
    eager = list(load_trace(trace("decode_eager")).kernels)
    graphs = list(load_trace(trace("decode_graphs")).kernels)
    diff = diff_kernels(eager, graphs)
    # add, tanh and mul of each layer; the last layer's go with the softmax into one Triton kernel
    # (Inductor names the op _softmax, the eager kernel softmax: the same op)
    assert [len(covered) for covered, _ in diff.fusions] == [3] * 11 + [4]
    assert all(sorted(k.fused_ops[0] for k in covered) == ["add", "mul", "tanh"] for covered, _ in diff.fusions[:11])
    assert sorted(k.fused_ops[0] for k in diff.fusions[-1][0]) == ["add", "mul", "softmax", "tanh"]
    claimed = [id(k) for covered, _ in diff.fusions for k in covered]
    assert len(claimed) == len(set(claimed))
    removed = [c.before for c in diff.changes if c.mark == "-"]
    assert len(claimed) == len(removed)  # every removed kernel is accounted for, once


def test_kernelprof_diff_tells_each_fusion_once_with_its_count(
    trace: Trace, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["diff", str(trace("decode_eager")), str(trace("decode_graphs"))]) == 1
    out = capsys.readouterr().out.splitlines()
    ops = "add (aten pointwise) + tanh (aten pointwise) + mul (aten pointwise)"
    assert [line for line in out if line.startswith("fused:")] == [
        f"fused: {ops} -> triton_poi_fused_add_mul_tanh_0  x11",
        f"fused: {ops} + softmax (aten reduction) -> triton_per_fused__softmax_add_amax_mul_sub_tanh_1",
    ]
    # the eleven identical layers are shown once, under their count
    assert out.count("11 times, back to back:") == 1  # a trial: "x11:" read as a stray line
    assert sum(line.startswith("  + pointwise/inductor") for line in out) == 1
    assert len(out) < 35  # figures, summary lines, one folded layer and the fusions: not 49 + 24 kernels


def test_a_lost_fusion_is_told_as_a_split(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    # The reverse of a fusion (compiled in a, eager in b): what a user diffs after a regression.
    eager = list(load_trace(trace("decode_eager")).kernels)
    graphs = list(load_trace(trace("decode_graphs")).kernels)
    forward, backward = diff_kernels(eager, graphs), diff_kernels(graphs, eager)
    assert backward.splits == tuple((covered, fused) for covered, fused in forward.fusions)
    assert backward.fusions == forward.splits == ()
    assert main(["diff", str(trace("decode_graphs")), str(trace("decode_eager"))]) == 1
    out = capsys.readouterr().out.splitlines()
    ops = "add (aten pointwise) + tanh (aten pointwise) + mul (aten pointwise)"
    assert [line for line in out if line.startswith(("split:", "fused:"))] == [
        f"split: triton_poi_fused_add_mul_tanh_0 -> {ops}  x11",
        f"split: triton_per_fused__softmax_add_amax_mul_sub_tanh_1 -> {ops} + softmax (aten reduction)",
    ]


def test_a_liger_kernel_is_told_as_fusing_the_eager_kernels_it_replaces(
    trace: Trace, capsys: pytest.CaptureFixture[str]
) -> None:
    # A trial: Inductor's GeGLU kernel got a fused: line, Liger's, doing the same work, none.
    assert main(["diff", str(trace("geglu_eager")), str(trace("geglu_liger"))]) == 1
    fused = [line for line in capsys.readouterr().out.splitlines() if line.startswith("fused:")]
    assert fused == ["fused: gelu (aten pointwise) + mul (aten pointwise) -> _geglu_tanh_forward_kernel"]


def test_removed_kernels_no_added_kernel_took_over_are_told() -> None:
    gemm = parse_kernel_name("nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT")
    elementwise = "void at::native::vectorized_elementwise_kernel<4, at::native::{}, int>(int)"
    add = parse_kernel_name(elementwise.format("CUDAFunctor_add<float>"))
    mul = parse_kernel_name(elementwise.format("AUnaryFunctor<float, float, float, at::native::MulFunctor<float> >"))
    fused = parse_kernel_name("triton_poi_fused_add_mul_0")
    lines = render_diff(diff_kernels([add, mul, gemm], [fused]))
    assert lines[-2].startswith("fused: add (aten pointwise) + mul (aten pointwise) -> triton_poi_fused_add_mul_0")
    assert lines[-1].startswith("removed, taken over by no added kernel: gemm/nvjet")


def test_many_removed_kernels_no_added_kernel_took_over_are_counted_not_named_again() -> None:
    # A trial: 18 - lines, a fused: line, then 15 lines naming the - kernels again.
    from pytest_kernelprof import load_trace
    from tests.helpers import DATA

    a, b = (load_trace(DATA / f"h200_{n}.json.gz") for n in ("sync_item_stacks", "linear_eager"))
    lines = render_diff(diff_kernels(list(a.kernels), list(b.kernels)))
    assert sum(line.startswith("- ") for line in lines) == 18
    assert any(line.startswith("fused: ") for line in lines)
    told = [line for line in lines if line.startswith("removed, taken over by no added kernel:")]
    assert told == ["removed, taken over by no added kernel: the other 16 removed kernels (their - lines above)"]


def test_a_diff_shows_names_as_the_kernel_table_does(trace: Trace) -> None:
    # Issue 32 item 3: the diff dropped at::native:: where the table kept it, and named the cuBLAS
    # gemv by its return type (enable_if<!(false), void>::type kernel<...>).
    eager, compiled = load_trace(trace("decode_eager")).kernels, load_trace(trace("decode_compiled")).kernels
    text = "\n".join(render_diff(diff_kernels(list(eager), list(compiled))))
    table = eager.table()
    for shown in (
        "internal::gemvx::kernel<int, int, ..., 7, ..., cublasGemvParamsEx<int, "
        "cublasGemvTensorStridedBatched<...>, ...> >",
        "at::native::vectorized_elementwise_kernel<4, AUnaryFunctor<float, float, float, MulFunctor<float> >, "
        "array<char*, 2ul> >",
    ):
        assert shown in text
        assert shown in table
    assert "enable_if" not in text + table


def test_a_gemm_with_a_bias_epilogue_fuses_a_gemm_and_an_add(trace: Trace) -> None:
    eager = list(load_trace(trace("matmul_add_eager")).kernels)
    compiled = list(load_trace(trace("matmul_add_compiled")).kernels)
    diff = diff_kernels(eager, compiled)
    assert [(tuple(k.kind for k in covered), fused.fused_ops) for covered, fused in diff.fusions] == [
        (("gemm", "pointwise"), ("bias",))
    ]
    # A GEMM for a GEMM is no fusion, with an epilogue or without.
    plain = parse_kernel_name("nvjet_sm90_tst_64x8_64x16_1x2_h_bz_NNT")
    biased = parse_kernel_name("nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_NNT")
    assert diff_kernels([plain], [biased]).fusions == ()
    assert diff_kernels([biased], [plain]).fusions == ()


def test_dtype_changes_tell_moves_not_counts() -> None:
    bf16 = parse_kernel_name("nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT")
    fp32 = parse_kernel_name("cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>")
    triton = parse_kernel_name("triton_poi_fused_add_0")
    assert (bf16.dtype, fp32.dtype, triton.dtype) == ("bf16", "fp32", None)
    assert dtype_changes([bf16], [fp32]) == ["gemm: bf16 1 -> 0, fp32 0 -> 1"]
    assert dtype_changes([bf16, bf16, fp32], [bf16, fp32, fp32]) == ["gemm: bf16 2 -> 1, fp32 1 -> 2"]
    assert dtype_changes([bf16], [bf16, fp32]) == ["gemm: fp32 0 -> 1"]  # a new dtype
    assert dtype_changes([bf16, bf16], [bf16]) == []  # a count change alone
    assert dtype_changes([fp32], [triton]) == []  # an unknown dtype is no move
    assert dtype_changes([], [fp32]) == []


def test_kernels_of_unknown_dtype_are_no_dtype_change(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    # Trial report: eager -> CUDA graphs decode printed "dtype changes: pointwise: fp32 36 -> 1, ? 0 -> 11":
    # no kernel moved dtype, 35 fp32 ATen kernels fused into 11 Triton ones of unknown dtype.
    triton = parse_kernel_name("triton_poi_fused_add_0")
    fp32 = dataclasses.replace(triton, name="aten_pointwise", dtype="fp32")
    assert dtype_changes([fp32, fp32, fp32], [fp32, triton]) == []
    assert unknown_dtypes([fp32, fp32, fp32], [fp32, triton]) == [("pointwise", 0, 1)]
    assert unknown_dtypes([triton], [triton]) == []
    for b in ("decode_graphs", "decode_compiled"):
        assert main(["diff", str(trace("decode_eager")), str(trace(b))]) == 1
        out = capsys.readouterr().out
        assert "dtype changes" not in out
        unknown = (
            "note: kernels of unknown dtype (?): persistent_reduction 0 in a, 1 in b; pointwise 0 in a, 11 in b; "
            "left out of the dtype comparison (a limit of what is compared, not a change)"
        )
        assert f"\n{unknown}\nthe kernels differ;" in out  # after the diff: no change of its own
    # The same kind of change, told the same way.
    assert main(["diff", str(trace("geglu_eager")), str(trace("geglu_compiled"))]) == 1
    assert "note: pointwise kernels of unknown dtype (?): 0 in a, 1 in b; left out" in capsys.readouterr().out


def test_the_unknown_dtype_line_cannot_be_read_as_a_count_of_the_kind(
    trace: Trace, capsys: pytest.CaptureFixture[str]
) -> None:
    # Trial report: under `count changes: ...; pointwise: 36 -> 11; ...` the line
    # `dtype unknown, not compared: ...; pointwise: 0 -> 11` read as a pointwise count contradicting it.
    assert main(["diff", str(trace("decode_eager")), str(trace("decode_compiled"))]) == 1
    lines = capsys.readouterr().out.splitlines()
    counts = [line for line in lines if line.startswith("count changes: ")]
    assert counts == [
        "count changes: persistent_reduction: 0 -> 1; pointwise: 36 -> 11; reduction: 1 -> 0 "
        "(count(kind='reduction'), persistent ones included: 1 -> 1)"
    ]
    # What a test's count says: the compiled softmax is a persistent reduction, still a reduction.
    eager, compiled = load_trace(trace("decode_eager")), load_trace(trace("decode_compiled"))
    assert eager.kernels.count(kind="reduction") == compiled.kernels.count(kind="reduction") == 1
    # `kind: N -> M` is a count of the kind: only the count line says it.
    told = [line for line in lines if re.search(r"\b(pointwise|persistent_reduction|reduction): \d+ -> \d+", line)]
    assert told == counts
    unknown = [line for line in lines if "unknown dtype" in line]
    assert unknown == [
        "note: kernels of unknown dtype (?): persistent_reduction 0 in a, 1 in b; pointwise 0 in a, 11 in b; "
        "left out of the dtype comparison (a limit of what is compared, not a change)"
    ]


def test_a_kernel_that_changed_dtype_only_says_so() -> None:
    a = parse_kernel_name("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64")
    b = parse_kernel_name("sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x64")
    lines = render_diff(diff_kernels([a], [b]), "a", "b")
    assert lines[0].startswith(f"~ {b.kind}/{b.family} {b.dtype} tn")  # b's, as a = line shows
    assert f"    dtype: {a.dtype} in a, {b.dtype} in b" in lines


def test_a_rename_the_shown_names_hide_says_what_changed() -> None:
    # Trial report: GELU recompiled for float printed "renamed in b:" and the same shortened name
    # as before, the one part that changed being in what the shortening leaves out.
    gelu = (
        "void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
        "at::native::GeluType)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::"
        "{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, {lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)"
    )
    a, b = parse_kernel_name(gelu), parse_kernel_name(gelu.replace("c10::BFloat16", "float"))
    assert display_name(a.name) == display_name(b.name)  # what hid it
    lines = render_diff(diff_kernels([a], [b]), "a", "b")
    assert "    named otherwise in a, in a part the shown names leave out: c10::BFloat16 -> float (2 places)" in lines
    other = parse_kernel_name("sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x64")
    shown = render_diff(diff_kernels([parse_kernel_name(other.name.replace("128x128", "64x128"))], [other]), "a", "b")
    before = other.name.replace("128x128", "64x128")
    assert shown[0].endswith(display_name(other.name))  # b's name on the ~ line, as on a = line
    assert f"    named in a: {display_name(before)}" in shown  # a change the shown name holds


def test_an_unknown_dtype_is_a_question_mark_as_in_the_tables(trace: Trace) -> None:
    # Trial report: the diff left an unknown dtype out, where the kernel tables print "?".
    eager = load_trace(trace("geglu_eager")).kernels
    compiled = load_trace(trace("geglu_compiled")).kernels
    fused = next(k for k in compiled if k.family == "inductor")
    assert fused.dtype is None
    lines = render_diff(diff_kernels(list(eager), list(compiled)), "a", "b")
    assert f"+ pointwise/inductor ? [gelu,mul]  {display_name(fused.name)}" in lines
    triton = parse_kernel_name("triton_poi_fused_add_0")
    typed = dataclasses.replace(triton, name="triton_poi_fused_add_1", dtype="bf16")  # its IR read
    # Told, and said not to be compared: a ? moves nothing (a trial read such lines as the ~'s reason).
    assert "    dtype (? unknown, not compared): ? in a, bf16 in b" in render_diff(
        diff_kernels([triton], [typed]), "a", "b"
    )


def test_kernelprof_diffs_op_line_says_the_op_is_not_compared(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    # A trial: a ~ listed "op: Torch-Compiled Region: 2/0 in a, ... 0/0 in b", read as its reason;
    # kernelprof diff aligns by name or shape, never by op (a baseline compares ops: its line is "op:").
    assert main(["diff", str(trace("geglu_compiled")), str(DATA / "h100_inductor_geglu_bf16.json.gz")]) == 1
    out = capsys.readouterr().out
    assert "    op (told, not compared): Torch-Compiled Region: 2/0 in a, Torch-Compiled Region: 0/0 in b" in out
    assert "    op: " not in out


@pytest.mark.parametrize(("a", "b"), [("bf16", "fp32"), ("fp32", "bf16")])
def test_a_kernel_of_one_name_whose_dtype_moved_is_changed_not_kept(
    a: str, b: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # A user's trial: "= pointwise/inductor fp32 [gelu,mul]  triton_poi_fused_gelu_mul_0" where a
    # ran it in bf16; only the summary's "dtype changes:" told the move.
    traces = [str(DATA / f"h100_inductor_geglu_{dtype}.json.gz") for dtype in (a, b)]
    assert main(["diff", *traces]) == 1
    lines = capsys.readouterr().out.splitlines()
    at = lines.index(f"~ pointwise/inductor {b} [gelu,mul]  triton_poi_fused_gelu_mul_0")
    assert lines[at + 1] == f"    dtype: {a} in a, {b} in b"
    assert not any(line.startswith("= pointwise") for line in lines), lines
    # A dtype one side does not know is no move: the kernel is kept.
    known = parse_kernel_name("triton_poi_fused_add_0")
    assert known.dtype is None
    typed = dataclasses.replace(known, dtype="bf16")
    assert [c.mark for c in diff_kernels([known], [typed]).changes] == ["="]
    assert [c.mark for c in diff_kernels([typed], [dataclasses.replace(typed, dtype="fp32")]).changes] == ["~"]


def _named(tmp_path: Path, name: str) -> str:
    """The user kernel trace with its unplaced kernel named ``name``."""
    text = gzip.decompress(user_kernel_trace(tmp_path / "user.json.gz").read_bytes()).decode()
    path = tmp_path / f"{name}.json.gz"
    path.write_bytes(gzip.compress(text.replace("_geglu_tanh_forward_kernel", name).encode()))
    return str(path)


@pytest.mark.parametrize("by", ["name", "shape"])
def test_one_unplaced_kernel_swapped_for_another_is_no_rename(
    by: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A user's trial: "~ other/unknown ?  acme_fused_thing_v2" / "renamed in b: acme_fused_thing_v3":
    # nothing says what either kernel is, so nothing says they are alike.
    traces = [_named(tmp_path, "acme_fused_thing_v2"), _named(tmp_path, "acme_fused_thing_v3")]
    assert main(["diff", *traces, "--by", by]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert "- other/unknown ?  acme_fused_thing_v2" in lines
    assert "+ other/unknown ?  acme_fused_thing_v3" in lines
    assert not any(line.startswith("~") or "renamed" in line or "named in" in line for line in lines), lines
    # Each side's count, as a baseline failure gives them (diff gave the sum of both).
    assert (
        "(1 kernel of unknown kind in a, 1 in b: the counts by kind may not hold; teach them with --kernels)" in lines
    )


def test_a_diff_lists_each_sides_kernels_in_launch_order() -> None:
    # A trial: the compiled GeGLU of an H200 against an H100's printed the Triton kernel, third on
    # both sides, first (the renamed pair ahead of the GEMMs removed and added before it).
    before = load_trace(DATA / "h200_geglu_compiled.json.gz").kernels
    after = load_trace(DATA / "h100_inductor_geglu_bf16.json.gz").kernels
    changes = diff_kernels(before, after).changes  # by name, as kernelprof diff
    assert [change.mark for change in changes] == ["-", "-", "+", "+", "~", "-"]
    assert [c.before for c in changes if c.before is not None] == list(before)
    assert [c.after for c in changes if c.after is not None] == list(after)


def test_a_repeat_is_folded_only_where_that_makes_it_shorter() -> None:
    # A trial: "2 times, back to back:" over a single line, which two lines said as well.
    gemm = parse_kernel_name("nvjet_sm90_tst_64x8_64x16_2x4_h_bz_NNT")
    twice = render_diff(diff_kernels([gemm, gemm], []), "a", "b")
    assert twice == [f"- {describe_kernel(gemm)}"] * 2
    thrice = render_diff(diff_kernels([gemm] * 3, []), "a", "b")
    assert thrice == ["3 times, back to back:", f"  - {describe_kernel(gemm)}"]
    # A block of two lines twice folds: four lines become three.
    add = parse_kernel_name("triton_poi_fused_add_0")
    assert render_diff(diff_kernels([gemm, add] * 2, []), "a", "b")[0] == "2 times, back to back:"


def test_a_time_change_that_rounds_to_one_figure_shows_the_digits_that_differ() -> None:
    # A trial: "2.7us -> 2.7us (+1.2%)" read as a contradiction.
    assert time_change(2.68, 2.712) == "2.68us -> 2.71us (+1.2%)"
    assert time_change(2.7001, 2.7004) == "2.700us -> 2.700us (+0.0%)"  # three digits at most
    assert time_change(223.3, 371.0) == "223.3us -> 371.0us (+66.1%)"
    assert time_change(2.7, 2.7) == "2.7us -> 2.7us (+0.0%)"


def test_a_time_change_shows_the_digits_that_give_its_percentage() -> None:
    # A trial: `2.7us 2.6us -4.7%` (the eager nn.Linear's GEMM, bf16 then fp32): the figures shown
    # give -3.7%. With two digits they give -4.8%, within half a point of the change shown.
    assert time_change(2.720, 2.592) == "2.72us -> 2.59us (-4.7%)"
    assert time_change(232.5, 222.1) == "232.5us -> 222.1us (-4.5%)"  # one digit is enough
    # A large change: the shown figures give it to within 1% (a trial read 5.791us -> 222.081us).
    assert time_change(5.791, 222.081) == "5.8us -> 222.1us (+3734.9%)"
    assert time_change(0.0, 2.6) == "0.0us -> 2.6us"
    assert time_change(0.04, 0.06) == "0.04us -> 0.06us (+50.0%)"
    assert time_change(0.0041, 0.0059) == "0.004us -> 0.006us (+43.9%)"  # three digits at most


def test_a_helper_kernel_is_told_as_part_of_its_work_as_the_table_tells_it(
    trace: Trace, capsys: pytest.CaptureFixture[str]
) -> None:
    # A trial: cuBLAS's scal_kernel read "part of gemm" in show's table and a plain pointwise
    # kernel in the diff's lines.
    assert main(["diff", str(trace("compile_clean")), str(trace("compile_clean_train"))]) == 1
    out = capsys.readouterr().out.splitlines()
    helpers = [line for line in out if line[2:].startswith("pointwise/cublas")]
    assert helpers  # the traces do hold the helper kernels
    assert all(line[2:].startswith("pointwise/cublas (part of gemm) fp32 ") for line in helpers)
    assert any(line.startswith("+ reduction/cublas (part of gemm) fp32  ") for line in out)  # split-K reduce
    gemm = next(k for k in load_trace(trace("compile_clean")).kernels if k.kind == "gemm")
    assert describe_kernel(gemm).startswith("gemm/cublas fp32  sgemm_largek")  # a kernel of its own work: as before
    # The bias is the epilogue kernel's, which adds it, not the split-K GEMM's (a trial).
    assert any(line[2:].startswith("pointwise/cublas (part of gemm) fp32 [bias]  cublasLt::epilogue") for line in out)


@pytest.mark.parametrize(
    ("before", "after", "told"),
    [
        # A persistent reduction added, the reductions unchanged: count(kind="reduction") grows.
        (
            ["reduction", "reduction"],
            ["reduction", "reduction", "persistent_reduction"],
            ["persistent_reduction: 0 -> 1 (count(kind='reduction'), persistent ones included: 2 -> 3)"],
        ),
        (
            ["persistent_reduction", "pointwise"],
            ["reduction"],
            [
                "persistent_reduction: 1 -> 0",
                "pointwise: 1 -> 0",
                "reduction: 0 -> 1 (count(kind='reduction'), persistent ones included: 1 -> 1)",
            ],
        ),
        # No persistent reduction on either side: the entries are what the counts say.
        (["reduction", "pointwise"], ["pointwise"], ["reduction: 1 -> 0"]),
        # Persistent ones unchanged and reductions too: nothing to add.
        (["persistent_reduction", "pointwise"], ["persistent_reduction"], ["pointwise: 1 -> 0"]),
    ],
)
def test_count_changes_say_what_a_reduction_count_answers(before: list[str], after: list[str], told: list[str]) -> None:
    def kernels(kinds: list[str]) -> list[KernelName]:
        return [KernelName(f"k{i}", kind, "inductor") for i, kind in enumerate(kinds)]

    assert count_changes(kernels(before), kernels(after)) == told
