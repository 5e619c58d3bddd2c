"""parse_kernel_name on a corpus of real kernel names from H100/H200/A100 profiles and libraries."""

from __future__ import annotations

import pytest

from pytest_kernelprof import KINDS, parse_kernel_name

# (name, kind, family, layout, dtype, fused_ops)
CORPUS = [
    # cuBLASLt JIT kernels on Hopper (H100/H200, torch 2.11 + CUDA 13)
    ("nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN", "gemm", "nvjet", "tn", "bf16", ("bias",)),
    ("nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT", "gemm", "nvjet", "tn", "bf16", ("bias",)),
    ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", "gemm", "nvjet", "tn", "bf16", ()),
    ("nvjet_sm90_tst_128x160_64x5_4x1_v_bz_NTT", "gemm", "nvjet", "nt", "bf16", ()),
    ("nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_NNT", "gemm", "nvjet", "nn", "bf16", ("bias",)),
    ("nvjet_hsh_128x256_64x4_1x2_h_bz_coopA_NNT", "gemm", "nvjet", "nn", "fp16", ()),
    ("nvjet_sss_64x64_64x8_1x1_v_bz_TNT", "gemm", "nvjet", "tn", "fp32", ()),
    # cuBLAS xmma
    (
        "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
        "gemm",
        "cublas",
        "tn",
        "fp32",
        (),
    ),
    (
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        "gemm",
        "cublas",
        "tn",
        "bf16",
        (),
    ),
    (
        "sm80_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel",
        "gemm",
        "cublas",
        "nn",
        "bf16",
        (),
    ),
    # cuBLAS per-architecture kernels (A100, V100, T4)
    ("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn", "gemm", "cublas", "tn", "bf16", ()),
    ("ampere_fp16_s16816gemm_fp16_64x64_ldg8_f2f_stages_64x5_nt", "gemm", "cublas", "nt", "fp16", ()),
    ("ampere_sgemm_128x64_nn", "gemm", "cublas", "nn", "fp32", ()),
    ("volta_sgemm_128x64_tn", "gemm", "cublas", "tn", "fp32", ()),
    ("volta_h884gemm_64x64_ldg8_nn", "gemm", "cublas", "nn", "fp16", ()),
    ("turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_tn", "gemm", "cublas", "tn", "fp16", ()),
    # CUTLASS
    ("cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x1_tn_align8", "gemm", "cutlass", "tn", "bf16", ()),
    ("cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_nn_align8", "gemm", "cutlass", "nn", "bf16", ("relu",)),
    (
        "cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_1x2x1_0_tnn_align8_warpspecialized_cooperative_epi_tma",
        "gemm",
        "cutlass",
        "tn",
        "bf16",
        (),
    ),
    (
        "void cutlass::Kernel2<cutlass_80_wmma_tensorop_s161616gemm_f16_16x16_128x2_tn_align8>"
        "(cutlass_80_wmma_tensorop_s161616gemm_f16_16x16_128x2_tn_align8::Params)",
        "gemm",
        "cutlass",
        "tn",
        "fp16",
        (),
    ),
    # cuBLAS gemv, small-GEMM and split-K helpers
    (
        "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, "
        "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >"
        "(cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>, float, float)",
        "gemm",
        "cublas",
        None,
        "fp32",
        (),
    ),
    (
        "void gemvx::kernel<int, int, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, false, true, true, false, 7, false, "
        "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float> >",
        "gemm",
        "cublas",
        None,
        "bf16",
        (),
    ),
    (
        "void gemmSN_TN_kernel<float, 128, 16, 2, 4, 4, 4, true, cublasGemvTensorStridedBatched<float const>, "
        "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float> >(cublasGemmSmallNParams<float>)",
        "gemm",
        "cublas",
        "tn",
        "fp32",
        (),
    ),
    (
        "void gemmk1_kernel<int, float, 256, 5, false, false, false, false, cublasGemvTensorStridedBatched<float const>, "
        "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float, 0>(cublasGemmk1Params<float>)",
        "gemm",
        "cublas",
        None,
        "fp32",
        (),
    ),
    (
        "void splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, true, false, false>"
        "(cublasSplitKParams<float>, float const*, __nv_bfloat16 const*, __nv_bfloat16*, float const*, long, float*, int*)",
        "reduction",
        "cublas",
        None,
        "fp32",
        (),
    ),
    (
        "void cublasLt::splitKreduce_kernel<32, 16, int, __nv_bfloat16, __nv_bfloat16, float>(...)",
        "reduction",
        "cublas",
        None,
        "bf16",
        (),
    ),
    # Inductor's Triton kernels
    ("triton_poi_fused__unsafe_view_gelu_mul_0", "pointwise", "inductor", None, None, ("_unsafe_view", "gelu", "mul")),
    (
        "triton_poi_fused__unsafe_view_gelu_gelu_backward_mul_view_0",
        "pointwise",
        "inductor",
        None,
        None,
        ("_unsafe_view", "gelu", "gelu_backward", "mul", "view"),
    ),
    ("triton_poi_fused_add_view_1", "pointwise", "inductor", None, None, ("add", "view")),
    (
        "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0",
        "reduction",
        "inductor",
        None,
        None,
        ("_to_copy", "add", "mean", "mul", "pow", "rsqrt"),
    ),
    ("triton_per_fused_native_layer_norm_0", "persistent_reduction", "inductor", None, None, ("native_layer_norm",)),
    (
        "triton_red_fused_native_layer_norm_native_layer_norm_backward_3",
        "reduction",
        "inductor",
        None,
        None,
        ("native_layer_norm", "native_layer_norm_backward"),
    ),
    ("triton_per_fused__log_softmax_0", "persistent_reduction", "inductor", None, None, ("_log_softmax",)),
    ("triton_tem_fused_mm_0", "template", "inductor", None, None, ("mm",)),
    ("triton_poi_fused_0", "pointwise", "inductor", None, None, ()),
    # ATen native kernels
    (
        "void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
        "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::"
        "{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
        "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, "
        "std::array<char*, 2ul>)",
        "pointwise",
        "aten",
        None,
        "bf16",
        ("gelu",),
    ),
    (
        "void at::native::vectorized_elementwise_kernel<8, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
        "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, "
        "at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, "
        "std::array<char*, 3ul>)",
        "pointwise",
        "aten",
        None,
        "bf16",
        ("mul",),
    ),
    (
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> >"
        "(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int)#1}>(int, "
        "at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, "
        "at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int)#1})",
        "pointwise",
        "aten",
        None,
        "bf16",
        ("add",),
    ),
    (
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
        "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
        "unsigned int, float, 4, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
        "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
        "unsigned int, float, 4, 4>)",
        "reduction",
        "aten",
        None,
        "fp32",
        ("sum",),
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >"
        "(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
        "pointwise",
        "aten",
        None,
        "fp32",
        ("fill",),
    ),
    (
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, "
        "float const*, float const*, float*, float*, float*)",
        "reduction",
        "aten",
        None,
        "fp32",
        ("layer_norm",),
    ),
    (
        "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*, float const*, "
        "int, int, int, bool const*, int, bool)",
        "reduction",
        "aten",
        None,
        "fp32",
        ("softmax",),
    ),
    (
        "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, "
        "unsigned int, 2, 64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*, "
        "at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, "
        "unsigned int, 64, 64>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
        "pointwise",
        "aten",
        None,
        None,
        ("copy",),
    ),
    (
        "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, "
        "at::native::templates::cuda::normal_and_transform<float, float, at::CUDAGeneratorImpl*>(...)",
        "pointwise",
        "aten",
        None,
        "fp32",
        ("random",),
    ),
    (
        "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)"
        "::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>, "
        "4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, "
        "at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(...)",
        "pointwise",
        "aten",
        None,
        "fp32",
        ("copy",),
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::silu_kernel"
        "(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::"
        "{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(...)",
        "pointwise",
        "aten",
        None,
        "bf16",
        ("silu",),
    ),
    (
        "void at::native::multi_tensor_apply_kernel<at::native::TensorListMetadata<2>, "
        "at::native::(anonymous namespace)::CopyFunctor<float, float, 2, 1, 1>, at::native::Copy<float, float> >(...)",
        "pointwise",
        "aten",
        None,
        "fp32",
        (),
    ),
    # NCCL
    (
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "communication",
        "nccl",
        None,
        "bf16",
        (),
    ),
    (
        "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "communication",
        "nccl",
        None,
        "fp32",
        (),
    ),
    (
        "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
        "communication",
        "nccl",
        None,
        "int8",
        (),
    ),
    ("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "communication", "nccl", None, None, ()),
    # Attention and convolution
    (
        "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, "
        "Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, false, true, false, false>"
        "(pytorch_flash::Flash_fwd_params)",
        "attention",
        "flash",
        None,
        "bf16",
        (),
    ),
    (
        "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, "
        "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
        "attention",
        "mem_efficient",
        None,
        "bf16",
        (),
    ),
    (
        "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0",
        "attention",
        "cudnn",
        None,
        "fp16",
        (),
    ),
    (
        "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_g1"
        "_execute_segment_k_off_kernel__5x_cudnn",
        "convolution",
        "cudnn",
        None,
        "bf16",
        (),
    ),
    # User Triton kernels carry no marker in their names
    ("_geglu_tanh_forward_kernel", "other", "unknown", None, None, ()),
    ("_geglu_tanh_backward_kernel", "other", "unknown", None, None, ()),
]


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 40


@pytest.mark.parametrize(("name", "kind", "family", "layout", "dtype", "fused_ops"), CORPUS, ids=lambda v: str(v)[:48])
def test_decodes_real_kernel_names(
    name: str, kind: str, family: str, layout: str | None, dtype: str | None, fused_ops: tuple[str, ...]
) -> None:
    decoded = parse_kernel_name(name)
    assert (decoded.kind, decoded.family, decoded.layout, decoded.dtype, decoded.fused_ops) == (
        kind,
        family,
        layout,
        dtype,
        fused_ops,
    )
    assert decoded.kind in KINDS


@pytest.mark.parametrize(
    ("name", "collective"),
    [
        ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "AllReduce"),
        ("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "ReduceScatter"),
        ("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", "AllGather"),
        ("ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "Broadcast"),
    ],
)
def test_nccl_collective(name: str, collective: str) -> None:
    assert parse_kernel_name(name).collective == collective


@pytest.mark.parametrize("name", ["", "x", "kernel", "Memcpy HtoD (Pageable -> Device)", "🙂", "a" * 10_000])
def test_unknown_names_are_other_not_errors(name: str) -> None:
    decoded = parse_kernel_name(name)
    assert decoded.kind in KINDS
    assert decoded.name == name


def test_non_string_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="kernel name"):
        parse_kernel_name(42)  # type: ignore[arg-type]


def test_names_module_does_not_import_torch() -> None:
    import subprocess
    import sys

    import pytest_kernelprof.names

    # Load names.py alone, by path: the package itself imports the profiler.
    code = (
        "import importlib.util, sys; "
        f"spec = importlib.util.spec_from_file_location('names_only', {pytest_kernelprof.names.__file__!r}); "
        "module = sys.modules['names_only'] = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); "
        "assert module.parse_kernel_name('triton_poi_fused_mul_0').kind == 'pointwise'; "
        "assert not [m for m in sys.modules if m.startswith('torch')], 'names.py imported torch'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
