"""The decoder's evidence order: user, name, template, op, op-inputs; and what users teach."""

from __future__ import annotations

import pytest

from pytest_kernelprof.decode import (
    BUILT_IN,
    DTYPES,
    Decoder,
    Evidence,
    KernelName,
    TeachingError,
    dtype_of_inputs,
    kind_of_op,
    parse_kernel_name,
    parse_teachings,
)

NO_NAME = "mystery_kernel_v2"  # no rule knows it: whatever placed it was not its name


def test_an_unknown_name_is_unplaced_with_no_evidence() -> None:
    decoded = parse_kernel_name(NO_NAME)
    assert (decoded.kind, decoded.family, decoded.dtype) == ("other", "unknown", None)
    assert decoded.unplaced
    assert decoded.evidence == Evidence()


def test_a_catch_all_rule_gives_the_family_but_does_not_place_the_kernel() -> None:
    decoded = parse_kernel_name("void at::native::(anonymous namespace)::some_new_kernel<float>(float*)")
    assert (decoded.kind, decoded.family) == ("other", "aten")
    assert decoded.unplaced
    assert decoded.evidence.family == "name"


@pytest.mark.parametrize(
    ("arguments", "dtype"),
    [
        ("<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int)", "fp32"),
        ("<c10::BFloat16, 4>(c10::BFloat16*)", "bf16"),
        ("<__nv_bfloat16>(int)", "bf16"),
        ("<c10::Half>(int)", "fp16"),
        ("<__half, float>(int)", "fp16"),
        ("<__nv_fp8_e4m3, float>(int)", "fp8"),
        ("<c10::Float8_e5m2>(int)", "fp8"),
        ("<double>(double*)", "fp64"),
        ("<c10::complex<float> >(int)", "complex64"),
        # cuBLAS's data type is its tensor argument's, not the leading compute type
        (
            "<float, 128, 0, cublasDotParams<cublasGemvTensor<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<float> > >",
            "bf16",
        ),
        # an integer type as a template's first argument (integer types elsewhere are
        # indices and sizes: the parameters, later arguments, values such as (int)32)
        ("<long, int>(long const*, int)", "int64"),
        ("<int>(int, int*)", "int32"),
        ("<4, at::native::FillFunctor<unsigned char>, std::array<char*, 1ul> >(int)", "uint8"),
        ("<4, at::native::BinaryFunctor<bool, bool, bool, at::native::MulFunctor<bool> > >(int)", "bool"),
        ("<signed char, 4>(int)", "int8"),
        ("<unsigned int>(int)", "uint32"),
        ("<unsigned long>(int)", "uint64"),
        ("<at::native::ReduceOp<float, at::native::MeanOps<float>, unsigned int, float, 4> >(int)", "fp32"),
        ("<(int)32, (bool)0>(long, int)", None),
        ("<128, 4, OffsetCalculator<3, unsigned int, false> >(int)", None),
    ],
)
def test_template_arguments_give_the_dtype(arguments: str, dtype: str | None) -> None:
    decoded = parse_kernel_name(f"void {NO_NAME}{arguments}")
    assert decoded.dtype == dtype
    assert decoded.evidence.dtype == ("template" if dtype else None)
    assert dtype is None or dtype in DTYPES


@pytest.mark.parametrize(
    "name",
    [
        # arange's index type, the random generator's bits, CUB's tuning type, a divisor's type
        "void (anonymous namespace)::elementwise_kernel_with_index<int, at::native::arange_cuda_out(c10::Scalar "
        "const&, c10::Scalar const&, c10::Scalar const&, at::Tensor&)::{lambda()#1}::operator()() const::{lambda("
        "long)#1}>(int, at::native::arange_cuda_out(c10::Scalar const&)::{lambda(long)#1})",
        "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<unsigned int, 4, "
        "at::native::templates::cuda::random_from_to_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, "
        "unsigned long, long, at::CUDAGeneratorImpl*)::{lambda()#1}>(long, at::PhiloxCudaState)",
        "void at_cuda_detail::cub::detail::reduce::DeviceReduceSingleTileKernel<at_cuda_detail::cub::detail::reduce::"
        "policy_hub<int, unsigned long long, cuda::std::__4::plus<void> >::Policy1000, int*, int*, int>(int*, int*)",
        "void at::native::(anonymous namespace)::fill_index_and_segment_kernel(int2*, int, "
        "at::cuda::detail::IntDivider<unsigned int>)",
        # an index kind: its integer types are the indices
        "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)",
    ],
)
def test_integer_types_that_are_not_the_data_give_no_dtype(name: str) -> None:
    assert parse_kernel_name(name).dtype is None


def test_integer_template_types_come_after_the_ops_inputs() -> None:
    name = "void cusolverDnXfill_kernel<int>(cublasFillMode_t, long, long, int*, long, int)"  # linalg's info array
    assert (parse_kernel_name(name).dtype, parse_kernel_name(name).evidence.dtype) == ("int32", "template")
    decoded = BUILT_IN.decode(name, "aten::linalg_eig", ("float",))
    assert (decoded.dtype, decoded.evidence.dtype) == ("fp32", "op-inputs")
    reduce_long = (
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<long, at::native::func_wrapper_t<long, "
        "at::native::MaxNanFunctor<long> >, unsigned int, long, 4, 4> >(at::native::ReduceOp<long, "
        "at::native::func_wrapper_t<long, at::native::MaxNanFunctor<long> >, unsigned int, long, 4, 4>)"
    )
    assert BUILT_IN.decode(reduce_long, "aten::max", ("long int",)).dtype == "int64"
    assert parse_kernel_name("void cusparse::csr_partition_kernel<long, long>(long const*, long)").dtype == "int64"


def test_a_dtype_in_the_head_is_name_evidence() -> None:
    decoded = parse_kernel_name("nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN")
    assert decoded.evidence == Evidence(kind="name", family="name", dtype="name", layout="name", fused_ops="name")
    assert decoded.evidence.inferred() == ()


FP32_GEMM = "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas"


@pytest.mark.parametrize("op", ["aten::addmm", "aten::_addmm_activation"])
def test_the_gemm_of_addmm_does_its_bias_add(op: str) -> None:
    # An fp32 nn.Linear's GEMM names no epilogue: cuBLAS adds the bias with beta=1 on an
    # output filled with it. Read from the op, and said so.
    decoded = BUILT_IN.decode(FP32_GEMM, op)
    assert (decoded.kind, decoded.fused_ops) == ("gemm", ("bias",))
    assert decoded.evidence.fused_ops == "op"
    assert "fused_ops" in decoded.evidence.inferred()
    assert "fused_ops=op" in repr(decoded.evidence)
    assert ("fused_ops", "op") in decoded.evidence.facts()
    # A kernel the op placed as its GEMM too.
    assert BUILT_IN.decode(NO_NAME, op).fused_ops == ("bias",)


@pytest.mark.parametrize("op", ["aten::mm", "aten::matmul", "aten::bmm", "aten::addmm_", None])
def test_a_gemm_of_no_bias_op_gets_no_bias(op: str | None) -> None:
    decoded = BUILT_IN.decode(FP32_GEMM, op)
    assert (decoded.fused_ops, decoded.evidence.fused_ops) == ((), None)


def test_an_epilogue_the_name_tells_wins_over_the_op() -> None:
    decoded = BUILT_IN.decode("nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT", "aten::addmm")
    assert (decoded.fused_ops, decoded.evidence.fused_ops) == (("bias",), "name")
    gelu = BUILT_IN.decode("cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_nn_align8", "aten::addmm")
    assert (gelu.fused_ops, gelu.evidence.fused_ops) == (("relu",), "name")
    # cuBLAS's helpers under addmm are no GEMMs: no bias of theirs.
    scal = BUILT_IN.decode(
        "void scal_kernel<float, float, 1, true, 6, 5, 5, 3>(cublasScalParamsInternal<float, float>)", "aten::addmm"
    )
    assert scal.fused_ops == ()


@pytest.mark.parametrize(
    ("op", "kind"),
    [
        ("aten::mm", "gemm"),
        ("aten::addmm", "gemm"),
        ("aten::bmm", "gemm"),
        ("aten::baddbmm", "gemm"),
        ("aten::_scaled_mm", "gemm"),
        ("aten::addmv", "gemm"),
        ("aten::dot", "gemm"),
        ("aten::_cudnn_rnn", "rnn"),
        ("aten::_fft_r2c", "fft"),
        ("aten::_fft_c2c", "fft"),
        ("aten::_linalg_svd", "linalg"),
        ("aten::linalg_eigh", "linalg"),
        ("aten::_linalg_eigh", "linalg"),
        ("aten::cudnn_convolution", "convolution"),
        ("aten::convolution_backward", "convolution"),
        ("aten::normal_", "random"),
        ("aten::bernoulli_", "random"),
        ("aten::randperm", "random"),
        ("aten::add", None),
        ("aten::copy_", None),
        ("LigerGELUMulFunction", None),
        (None, None),
    ],
)
def test_the_launching_op_gives_the_family_of_work(op: str | None, kind: str | None) -> None:
    assert kind_of_op(op) == kind
    decoded = BUILT_IN.decode(NO_NAME, op)
    assert decoded.kind == (kind or "other")
    assert decoded.evidence.kind == ("op" if kind else None)
    assert decoded.unplaced == (kind is None)


def test_the_op_never_overrides_what_the_name_says() -> None:
    # cuBLAS's beta scaling runs under aten::addmm but is no GEMM: nn.Linear stays one GEMM.
    name = "void scal_kernel<float, float, 1, true, 6, 5, 5, 3>(cublasScalParamsInternal<float, float>)"
    decoded = BUILT_IN.decode(name, "aten::addmm")
    assert (decoded.kind, decoded.part_of, decoded.evidence.kind) == ("pointwise", "gemm", "name")


def test_op_input_dtypes_come_last() -> None:
    inputs = ("c10::BFloat16", "c10::BFloat16", "", "Scalar")
    decoded = BUILT_IN.decode(NO_NAME, "aten::mm", inputs)
    assert (decoded.kind, decoded.dtype) == ("gemm", "bf16")
    assert decoded.evidence == Evidence(kind="op", dtype="op-inputs")
    # a dtype the name or template gave wins
    named = BUILT_IN.decode("nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN", "aten::addmm", ("float", "float"))
    assert (named.dtype, named.evidence.dtype) == ("bf16", "name")


@pytest.mark.parametrize(
    ("types", "dtype"),
    [
        (("long int", "c10::Half"), "fp16"),
        (("bool", "float"), "fp32"),
        (("c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float"), "fp8"),
        (("long int", "int", ""), None),
        ((), None),
    ],
)
def test_dtype_of_inputs_skips_indices_and_flags(types: tuple[str, ...], dtype: str | None) -> None:
    assert dtype_of_inputs(types) == dtype


def test_taught_facts_come_first_and_say_so() -> None:
    decoder = BUILT_IN.teach("flash_fwd_*", kind="attention", family="flash-attn", dtype="bf16")
    decoded = decoder.decode("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4> >(Flash_fwd_params)")
    assert (decoded.kind, decoded.family, decoded.dtype) == ("attention", "flash-attn", "bf16")
    assert decoded.evidence == Evidence(kind="user", family="user", dtype="user")
    # the built-in decoder is unchanged: teaching returns a new decoder
    assert BUILT_IN.taught == ()
    assert BUILT_IN.decode("void flash_fwd_kernel<x>(y)").family == "flash"


def test_a_taught_rule_overrides_the_built_in_table_and_keeps_what_it_does_not_say() -> None:
    name = "nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN"
    decoded = BUILT_IN.teach("nvjet_*", family="cublaslt").decode(name)
    assert (decoded.kind, decoded.family, decoded.layout) == ("gemm", "cublaslt", "tn")
    assert decoded.evidence == Evidence(kind="name", family="user", dtype="name", layout="name", fused_ops="name")


def test_earlier_taught_lines_win_and_globs_match_without_void() -> None:
    decoder = Decoder().teach_lines(
        ["# extension kernels", "", "my_ext::*: kind=reduction family=my-ext", "my_*: kind=pointwise"], "pytest.ini"
    )
    assert decoder.decode("void my_ext::norm<float>(float*)").kind == "reduction"
    assert decoder.decode("my_scale(float*)").kind == "pointwise"
    assert "my-ext" in decoder.families()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("flash_fwd_*", "write 'GLOB: field=value"),
        ("flash_fwd_*: kind=attn", "unknown kind 'attn'; one of: gemm"),
        ("flash_fwd_*: dtype=float", "unknown dtype 'float'"),
        ("flash_fwd_*: colour=red", "unknown field 'colour'"),
        ("flash_fwd_*: kind=gemm kind=attention", "kind= given twice"),
        ("flash_fwd_*: family=flash/attn", "family 'flash/attn' is not a name"),
        ('"unterminated: kind=gemm', "the glob '\"unterminated' has an unbalanced double quote"),
    ],
)
def test_bad_taught_lines_say_which_line_and_what_to_write(line: str, message: str) -> None:
    with pytest.raises(TeachingError, match="^pytest.ini, line 2: ") as failure:
        parse_teachings(["# ok", line], "pytest.ini")
    assert message in str(failure.value)


def test_a_glob_in_double_quotes_is_the_glob_inside_them() -> None:
    (taught,) = parse_teachings(['"flash_fwd_*": kind=attention'], "pytest.ini")
    assert taught.pattern == "flash_fwd_*"


def test_teaching_nothing_is_an_error() -> None:
    with pytest.raises(TeachingError, match="teaches nothing"):
        BUILT_IN.teach("x*")


def test_evidence_does_not_change_equality() -> None:
    plain = KernelName("k", "gemm", "cublas")
    assert plain == KernelName("k", "gemm", "cublas", evidence=Evidence(kind="user"))
    assert not plain.unplaced


def test_every_matching_taught_rule_gives_the_facts_earlier_ones_did_not() -> None:
    decoder = Decoder().teach_lines(
        ["_geglu*: kind=pointwise family=liger", "_geglu_tanh_*: dtype=bf16 kind=gemm"], "ini"
    )
    decoded = decoder.decode("_geglu_tanh_forward_kernel")
    assert (decoded.kind, decoded.family, decoded.dtype) == ("pointwise", "liger", "bf16")
    chained = Decoder().teach("k*", kind="attention", dtype="bf16").teach("k*", kind="pointwise").decode("k1")
    assert (chained.kind, chained.dtype) == ("pointwise", "bf16")


def test_teach_lines_takes_a_list_not_one_string() -> None:
    with pytest.raises(TypeError, match="a list of 'GLOB: field=value ...' strings, got one str"):
        Decoder().teach_lines("x: kind=gemm", "src")


def test_cudnn_sdpa_f16_names_no_dtype_its_inputs_do() -> None:
    # The same name ran for bf16 and fp16 inputs (tests/data/zoo): "f16" is any 16-bit type.
    name = "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0"
    assert parse_kernel_name(name).dtype is None
    on_bf16 = BUILT_IN.decode(name, "aten::_cudnn_attention_forward", ("c10::BFloat16",) * 3)
    assert (on_bf16.dtype, on_bf16.evidence.dtype) == ("bf16", "op-inputs")


def test_a_mangled_fp16_cudnn_convolution_is_fp16_not_int8() -> None:
    name = "_ZN17cutlass__5x_cudnn6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS_6half_tELi8ENS_5ArrayIfLi4ELb1EEEEEvNT_6ParamsE"
    assert (parse_kernel_name(name).kind, parse_kernel_name(name).dtype) == ("convolution", "fp16")


def test_a_name_copied_from_a_table_teaches_its_kernel() -> None:
    # The glob is matched against the name as every output shows it too (trial report A).
    name = (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >"
        "(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)"
    )
    shown = "at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, array<char*, 3ul> >"
    assert BUILT_IN.teach(shown, kind="attention").decode(name).kind == "attention"
    assert BUILT_IN.teach(shown.replace("add", "mul"), kind="attention").decode(name).kind == "pointwise"


def test_template_is_a_query_word_no_rule_can_teach() -> None:
    # A trial taught kind=template: the kernels' kind read "template", yet
    # count(kind="template") asks for KernelName.template and counted none of them.
    with pytest.raises(TeachingError, match=r"^teach\(\): kind=template cannot be taught: .* e\.g\. kind=gemm$"):
        Decoder().teach("acme_*", kind="template")
    with pytest.raises(TeachingError, match=r"^--kernels, line 1: part_of=template cannot be taught"):
        parse_teachings(["acme_*: part_of=template"], "--kernels")
    with pytest.raises(TeachingError) as failure:
        parse_teachings(["acme_*: kind=templat"], "--kernels")
    listed = str(failure.value).split("one of: ")[1].split(", ")
    assert "template" not in listed
    assert "gemm" in listed
    assert "persistent_reduction" in listed


def test_a_reduction_query_answers_for_a_persistent_reduction() -> None:
    persistent = KernelName(name="triton_per_fused_0", kind="persistent_reduction", family="inductor")
    assert persistent.is_kind("reduction")
    assert persistent.is_kind("persistent_reduction")
    assert not KernelName(name="r", kind="reduction", family="aten").is_kind("persistent_reduction")
    assert not persistent.is_kind("pointwise")


THRESHOLD = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, "
    "at::native::(anonymous namespace)::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)"
    "::{lambda(float, float)#1}>, std::array<char*, 3ul> >(int, at::native::BinaryFunctor<float, float, float, "
    "at::native::(anonymous namespace)::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)"
    "::{lambda(float, float)#1}>, std::array<char*, 3ul>)"
)
CLAMP = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar("
    "at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() "
    "const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, "
    "at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
    "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::"
    "{lambda(float)#1}, std::array<char*, 2ul>)"
)
MSE = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::mse_kernel_cuda(at::TensorIteratorBase&)::"
    "{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float, float)#1}, "
    "std::array<char*, 3ul> >(int, at::native::mse_kernel_cuda(at::TensorIteratorBase&)::{lambda()#1}::operator()() "
    "const::{lambda()#2}::operator()() const::{lambda(float, float)#1}, std::array<char*, 3ul>)"
)
ALL = (
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<bool, at::native::func_wrapper_t<bool, "
    "at::native::and_kernel_cuda(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#12}::operator()() "
    "const::{lambda(bool, bool)#1}>, unsigned int, bool, 4, 4> >(at::native::ReduceOp<bool, "
    "at::native::func_wrapper_t<bool, at::native::and_kernel_cuda(at::TensorIterator&)::{lambda()#1}::operator()() "
    "const::{lambda()#12}::operator()() const::{lambda(bool, bool)#1}>, unsigned int, bool, 4, 4>)"
)


@pytest.mark.parametrize(
    ("name", "op", "fused_ops", "source"),
    [
        # A functor that names one op: that op (ReLU's backward runs the threshold functor).
        (THRESHOLD, "aten::threshold_backward", ("threshold",), "name"),
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<float>>()",
            "aten::add",
            ("add",),
            "name",
        ),
        # One that names none (clamp, clamp_min and clamp_max share launch_clamp_scalar): the op.
        (CLAMP, "aten::clamp_min", ("clamp_min",), "op"),
        (CLAMP, "aten::clamp_min_", ("clamp_min",), "op"),  # in place: what it computes
        (CLAMP, "aten::clamp", ("clamp",), "op"),
        (MSE, "aten::mse_loss", ("mse_loss",), "op"),
        (ALL, "aten::all", ("all",), "op"),
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::and_functor>()",
            "aten::__and__",
            ("__and__",),
            "op",
        ),
        # No ATen op launched it: nothing said.
        (CLAMP, None, (), None),
        (CLAMP, "LigerGELUMulFunction", (), None),
    ],
)
def test_an_aten_kernel_computes_its_functors_op_else_its_launching_ops(
    name: str, op: str | None, fused_ops: tuple[str, ...], source: str | None
) -> None:
    decoded = BUILT_IN.decode(name, op)
    assert decoded.family == "aten"
    assert (decoded.fused_ops, decoded.evidence.fused_ops) == (fused_ops, source)


@pytest.mark.parametrize(
    ("name", "op"),
    [
        # Only ATen's elementwise, reduction and loss kernels: not its indexing, not cuDNN, not Triton.
        (
            "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)",
            "aten::gather",
        ),
        ("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>()", "aten::cudnn_batch_norm"),
        ("_geglu_tanh_forward_kernel", "aten::mul"),
        ("triton_poi_fused_view_0", "aten::mul"),
    ],
)
def test_other_kernels_take_no_fused_ops_from_their_op(name: str, op: str) -> None:
    assert BUILT_IN.decode(name, op).fused_ops == ()
