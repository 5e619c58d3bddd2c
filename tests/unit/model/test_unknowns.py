"""Loud unknowns (``model/unknowns.py``): a question about kinds or dtypes that kernels of
unknown kind or dtype could change warns, naming them and the lines that would teach them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_kernelprof.decode import BUILT_IN, Decoder, KernelName, parse_kernel_name
from pytest_kernelprof.errors import UndecodedKernelWarning
from pytest_kernelprof.model.unknowns import warn_undecided
from tests.helpers import user_kernel_trace

NO_NAME = "mystery_kernel_v2"  # no rule knows it: whatever placed it was not its name


def test_an_unplaced_kernel_could_be_any_kind_but_a_placed_one_cannot() -> None:
    from pytest_kernelprof.model.unknowns import could_match

    unknown = parse_kernel_name(NO_NAME)
    gemm = parse_kernel_name("nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN")
    assert could_match(unknown, kinds={"gemm"})
    assert not could_match(unknown, kinds={"other"})  # it is "other": no doubt there
    assert not could_match(gemm, kinds={"pointwise"})
    assert not could_match(gemm, kinds={"gemm"})  # it matches: no doubt either


def test_an_unknown_dtype_leaves_a_dtype_question_open_only_where_the_kind_fits() -> None:
    from pytest_kernelprof.model.unknowns import could_match

    no_dtype = BUILT_IN.decode("weird_gemm_kernel", "aten::mm")
    assert (no_dtype.kind, no_dtype.dtype) == ("gemm", None)
    assert could_match(no_dtype, kinds={"gemm"}, dtypes={"fp32"})
    assert not could_match(no_dtype, kinds={"pointwise"}, dtypes={"fp32"})


def test_the_warning_names_the_kernels_and_the_lines_that_would_teach_them() -> None:
    from pytest_kernelprof.errors import UndecodedKernelWarning
    from pytest_kernelprof.model.unknowns import warn_undecided

    kernels = [parse_kernel_name(f"void my_ext::kernel_{i}<float>(float*)") for i in range(7)]
    with pytest.warns(UndecodedKernelWarning) as caught:
        warn_undecided("count(kind='gemm')", kernels)
    message = str(caught[0].message)
    assert message.startswith("count(kind='gemm') may not hold: 7 kernels of unknown kind could change it:")
    assert "  my_ext::kernel_0<float>  (kind unknown)" in message
    assert "... and 2 more" in message
    assert "    *::kernel_0<*: kind=... family=..." in message
    # A trial taught after load_trace and saw no change: teaching is for the profiles built next.
    assert "or kernelprof.teach(GLOB, ...) in the test before taking or loading the profile:" in message
    assert message.endswith("\n(an error under --kernelprof-strict-decode)")


def test_no_unknowns_no_warning() -> None:
    import warnings

    from pytest_kernelprof.model.unknowns import warn_undecided

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_undecided("count(kind='gemm')", [])


def test_a_teaching_glob_names_the_function_not_its_namespace() -> None:
    from pytest_kernelprof.model.unknowns import teaching_glob

    name = "at::native::(anonymous namespace)::fill_index_and_segment_kernel(int2*, int, at::cuda::detail::IntDivider<unsigned int>)"  # noqa: E501
    glob = teaching_glob(name)
    assert glob == "*::fill_index_and_segment_kernel(*"
    assert Decoder().teach(glob, kind="sort").decode(name).kind == "sort"
    assert Decoder().teach(glob, kind="sort").decode("void at::native::other_kernel<float>(float*)").kind != "sort"
    assert teaching_glob("_geglu_tanh_forward_kernel") == "_geglu_tanh_forward_kernel"


# Kernels a suite runs beside the one taught: a glob that matches any of them relabels it too.
OTHER_KERNELS = (
    "triton_poi_fused_gelu_mul_mul_0",
    "triton_poi_fused_gelu_backward_1",
    "triton_red_fused__softmax_backward_data_1",
    "triton_poi_fused_1",
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >"
    "(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
    "nvjet_sm90_tst_64x8_64x16_2x4_h_bz_TNT",
    "triton_poi_fused_add_0",
    "void at::native::kernel_helper<float>(float*)",
    "void my_ext::k_backward<float>(float*)",
    "std::function<void()>::kk",
    "void <lambda>(float)",
    "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(Params)",
)


@pytest.mark.parametrize(
    ("name", "glob"),
    [
        ("<unnamed>::kernel<int>(int)", "*::kernel<*"),  # an anonymous namespace, as clang writes it
        ("void <lambda>(int)", "<lambda>(int)"),  # no name of its own: the name itself
        ("(anonymous)::k", "(anonymous)::k"),
        ("std::function<void()>::k", "*::k"),
        ("std::enable_if<true, void>::type gemm_kernel<float, 4>(float*, int)", "gemm_kernel<*"),  # its return type
        ("void Foo::operator()<int>(int)", "Foo::operator()<int>(int)"),  # every functor's call operator
        ("void <lambda(float*)>[2]?(int)", "<lambda(float[*])>[[]2][?](int)"),  # the name, escaped for a glob
        ("::error::kernel\n#1", "[:]:error::kernel?#1"),  # on one ini line, and no workflow command
        ("# k: kind=gemm", "[#] k[:] kind=gemm"),  # not a comment, and ': ' is not where the glob ends
        ('"k"<1>', "?k?<1>"),  # a glob line takes no double quote (decode/teach.py)
        ("_geglu_tanh_forward_kernel", "_geglu_tanh_forward_kernel"),
        ("my_ext::tiled_matmul<float>(float*)", "*::tiled_matmul<*"),
        # Inductor's: without the index in its graph, which a change to the graph renumbers
        ("triton_poi_fused_gelu_mul_0", "triton_poi_fused_gelu_mul_[0-9]*"),
        ("triton_red_fused__softmax_1", "triton_red_fused__softmax_[0-9]*"),
        ("triton_per_fused_native_layer_norm_12", "triton_per_fused_native_layer_norm_[0-9]*"),
        ("triton_tem_fused_addmm_gelu_t_0", "triton_tem_fused_addmm_gelu_t_[0-9]*"),
        ("triton_poi_fused_gelu_0_0d1d2de", "triton_poi_fused_gelu_[0-9]*"),  # before Triton 3.0
        ("triton_poi_fused_0", "triton_poi_fused_0"),  # no op named: its index is all it has
        ("triton__0d1d2d", "triton__0d1d2d"),  # PyTorch 2.0's, no category
    ],
)
def test_a_teaching_glob_matches_its_kernel_and_none_of_the_others(name: str, glob: str) -> None:
    """The hint is pasted into the ini, where a taught rule comes before every built-in one: a
    glob that matched everything (``*``, given for a name without a plain name of its own)
    relabelled every kernel of the suite."""
    from pytest_kernelprof.decode.teach import parse_teaching
    from pytest_kernelprof.model.unknowns import teaching_glob
    from pytest_kernelprof.tables import name_matches

    assert teaching_glob(name) == glob
    assert parse_teaching(f"{glob}: kind=gemm", "hint").pattern == glob
    assert name_matches(name, glob)
    assert [other for other in OTHER_KERNELS if name_matches(other, glob)] == []


@pytest.mark.parametrize("index", ["0", "3", "17"])
def test_an_inductor_kernels_taught_line_holds_when_its_graph_renumbers_it(index: str) -> None:
    from pytest_kernelprof.decode.teach import parse_teaching
    from pytest_kernelprof.model.unknowns import how_to_teach
    from pytest_kernelprof.types import parse_kernel_name

    line = how_to_teach([parse_kernel_name("triton_poi_fused_gelu_mul_0")])[1].strip()
    assert line == "triton_poi_fused_gelu_mul_[0-9]*: dtype=..."
    taught = Decoder().teach(parse_teaching(line.replace("...", "bf16"), "hint").pattern, dtype="bf16")
    assert taught.decode(f"triton_poi_fused_gelu_mul_{index}").dtype == "bf16"
    assert taught.decode("triton_poi_fused_gelu_mul_mul_0").dtype is None


def test_one_says_which_unknown_kernels_could_be_the_answer(tmp_path: Path) -> None:
    import warnings

    from pytest_kernelprof import load_trace

    prof = load_trace(user_kernel_trace(tmp_path / "user_kernel.json.gz"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(AssertionError) as failure:
            prof.kernels.one(kind="pointwise")
    assert "1 kernel of unknown kind (#2) could be it: teach the decoder" in str(failure.value)


def test_unplaced_kernels_of_a_profile_that_measured_nothing_raise() -> None:
    import pytest_kernelprof as kp

    prof = kp.profile(lambda: None)  # CPU only here: no GPU activity recorded
    with pytest.raises(kp.NoDeviceActivityError):
        prof.kernels.unplaced()


def test_the_warning_points_at_the_users_line_from_a_rule_as_from_a_count(tmp_path: Path) -> None:
    from pytest_kernelprof import Profiler, load_trace
    from pytest_kernelprof.errors import UndecodedKernelWarning

    path = user_kernel_trace(tmp_path / "user_kernel.json.gz")
    with pytest.warns(UndecodedKernelWarning) as counted:
        load_trace(path).kernels.count(kind="sort")
    with pytest.warns(UndecodedKernelWarning, match="no-sort") as ruled:
        Profiler(forbid=["no-sort: kind=sort"]).load_trace(path)  # warned from checks/rules.py
    assert [caught.filename for caught in (*counted, *ruled)] == [__file__, __file__]


def test_strict_decode_raises_where_no_warning_filter_can_let_it_pass() -> None:
    import warnings

    from pytest_kernelprof.errors import UndecodedKernelWarning
    from pytest_kernelprof.model.unknowns import decode_strictness, warn_undecided

    kernels = [parse_kernel_name(NO_NAME)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the suite's filterwarnings = error would raise it too
        with decode_strictness(True):
            with pytest.raises(UndecodedKernelWarning, match="may not hold") as raised:
                warn_undecided("count(kind='gemm')", kernels)
            # Raised, it says so first, and not that it would be an error (a trial's confusion).
            message = str(raised.value)
            assert message.startswith("failed under --kernelprof-strict-decode: count(kind='gemm') may not hold: ")
            assert "(an error under --kernelprof-strict-decode)" not in message
            with decode_strictness(False):
                warn_undecided("count(kind='gemm')", kernels)  # an inner session's own strictness
            with pytest.raises(UndecodedKernelWarning):
                warn_undecided("count(kind='gemm')", kernels)  # and the outer one's back after it
        warn_undecided("count(kind='gemm')", kernels)
    with pytest.warns(UndecodedKernelWarning):
        warn_undecided("count(kind='gemm')", kernels)


def test_the_warning_says_what_each_taught_value_may_be() -> None:
    kernels = [KernelName("my_norm_kernel", "other", "unknown"), KernelName("fast_gemm", "gemm", "x")]
    with pytest.warns(UndecodedKernelWarning) as caught:
        warn_undecided("count(kind='gemm')", kernels)
    text = str(caught[0].message)
    values = next(line.strip() for line in text.splitlines() if line.strip().startswith("(where "))
    assert "kind is one of gemm, convolution, pointwise" in values
    assert "template" not in values  # a query's word, no kernel's kind
    assert "family a name of your choosing" in values
    assert "dtype is one of fp64, fp32, tf32, bf16" in values
    assert "Inductor's kernels" not in text


def test_an_inductor_kernel_of_unknown_dtype_points_at_live_profiles() -> None:
    kernels = [KernelName("triton_poi_fused_gelu_mul_0", "pointwise", "inductor")]
    with pytest.warns(UndecodedKernelWarning) as caught:
        warn_undecided("count(dtype='bf16')", kernels)
    text = str(caught[0].message)
    # No dtype taught by name (a trial): it would pin the dtype, and the same name recompiled for
    # fp32 would pass a "no fp32 kernel" question; a trace the plugin records has it.
    assert "dtype=..." not in text
    assert "Teach the decoder" not in text
    assert "teaching them a dtype by name is no remedy" in text
    assert "reads their dtype from Inductor's compiled signatures when it profiles live" in text
    assert "export_trace(path), --kernelprof-trace-dir" in text
    # A kernel of another family among them keeps the lines that teach it.
    other = [*kernels, KernelName("my_kernel", "pointwise", "acme")]
    with pytest.warns(UndecodedKernelWarning) as caught:
        warn_undecided("count(dtype='bf16')", other)
    assert "my_kernel: dtype=..." in str(caught[0].message)


def test_a_placed_kernel_of_unknown_dtype_is_told_by_what_is_known(trace: Callable[[str], Path]) -> None:
    from pytest_kernelprof import load_trace

    # A trace from before Inductor's dtypes were read: its Triton kernel is placed, only its
    # dtype is unknown, and the warning says which is which.
    prof = load_trace(trace("geglu_compiled"))
    with pytest.warns(UndecodedKernelWarning) as caught:
        prof.kernels.count(kind="pointwise", dtype="bf16")
    lines = str(caught[0].message).splitlines()
    assert lines[0] == (
        "count(kind='pointwise', dtype='bf16') may not hold: 1 kernel of known kind but unknown dtype could change it:"
    )
    assert lines[1] == (
        "  triton_poi_fused__unsafe_view_gelu_mul_0  (pointwise/inductor, dtype unknown, "
        "launched by Torch-Compiled Region: 2/0)"
    )
    assert lines[2].startswith("Inductor's kernels: the plugin reads their dtype")
    assert "undecoded" not in str(caught[0].message).lower()


def test_an_unplaced_kernel_tells_its_family_where_known() -> None:
    ext = parse_kernel_name("void at::native::my_new_kernel<float>(float*)")
    assert ext.unplaced
    with pytest.warns(UndecodedKernelWarning, match=r"my_new_kernel<float>  \(aten, kind unknown\)"):
        warn_undecided("count(kind='gemm')", [ext])
