"""Inductor's fused ops, split back out of ``triton_<kind>_fused_<ops>_<n>``: the ops are the
sorted, deduplicated ATen op names of the kernel's origins joined with "_" (torch/_inductor/utils.py,
``get_fused_kernel_name``), so the split is against every name torch has
(decode/aten_op_names.py, written by tools/aten_op_names.py), and a name it lacks stays whole.
The origins' views compute nothing: the fused ops leave them out."""

from __future__ import annotations

import gzip
import random
import re
from dataclasses import replace

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.decode import bias_in_epilogues, fused_ops_read_now, parse_kernel_name
from pytest_kernelprof.decode.aten_op_names import ATEN_OP_NAMES
from pytest_kernelprof.decode.inductor import VIEW_OPS, inductor_ops, inductor_origins, own_work
from tests.helpers import DATA


@pytest.mark.parametrize(
    ("name", "fused_ops"),
    [
        # The names a user found cut into words ("dot", "attention" are no ops of these kernels).
        (
            "triton_poi_fused__scaled_dot_product_cudnn_attention__unsafe_view_add_cat_mul_neg_slice_transpose"
            "_unsqueeze_view_1",
            (
                "_scaled_dot_product_cudnn_attention",
                "_unsafe_view",
                *("add", "cat", "mul", "neg", "slice", "transpose", "unsqueeze", "view"),
            ),
        ),
        ("triton_poi_fused_scaled_dot_product_attention_0", ("scaled_dot_product_attention",)),
        ("triton_poi_fused_avg_pool2d_0", ("avg_pool2d",)),
        (
            "triton_poi_fused_add_bitwise_and_bitwise_not_bitwise_or_ge_lt_mul_sub_0",
            ("add", "bitwise_and", "bitwise_not", "bitwise_or", "ge", "lt", "mul", "sub"),
        ),
        ("triton_poi_fused_add_lift_fresh_0_0d1d2d3", ("add", "lift_fresh")),
        # A known name whole, not cut into shorter known ones.
        ("triton_poi_fused_index_put_lift_fresh_1", ("index_put", "lift_fresh")),
        # The copy back into a mutated input is the one in-place op in Inductor's names.
        (
            "triton_poi_fused_add_addcmul_copy__div_fill_mul_0",
            ("add", "addcmul", "copy_", "div", "fill", "mul"),
        ),
        ("triton_poi_fused__foreach_ceil__softmax_0", ("_foreach_ceil", "_softmax")),
        ("triton_tem_fused_addmm_gelu_t_0", ("addmm", "gelu", "t")),
        ("triton_poi_fused_0", ()),
    ],
)
def test_origins_are_whole_op_names(name: str, fused_ops: tuple[str, ...]) -> None:
    assert inductor_origins(name) == fused_ops
    assert parse_kernel_name(name).fused_ops == own_work(fused_ops, name)


@pytest.mark.parametrize(
    ("name", "fused_ops"),
    [
        # The H100's and H200's compiled GeGLU: the same work, one graph with a view.
        ("triton_poi_fused__unsafe_view_gelu_mul_0", ("gelu", "mul")),
        ("triton_poi_fused_gelu_mul_0", ("gelu", "mul")),
        ("triton_poi_fused_add_lift_fresh_0_0d1d2d3", ("add",)),
        (
            "triton_poi_fused__scaled_dot_product_cudnn_attention__unsafe_view_add_cat_mul_neg_slice_transpose"
            "_unsqueeze_view_1",
            ("add", "cat", "mul", "neg"),
        ),
        # A view's "_copy" form writes a tensor: kept.
        ("triton_poi_fused_add_view_copy_0", ("add", "view_copy")),
        # Views alone: the kernel moves data and computes nothing its name tells.
        ("triton_poi_fused__unsafe_view_clone_0", ("clone",)),
        ("triton_poi_fused_view_0", ()),
        ("triton_poi_fused_permute_t_view_0", ()),
        # A template keeps its kind: its GEMM is no view.
        ("triton_tem_fused_addmm_gelu_t_0", ("addmm", "gelu")),
        ("triton_tem_fused_mm_t_view_14", ("mm",)),
        # A name cut short keeps its last op as written: "t" may be the start of "tanh".
        ("triton_poi_fused_add_view_t", ("add", "t")),
    ],
)
def test_views_are_no_fused_ops(name: str, fused_ops: tuple[str, ...]) -> None:
    assert parse_kernel_name(name).fused_ops == fused_ops


@pytest.mark.parametrize(
    ("name", "fused_ops"),
    [
        # The Llama layer's rotary kernels, whose output feeds cuDNN's attention (its own kernel):
        # the kernel computes none of the attention.
        (
            "triton_poi_fused__scaled_dot_product_cudnn_attention__unsafe_view_add_cat_mul_neg_slice_transpose"
            "_unsqueeze_view_1",
            ("add", "cat", "mul", "neg"),
        ),
        ("triton_poi_fused__scaled_dot_product_efficient_attention_0", ()),
        ("triton_poi_fused_flex_attention_0", ()),
        # A convolution's bias add and ReLU, the convolution left to cuDNN; a GEMM's epilogue.
        ("triton_poi_fused_convolution_relu_0", ("relu",)),
        ("triton_poi_fused_addmm_gelu_1", ("gelu",)),
        ("triton_red_fused__to_copy_bmm_sum_2", ("_to_copy", "sum")),
        ("triton_per_fused__softmax_baddbmm_3", ("_softmax",)),
        # A template computes its GEMM, convolution or attention: it keeps them.
        ("triton_tem_fused_addmm_gelu_t_0", ("addmm", "gelu")),
        ("triton_tem_fused_convolution_relu_4", ("convolution", "relu")),
        ("triton_tem_fused_flex_attention_0", ("flex_attention",)),
    ],
)
def test_a_triton_kernel_computes_no_attention_gemm_or_convolution(name: str, fused_ops: tuple[str, ...]) -> None:
    decoded = parse_kernel_name(name)
    assert decoded.fused_ops == fused_ops
    assert decoded.name == name  # the name itself keeps every origin


def test_a_stored_inductor_kernel_drops_its_attention_op_when_read() -> None:
    # A baseline written before the attention op was left out compares as it would be written now.
    name = "triton_poi_fused__scaled_dot_product_cudnn_attention__unsafe_view_add_cat_mul_neg_slice_transpose_0"
    stored = ("_scaled_dot_product_cudnn_attention", "add", "cat", "mul", "neg")
    assert fused_ops_read_now(stored, name, None, "pointwise", "inductor") == ("add", "cat", "mul", "neg")
    template = "triton_tem_fused_addmm_gelu_t_0"
    assert fused_ops_read_now(("addmm", "gelu"), template, None, "gemm", "inductor") == ("addmm", "gelu")


def test_a_template_with_views_is_still_placed() -> None:
    decoded = parse_kernel_name("triton_tem_fused_addmm_t_view_3")
    assert (decoded.kind, decoded.template, decoded.fused_ops) == ("gemm", True, ("addmm",))
    assert (decoded.evidence.kind, decoded.evidence.fused_ops) == ("name", "name")
    views = parse_kernel_name("triton_poi_fused_view_0")
    assert (views.kind, views.evidence.fused_ops) == ("pointwise", None)


def test_the_views_are_torchs_op_names() -> None:
    # A view is still an op name for the split: "_unsafe_view" is not cut into words.
    assert VIEW_OPS <= ATEN_OP_NAMES
    assert not {name for name in VIEW_OPS if name.endswith(("_copy", "_scatter", "_backward"))}


@pytest.mark.parametrize(
    ("name", "fused_ops"),
    [
        # A custom op's name (vLLM's fused MoE) is one op, not "moe" and "forward".
        ("triton_poi_fused_constant_pad_nd_moe_forward_0", ("constant_pad_nd", "moe_forward")),
        # An unknown name that contains op names ("dot") is not cut at them.
        (
            "triton_poi_fused__fancy_dot_product_attention__unsafe_view_add_0",
            ("_fancy_dot_product_attention", "_unsafe_view", "add"),
        ),
        ("triton_poi_fused_mul_my_lib_dot_t_norm_0", ("mul", "my_lib_dot_t_norm")),
        # Cut at its op words, vLLM's op would be out of Inductor's sorted order ("and" first).
        ("triton_poi_fused_silu_and_mul_0", ("silu_and_mul",)),
        ("triton_poi_fused__to_copy_silu_and_mul_0", ("_to_copy", "silu_and_mul")),
    ],
)
def test_a_name_torch_lacks_stays_one_op(name: str, fused_ops: tuple[str, ...]) -> None:
    assert inductor_origins(name) == fused_ops


@pytest.mark.parametrize(
    ("name", "fused_ops"),
    [
        # A table cut the name short: the last op is kept as written, not completed or split.
        ("triton_poi_fused_add_mul_native_layer_norm_backw…", ("add", "mul", "native_layer_norm_backw…")),
        ("triton_red_fused__to_copy_add_mean_mul_po...", ("_to_copy", "add", "mean", "mul", "po...")),
        ("triton_poi_fused_add_mul_nat", ("add", "mul", "nat")),
        # A prefix to match (a page's pattern) ends at a "_": no op "add_" (in-place add) from it.
        ("triton_poi_fused_gelu_mul_", ("gelu", "mul")),
        ("triton_tem_fused_addmm_gelu_t_", ("addmm", "gelu", "t")),
        ("triton_poi_...", ()),
    ],
)
def test_a_cut_off_name_keeps_its_last_op_as_written(name: str, fused_ops: tuple[str, ...]) -> None:
    assert parse_kernel_name(name).fused_ops == fused_ops


_INDUCTOR_NAME = re.compile(rb"triton_(?:poi|red|per|tem|for|sca|spl|mix|unk)_fused_\w*_\d+\b")
# Ops of recorded kernels that no torch names: vLLM's custom op.
_NOT_TORCHS = {"moe_forward"}


def _recorded_names() -> list[str]:
    names: set[str] = set()
    for path in DATA.rglob("*"):
        if path.is_file() and path.suffix in (".gz", ".tsv", ".json"):
            data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
            names.update(match.decode() for match in _INDUCTOR_NAME.findall(data))
    return sorted(names)


RECORDED = _recorded_names()


def test_the_recorded_names_are_many() -> None:
    assert len(RECORDED) > 40


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_names_split_into_torchs_ops_as_inductor_joined_them(name: str) -> None:
    # Every kernel name of tests/data (recorded runs, the names corpus, the zoo): the ops are
    # torch's op names, sorted and deduplicated, and joined they give the name back.
    ops = inductor_origins(name)
    assert set(ops) <= ATEN_OP_NAMES | _NOT_TORCHS
    assert list(ops) == sorted(set(ops))
    body = re.sub(r"_\d+(?:_0[a-z\d]*)?$", "", name.split("_fused_", 1)[1])
    assert "_".join(ops) == body
    assert parse_kernel_name(name).fused_ops == own_work(ops, name)


def test_sorted_origins_of_torchs_ops_split_back() -> None:
    # What Inductor would name a kernel of any origins: the split gives them back, but for a
    # few that no split can tell apart ("_neg_view" and "copy", or "_neg_view_copy").
    functional = sorted(name for name in ATEN_OP_NAMES if not name.endswith("_"))
    rng = random.Random(0)
    wrong = []
    for _ in range(2000):
        ops = tuple(sorted(set(rng.sample(functional, rng.randint(1, 8)))))
        if inductor_origins("triton_poi_fused_" + "_".join(ops) + "_0") != ops:
            wrong.append(ops)
    assert len(wrong) <= 2, wrong


def test_a_long_name_is_split_on_its_first_words() -> None:
    ops = inductor_ops("triton_poi_fused_" + "_".join(["add", "mul"] * 1000) + "_0")
    assert ops == ("add", "mul") * 128


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:3] if part.isdigit())


def test_the_op_names_are_those_of_the_installed_torch() -> None:
    pytest.importorskip("torch")
    import torch

    from pytest_kernelprof.decode.aten_op_names import FROM_TORCH
    from tools.aten_op_names import shipped_names, torch_names

    # The module holds the names of the torch versions it was written from: each of those, and any
    # newer torch, must find all of its own there (else the module is stale). A torch between them
    # may have had a name neither end has: kernels named after it keep that run as one op.
    version = torch.__version__.split("+")[0]
    newest = max(FROM_TORCH, key=_version_key)
    if version in FROM_TORCH or _version_key(version) > _version_key(newest):
        missing = torch_names() - shipped_names()
        assert not missing, f"run python tools/aten_op_names.py: {sorted(missing)[:20]}"
    assert shipped_names() == ATEN_OP_NAMES
    assert {"_scaled_dot_product_cudnn_attention", "avg_pool2d", "_unsafe_view", "flex_attention"} <= ATEN_OP_NAMES


def test_the_bias_is_the_epilogue_kernels_where_cublaslt_ran_one() -> None:
    # A trial: the split-K sgemm_largek read "bias" (from aten::addmm) beside the epilogue kernel
    # that added it, so gemm.fused_ops == ("bias",) held of a GEMM that fused none.
    prof = load_trace(DATA / "h200_sync_item_stacks.json.gz")
    addmm = [k for k in prof.kernels if k.op == "aten::addmm"]
    facts = [(k.kind, k.part_of, k.fused_ops, k.evidence.fused_ops) for k in addmm]
    assert facts == [
        ("pointwise", "gemm", (), None),  # scal_kernel: the output scaled
        ("gemm", None, (), None),  # sgemm_largek: no epilogue of its own
        ("pointwise", "gemm", ("bias",), "op"),  # cublasLt's epilogue kernel adds the bias
        ("pointwise", None, ("copy",), "name"),  # the bias copied into the output...
        ("gemm", None, ("bias",), "op"),  # ...that the gemv adds with beta=1: its own
    ]
    # A GEMM whose name says its epilogue keeps it.
    nvjet = load_trace(DATA / "h200_linear_eager.json.gz").kernels.one(kind="gemm")
    assert (nvjet.fused_ops, nvjet.evidence.fused_ops) == (("bias",), "name")


def test_each_epilogue_takes_the_bias_of_its_own_launchs_gemm() -> None:
    sgemm = replace(parse_kernel_name("void sgemm_largek_lds64<true, false, 5, 5, 4, 4, 4, 34>()"), fused_ops=("bias",))
    epilogue = parse_kernel_name(
        "void cublasLt::epilogue::impl::globalKernel<8, 32, float, float, float, true, true, 1>()"
    )
    add = parse_kernel_name("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >()")
    kernels = [sgemm, epilogue, sgemm, epilogue, sgemm, add, epilogue]
    ops = ["aten::addmm"] * 4 + ["aten::addmm", "aten::add", "aten::addmm"]
    moved = bias_in_epilogues(kernels, ops, lambda k, fused: replace(k, fused_ops=fused))
    # Two launches of addmm back to back: each epilogue the bias of the GEMM before it; an
    # epilogue after another op's kernel takes no GEMM's (not its launch's).
    assert [k.fused_ops for k in moved] == [(), ("bias",), (), ("bias",), ("bias",), add.fused_ops, ()]
