"""parse_kernel_name on a corpus of real kernel names from H100/H200/A100 profiles and libraries."""

from __future__ import annotations

import pytest

from pytest_kernelprof.decode import DTYPES
from pytest_kernelprof.model import KernelList
from pytest_kernelprof.types import KINDS, parse_kernel_name
from tests.helpers import DATA

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
    # fp32 GEMMs of a forgotten fp32 nn.Linear in a bf16 model (H200; the TF32 one with allow_tf32=True)
    (
        "void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>(cutlass_80_simt_sgemm_64x64_8x5_tn_align1::Params)",
        "gemm",
        "cutlass",
        "tn",
        "fp32",
        (),
    ),
    (
        "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>"
        "(cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4::Params)",
        "gemm",
        "cutlass",
        "tn",
        "fp32",
        (),
    ),
    ("cutlass_80_tensorop_f16_s1688gemm_f16_64x64_32x6_tn_align8", "gemm", "cutlass", "tn", "fp16", ()),
    ("sgemm_largek_lds64", "gemm", "cublas", None, "fp32", ()),
    # fp64 q/k/v make SDPA fall back to its math path (H200)
    (
        "sm90_xmma_gemm_f64f64_f64f64_f64_nt_n_tilesize64x64x16_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        "gemm",
        "cublas",
        "nt",
        "fp64",
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
    ("triton_poi_fused__unsafe_view_gelu_mul_0", "pointwise", "inductor", None, None, ("gelu", "mul")),
    (
        "triton_poi_fused__unsafe_view_gelu_gelu_backward_mul_view_0",
        "pointwise",
        "inductor",
        None,
        None,
        ("gelu", "gelu_backward", "mul"),
    ),
    ("triton_poi_fused_add_view_1", "pointwise", "inductor", None, None, ("add",)),
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
    ("triton_tem_fused_mm_0", "gemm", "inductor", None, None, ("mm",)),
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
    # a cast of fixed types is the dtype it writes, which its function's name says (its lambda's
    # argument is what it reads): x.half() and x.to(torch.float8_e4m3fn) of an fp32 x
    (
        "void at::native::vectorized_elementwise_kernel<8, at::native::float16_copy_kernel_cuda("
        "at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul> >(...)",
        "pointwise",
        "aten",
        None,
        "fp16",
        ("copy",),
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::float8_copy_kernel_cuda("
        "at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul> >(...)",
        "pointwise",
        "aten",
        None,
        "fp8",
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
        # "f16" here is any 16-bit type: the same name ran for bf16 inputs (tests/data/zoo)
        "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0",
        "attention",
        "cudnn",
        None,
        None,
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


# Real names from the issue-15 study (H200, torch 2.11 + CUDA 13, triton 3.6): a tiny Llama
# (eager, training with fused/foreach AdamW, AMP with grad clipping, compiled decoder layer),
# the same with Liger-Kernel, ResNet-50 (bf16 NCHW/channels-last, fp32 training), ViT and common
# ops. Long names are cut after 200 characters, "...)" marking the cut. (name, kind, family)
LIBRARY_CORPUS = [
    (
        "void at::native::(anonymous namespace)::conv_depthwise2d_backward_kernel<3, 1, float, "
        "int>(torch::headeronly::detail::GenericPackedTensorAccessor<torch::headeronly::detail::Ten"
        "sorAccessor<c10::ArrayRe...)",
        "convolution",
        "aten",
    ),
    (
        "at::native::internal::(anonymous namespace)::scatter_kernel(long, long const*, long const*, long*)",
        "indexing",
        "aten",
    ),
    (
        "void (anonymous namespace)::indexing_backward_kernel<float, 4>(long const*, long const*, "
        "float const*, float*, long, long, long, long, bool)",
        "indexing",
        "aten",
    ),
    (
        "void at::native::(anonymous namespace)::EmbeddingBag_accGradParametersKernel_max<float, "
        "long>(long const*, float const*, float*, long, long, long, long)",
        "indexing",
        "aten",
    ),
    (
        "void at::native::_scatter_gather_elementwise_kernel<128, 8, "
        "at::native::_cuda_scatter_fill_internal_kernel<at::native::OpaqueType<8>, "
        "long>::operator()<at::native::TensorAssign>(at::TensorIterator&, a...)",
        "indexing",
        "aten",
    ),
    (
        "void at::native::indexFuncLargeIndex<float, long, unsigned int, 2, 2, -2, true, "
        "at::native::(anonymous namespace)::ReduceAdd>(at::cuda::detail::TensorInfo<float, "
        "unsigned int>, at::cuda::detail::Tenso...)",
        "indexing",
        "aten",
    ),
    (
        "void at::native::index_elementwise_kernel<128, 4, at::native::cuda_take_put_kernel<float, "
        "int, at::native::take_kernel(at::TensorIterator&, at::TensorBase "
        "const&)::{lambda()#1}::operator()() const::{l...)",
        "indexing",
        "aten",
    ),
    (
        "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)",
        "indexing",
        "aten",
    ),
    (
        "void at::native::(anonymous namespace)::nll_loss2d_forward_kernel<float, float, "
        "int>(float*, float*, float const*, long const*, float const*, int, int, int, long)",
        "loss",
        "aten",
    ),
    (
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
        "namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous "
        "namespace)::FusedAdamMathFunctor<c10::B...)",
        "optimizer",
        "aten",
    ),
    (
        "void (anonymous namespace)::randperm_handle_duplicate_keys_kernel<int, "
        "at::native::(anonymous namespace)::OpaqueType<8> >(int*, at::native::(anonymous "
        "namespace)::OpaqueType<8>*, int, int, at::PhiloxC...)",
        "pointwise",
        "aten",
    ),
    (
        "void at::cuda::(anonymous namespace)::kernelPointwiseApply2<at::native::templates::cuda::b"
        "ernoulli_tensor_cuda_kernel<float, float>(at::TensorBase const&, at::TensorBase const&, "
        "at::PhiloxCudaState)::...)",
        "pointwise",
        "aten",
    ),
    (
        "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned "
        "int, 1, 4, bool>(at::cuda::detail::TensorInfo<float const, unsigned int>, "
        "at::cuda::detail::TensorInfo<float, un...)",
        "pointwise",
        "aten",
    ),
    ("void at::native::_assert_async_cuda_kernel<bool>(bool const*, at::native::Msg)", "pointwise", "aten"),
    (
        "void at::native::internal::(anonymous namespace)::adjacent_difference_kernel<long "
        "const*>(long, long const*, int*)",
        "pointwise",
        "aten",
    ),
    (
        "void at::native::roll_cuda_kernel<float>(float const*, float*, long, long, long, long, long, long)",
        "pointwise",
        "aten",
    ),
    (
        "void at::native::triu_tril_kernel<bool, int, false, 8, "
        "false>(at::cuda::detail::TensorInfo<bool, int>, at::cuda::detail::TensorInfo<bool const, "
        "int>, long, long, int)",
        "pointwise",
        "aten",
    ),
    (
        "void at::native::(anonymous namespace)::adaptive_average_gradinput_nhwc<int, "
        "float>(float*, float const*, int, int, int, int, int, int, int, int, int, int, int, int)",
        "pooling",
        "aten",
    ),
    (
        "void at::cuda::kernelHistogram1D<float, float, long, 1, 2, -1, "
        "(at::cuda::CUDAHistogramMemoryType)0, at::cuda::CUDA_tensor_histogram<float, float, "
        "false>(at::Tensor, at::Tensor, at::Tensor, long, at::...)",
        "reduction",
        "aten",
    ),
    (
        "void at::native::(anonymous namespace)::ComputeBackwardFusedParamsCUDAKernel<float>(long, "
        "long, long, float const*, float const*, float const*, at::AccumulateType<float, "
        "true>::type const*, at::Accumu...)",
        "reduction",
        "aten",
    ),
    (
        "void at::native::lpnorm_cleanup<float, (at::native::NormType)1, float, true, float>(float "
        "const*, at::native::TensorListAddresses, int)",
        "reduction",
        "aten",
    ),
    (
        "void at::native::(anonymous namespace)::grid_sampler_2d_kernel<float, int>(int, "
        "at::cuda::detail::TensorInfo<float const, int>, at::cuda::detail::TensorInfo<float const, "
        "int>, at::cuda::detail::Tensor...)",
        "resampling",
        "aten",
    ),
    (
        "void at::native::im2col_kernel<float>(long, float const*, long, long, long, long, long, "
        "long, long, long, long, long, long, long, float*)",
        "resampling",
        "aten",
    ),
    (
        "void at::native::tensor_kernel_scan_innermost_dim<float, std::multiplies<float> >(float*, "
        "float const*, unsigned int, unsigned int, unsigned int, float, std::multiplies<float>)",
        "scan",
        "aten",
    ),
    (
        "void at::native::tensor_kernel_scan_innermost_dim_with_indices<float, "
        "std::greater_equal<float> >(float const*, float*, long*, int, int, unsigned int, unsigned "
        "int, float, std::greater_equal<float>)",
        "scan",
        "aten",
    ),
    (
        "at::native::(anonymous namespace)::fill_reverse_indices_kernel(long*, int, "
        "at::cuda::detail::IntDivider<unsigned int>)",
        "sort",
        "aten",
    ),
    ("at::native::mbtopk::computeDigitCumSum(short*, unsigned int*, unsigned int)", "sort", "aten"),
    (
        "void at::native::(anonymous namespace)::gatherKthValue<float, int, "
        "2>(at::cuda::detail::TensorInfo<float const, int>, int, int, int, int, "
        "at::cuda::detail::TensorInfo<float, int>, at::cuda::detail::Te...)",
        "sort",
        "aten",
    ),
    (
        "void at::native::bitonicSortKVInPlace<2, -1, 16, 16, float, long, at::native::GTOp<float, "
        "true>, unsigned int>(at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, "
        "unsigned int, unsigned i...)",
        "sort",
        "aten",
    ),
    (
        "void at::native::mbtopk::computeBlockDigitCounts<float, unsigned int, unsigned int, "
        "1>(at::cuda::detail::TensorInfo<float const, unsigned int>, unsigned int, unsigned int*, "
        "unsigned int, unsigned int,...)",
        "sort",
        "aten",
    ),
    (
        "void at::native::mbtopk::computeBlockwiseKthCounts<unsigned int>(unsigned int*, short*, "
        "unsigned int, unsigned int, unsigned int*)",
        "sort",
        "aten",
    ),
    (
        "void at::native::mbtopk::computeBlockwiseWithinKCounts<unsigned int, float>(unsigned "
        "int*, short*, unsigned int*, unsigned int*, unsigned int, int, bool, unsigned int*, "
        "float*, unsigned int*, unsigned...)",
        "sort",
        "aten",
    ),
    (
        "void at::native::mbtopk::fill<unsigned int, unsigned int>(unsigned int*, unsigned int, unsigned int)",
        "sort",
        "aten",
    ),
    (
        "void at::native::mbtopk::gatherTopK<float, unsigned int, "
        "1>(at::cuda::detail::TensorInfo<float const, unsigned int>, unsigned int, unsigned int, "
        "bool, unsigned int, unsigned int, at::cuda::detail::Ten...)",
        "sort",
        "aten",
    ),
    (
        "void at::native::radixSortKVInPlace<-2, -1, 128, 32, float, long, unsigned "
        "int>(at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, unsigned int, "
        "unsigned int, at::cuda::detail::TensorInf...)",
        "sort",
        "aten",
    ),
    (
        "void at::native::sbtopk::gatherTopK<float, unsigned int, 2, "
        "false>(at::cuda::detail::TensorInfo<float const, unsigned int>, unsigned int, unsigned "
        "int, bool, unsigned int, unsigned int, at::cuda::deta...)",
        "sort",
        "aten",
    ),
    (
        "void at_cuda_detail::cub::detail::reduce::DeviceReduceByKeyKernel<at_cuda_detail::cub::det"
        "ail::rle::encode::policy_hub<long, long>::Policy1000, long const*, long*, "
        "thrust::THRUST_300001_SM_750_800_860...)",
        "reduction",
        "cub",
    ),
    (
        "void at_cuda_detail::cub::detail::reduce::DeviceReduceSingleTileKernel<at_cuda_detail::cub"
        "::detail::reduce::policy_hub<int, unsigned long long, cuda::std::__4::plus<void> "
        ">::Policy1000, thrust::THRUST...)",
        "reduction",
        "cub",
    ),
    (
        "void at_cuda_detail::cub::detail::scan::DeviceCompactInitKernel<at_cuda_detail::cub::Reduc"
        "eByKeyScanTileState<long, int, true>, long*>(at_cuda_detail::cub::ReduceByKeyScanTileState"
        "<long, int, true>, i...)",
        "scan",
        "cub",
    ),
    (
        "void at_cuda_detail::cub::detail::scan::DeviceScanInitKernel<at_cuda_detail::cub::ScanTile"
        "State<float, true> >(at_cuda_detail::cub::ScanTileState<float, true>, int)",
        "scan",
        "cub",
    ),
    (
        "void at_cuda_detail::cub::detail::scan::DeviceScanKernel<at_cuda_detail::cub::detail::scan"
        "::policy_hub<float, float, float, unsigned int, std::plus<float> >::Policy1000, float "
        "const*, float*, at_cuda_...)",
        "scan",
        "cub",
    ),
    (
        "void at_cuda_detail::cub::detail::scan_by_key::DeviceScanByKeyInitKernel<at_cuda_detail::c"
        "ub::ReduceByKeyScanTileState<unsigned int, int, true>, "
        "thrust::THRUST_300001_SM_750_800_860_900_1000_1200_NS::...)",
        "scan",
        "cub",
    ),
    (
        "void at_cuda_detail::cub::detail::scan_by_key::DeviceScanByKeyKernel<at_cuda_detail::cub::"
        "detail::scan_by_key::policy_hub<thrust::THRUST_300001_SM_750_800_860_900_1000_1200_NS::tra"
        "nsform_iterator<at::...)",
        "scan",
        "cub",
    ),
    (
        "void at_cuda_detail::cub::detail::select::DeviceSelectSweepKernel<at_cuda_detail::cub::det"
        "ail::select::policy_hub<long, at_cuda_detail::cub::NullType, int, false, "
        "(at_cuda_detail::cub::SelectImpl)0>::...)",
        "scan",
        "cub",
    ),
    (
        "void at_cuda_detail::cub::detail::unique_by_key::DeviceUniqueByKeySweepKernel<at_cuda_deta"
        "il::cub::detail::unique_by_key::policy_hub<long, int>::Policy1000, long const*, "
        "thrust::THRUST_300001_SM_750_8...)",
        "scan",
        "cub",
    ),
    (
        "void at_cuda_detail::cub::detail::radix_sort::DeviceRadixSortExclusiveSumKernel<at_cuda_de"
        "tail::cub::detail::radix::policy_hub<float, at::cuda::cub::detail::OpaqueType<8>, "
        "unsigned long long>::Policy1...)",
        "sort",
        "cub",
    ),
    (
        "void at_cuda_detail::cub::detail::radix_sort::DeviceRadixSortHistogramKernel<at_cuda_detai"
        "l::cub::detail::radix::policy_hub<float, at::cuda::cub::detail::OpaqueType<8>, unsigned "
        "long long>::Policy1000...)",
        "sort",
        "cub",
    ),
    (
        "void at_cuda_detail::cub::detail::radix_sort::DeviceRadixSortOnesweepKernel<at_cuda_detail"
        "::cub::detail::radix::policy_hub<float, at::cuda::cub::detail::OpaqueType<8>, unsigned "
        "long long>::Policy1000,...)",
        "sort",
        "cub",
    ),
    (
        "void at_cuda_detail::cub::detail::radix_sort::DeviceRadixSortSingleTileKernel<at_cuda_deta"
        "il::cub::detail::radix::policy_hub<int, at::cuda::cub::detail::OpaqueType<8>, unsigned "
        "long long>::Policy1000,...)",
        "sort",
        "cub",
    ),
    (
        "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64_1x4x1_cga1x1x1_kernel0_0",
        "attention",
        "cudnn",
    ),
    (
        "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0",
        "attention",
        "cudnn",
    ),
    (
        "void cudnn::fusion::compute_dot_do_o_specialized<true, 64>(void const*, void const*, "
        "void*, void*, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, "
        "unsigned int, unsigned int, uns...)",
        "attention",
        "cudnn",
    ),
    (
        "void cudnn::fusion::convert_dq_to_16bits<true>(void const*, void*, unsigned int, unsigned "
        "int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, "
        "unsigned int, unsigne...)",
        "attention",
        "cudnn",
    ),
    (
        "void cudnn::fusion::fmha_reduce_head<true>(void const*, void*, unsigned int, unsigned "
        "int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, "
        "unsigned int, unsigned in...)",
        "attention",
        "cudnn",
    ),
    (
        "_ZN17cutlass__5x_cudnn6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock22"
        "ImplicitGemmMultistageINS_4gemm9GemmShapeILi64ELi128ELi16EEENS4_52Conv2dWgradOutputGradien"
        "tTileAccessIteratorO...)",
        "convolution",
        "cudnn",
    ),
    (
        "sm80_xmma_dgrad_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize64x32x64_stage5_w"
        "arpsize2x2x1_g1_tensor16x8x16_execute_kernel__5x_cudnn",
        "convolution",
        "cudnn",
    ),
    (
        "sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize64x32x64_stage5_w"
        "arpsize2x2x1_g1_tensor16x8x16_execute_kernel__5x_cudnn",
        "convolution",
        "cudnn",
    ),
    (
        "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize32x32x8_stage3_warps"
        "ize1x2x1_g1_ffma_aligna4_alignc4_execute_kernel__5x_cudnn",
        "convolution",
        "cudnn",
    ),
    (
        "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize64x32x64_stage5_wa"
        "rpsize2x2x1_g1_tensor16x8x8_alignc4_execute_kernel__5x_cudnn",
        "convolution",
        "cudnn",
    ),
    (
        "sm80_xmma_wgrad_implicit_gemm_indexed_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize32x128x32"
        "_stage4_warpsize1x4x1_g1_tensor16x8x16_t1r1s1_execute_kernel__5x_cudnn",
        "convolution",
        "cudnn",
    ),
    (
        "sm90_xmma_dgrad_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize64x64x64_warpgrou"
        "psize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn",
        "convolution",
        "cudnn",
    ),
    (
        "sm90_xmma_dgrad_implicit_gemm_indexed_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize64x128x64"
        "_warpgroupsize1x1x1_g1_strided_execute_kernel__5x_cudnn",
        "convolution",
        "cudnn",
    ),
    (
        "sm90_xmma_dgrad_implicit_gemm_indexed_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x64x32_w"
        "arpgroupsize1x1x1_g1_strided_execute_kernel__5x_cudnn",
        "convolution",
        "cudnn",
    ),
    (
        "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize64x64x64_warpgrou"
        "psize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn",
        "convolution",
        "cudnn",
    ),
    (
        "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x64x32_warpgroups"
        "ize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn",
        "convolution",
        "cudnn",
    ),
    (
        "sm90_xmma_wgrad_indexed_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x6"
        "4_warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn",
        "convolution",
        "cudnn",
    ),
    (
        "void cudnn::cnn::reduce_wgrad_nchw_helper<float, float>(void*, void const*, float, int, int)",
        "convolution",
        "cudnn",
    ),
    (
        "void cudnn::cnn::wgrad2d_grouped_direct_kernel<false, true, int, float, float, "
        "float>(cudnn::cnn::WgradGroupedDirectParams, float const*, float const*, float*, float, "
        "float)",
        "convolution",
        "cudnn",
    ),
    (
        "void cudnn::cnn::wgrad_alg1_engine<float, float, 128, 5, 5, 3, 3, 3, false, false>(int, "
        "int, int, float const*, int, float*, float const*, kernel_grad_params, unsigned long "
        "long, int, float, float, in...)",
        "convolution",
        "cudnn",
    ),
    (
        "void cudnn::detail::dgrad2d_alg1_1<float, 0, 6, 6, 5, 4, 4, false, true>(int, int, int, "
        "float const*, int, float const*, int, float*, kernel_grad_params, unsigned long long, "
        "int, unsigned long long, i...)",
        "convolution",
        "cudnn",
    ),
    (
        "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float "
        "const*, int, float const*, int, float*, kernel_grad_params, unsigned long long, int, "
        "unsigned long long, int, fl...)",
        "convolution",
        "cudnn",
    ),
    (
        "void cudnn::winograd_nonfused::winogradWgradData4x4<float, "
        "float>(cudnn::winograd_nonfused::WinogradDataParams<float, float>)",
        "convolution",
        "cudnn",
    ),
    (
        "void cudnn::winograd_nonfused::winogradWgradDelta4x4<float, "
        "float>(cudnn::winograd_nonfused::WinogradDeltaParams<float, float>)",
        "convolution",
        "cudnn",
    ),
    (
        "void cudnn::winograd_nonfused::winogradWgradOutput4x4<float, "
        "float>(cudnn::winograd_nonfused::WinogradWgradOutputParams<float, float>)",
        "convolution",
        "cudnn",
    ),
    (
        "void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816dgrad_optimized_bf16_64x128_64x"
        "3_nhwc_align8>(cutlass_tensorop_bf16_s16816dgrad_optimized_bf16_64x128_64x3_nhwc_align8::P"
        "arams)",
        "convolution",
        "cudnn",
    ),
    (
        "void implicit_convolve_sgemm<__nv_bfloat16, __nv_bfloat16, 128, 5, 5, 3, 3, 3, 1, false, "
        "false, true>(int, int, int, __nv_bfloat16 const*, int, __nv_bfloat16*, __nv_bfloat16 "
        "const*, kernel_conv_params...)",
        "convolution",
        "cudnn",
    ),
    (
        "void wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int, int, int, float "
        "const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, "
        "int, int, int, int)",
        "convolution",
        "cudnn",
    ),
    (
        "void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, "
        "false, true, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<floa"
        "t>, __nv_bfloat16 const...)",
        "pointwise",
        "cudnn",
    ),
    (
        "void cudnn::engines_precompiled::nhwcToNchwKernel<__nv_bfloat16, __nv_bfloat16, float, "
        "true, false, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nhwc2nchw_params_t<floa"
        "t>, __nv_bfloat16 const...)",
        "pointwise",
        "cudnn",
    ),
    (
        "void cudnn::engines_precompiled::scalePackedTensor_kernel<float, float>(long, float*, float)",
        "pointwise",
        "cudnn",
    ),
    (
        "void nhwcAddPaddingKernel<__nv_bfloat16, __nv_bfloat16, float, true, "
        "(cudnnKernelDataType_t)0>(int, int, int, int, int, int, int, int, __nv_bfloat16 const*, "
        "__nv_bfloat16*, int, int, int, int, float, ...)",
        "pointwise",
        "cudnn",
    ),
    (
        "void cudnn::batchnorm_bwtr_nhwc_semiPersist<float, float, float, 512, 16, 3, 4, 1, 1, "
        "true, 2>(cudnn::NhwcBatchNormBwdParams<float, float>)",
        "reduction",
        "cudnn",
    ),
    (
        "void cudnn::batchnorm_fwtr_nhwc_semiPersist<float, float, float, 512, 16, 2, 4, 1, 1, "
        "false, false, true, 2>(cudnn::NhwcBatchNormFwdParams<float, float>)",
        "reduction",
        "cudnn",
    ),
    (
        "void cudnn::bn_bw_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_bw_1C11_args<float>)",
        "reduction",
        "cudnn",
    ),
    (
        "void cudnn::bn_fw_inf_1C11_kernel_NCHW<float, float, true, 1>(float, float, "
        "cudnnTensorStruct, float const*, cudnnTensorStruct, float*, cudnnTensorStruct, float "
        "const*, float const*, float const*, flo...)",
        "reduction",
        "cudnn",
    ),
    (
        "void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_fw_tr_1C11_args<float>)",
        "reduction",
        "cudnn",
    ),
    (
        "void cutlass__5x_cudnn::Kernel<cutlass__5x_cudnn::reduction::kernel::ReduceSplitK<cutlass_"
        "_5x_cudnn::MatrixShape<4, 128>, cutlass__5x_cudnn::epilogue::thread::LinearCombination<flo"
        "at, 4, float, float,...)",
        "reduction",
        "cudnn",
    ),
    ("_rms_norm_backward_kernel", "other", "unknown"),
    ("_rms_norm_forward_kernel", "other", "unknown"),
    ("_swiglu_backward_kernel", "other", "unknown"),
    ("_swiglu_forward_kernel", "other", "unknown"),
    ("_triton_rope", "other", "unknown"),
    ("liger_cross_entropy_kernel", "other", "unknown"),
]


# fbgemm_gpu's kernels, as pytorch/FBGEMM's sources name their __global__ functions (no public
# trace of them was found): fbgemm_gpu/src/sparse_ops/sparse_bucketize.cu,
# fbgemm_gpu/src/quantize_ops/quantize_fp8_rowwise.cu, the split_embeddings codegen templates.
FBGEMM_SOURCE_NAMES = [
    ("_bucketize_sparse_features_cuda_kernel1", "sort"),
    ("_block_bucketize_sparse_features_cuda_kernel1", "sort"),
    ("_float_to_FP8rowwise_cuda_kernel", "pointwise"),
    ("split_embedding_codegen_forward_unweighted_kernel", "indexing"),
    ("_permute_2D_indices_weights_kernel", "indexing"),
    # pytorch/FBGEMM fbgemm_gpu/src at 71d6f8b22 (namespace fbgemm_gpu where generic names need it)
    ("void fbgemm_gpu::jagged_jagged_bmm_kernel<float, float>(int, int)", "gemm"),
    ("void fbgemm_gpu::jagged_dense_bmm_kernel<float, float>(int, int)", "gemm"),
    ("void fbgemm_gpu::jagged_softmax_kernel<float, long>(int, int)", "reduction"),
    ("void fbgemm_gpu::jagged_dense_dense_elementwise_jagged_output_opt_gather_kernel_<float, int>(int)", "indexing"),
    ("void fbgemm_gpu::_segment_sum_csr_cuda_kernel<float, long>(int, int)", "reduction"),
    ("void fbgemm_gpu::_batched_complete_cumsum_kernel<long>(long const*, long*)", "scan"),
    ("void fbgemm_gpu::index_select_2d_kernel<float, long, 32>(float const*, long const*)", "indexing"),
    ("void fbgemm_gpu::pack_segments_cuda_kernel<float, long>(float const*, long const*)", "indexing"),
    ("void lru_cache_find_uncached_kernel(long const*, int)", "indexing"),
    ("void fbgemm_gpu::_float_to_fusednbitrowwise_cuda_kernel<float>(int, int, float const*)", "pointwise"),
    ("void fbgemm_gpu::_get_8bit_qparam_cuda_kernel<float>(float const*, int, int)", "reduction"),
    ("void fbgemm_gpu::zipf_kernel(double, long, unsigned long, long*)", "random"),
]

# Kernels as their sources declare them, in the spelling Kineto prints: torchvision's CUDA ops
# (pytorch/vision torchvision/csrc/ops/cuda, namespace vision::ops) and ATen's (aten/src/ATen).
SOURCE_NAMES = [
    (
        "void vision::ops::(anonymous namespace)::nms_kernel_impl<float>(int, double, float const*, unsigned long long*)",
        "sort",
        "torchvision",
    ),
    (
        "void vision::ops::(anonymous namespace)::gather_keep_from_mask(bool*, unsigned long long const*, int)",
        "sort",
        "torchvision",
    ),
    (
        "void vision::ops::(anonymous namespace)::roi_align_forward_kernel_impl<float>(int, float const*)",
        "pooling",
        "torchvision",
    ),
    (
        "void vision::ops::(anonymous namespace)::roi_align_backward_kernel_impl<float>(int, float const*)",
        "pooling",
        "torchvision",
    ),
    (
        "void vision::ops::(anonymous namespace)::roi_pool_forward_kernel_impl<float>(int, float const*)",
        "pooling",
        "torchvision",
    ),
    (
        "void vision::ops::(anonymous namespace)::ps_roi_align_backward_kernel_impl<float>(int, float const*)",
        "pooling",
        "torchvision",
    ),
    (
        "void vision::ops::(anonymous namespace)::ps_roi_pool_forward_kernel_impl<float>(int, float const*)",
        "pooling",
        "torchvision",
    ),
    (
        "void vision::ops::(anonymous namespace)::deformable_im2col_kernel<float>(int, float const*)",
        "resampling",
        "torchvision",
    ),
    (
        "void vision::ops::(anonymous namespace)::deformable_col2im_coord_kernel<float>(int, float const*)",
        "resampling",
        "torchvision",
    ),
    ("void at::cuda::philox::unpack_cudnn(at::PhiloxCudaState, long*, long*)", "random", "aten"),
    (
        "void at::native::amp_update_scale_cuda_kernel(float*, int*, float const*, double, double, int)",
        "optimizer",
        "aten",
    ),
]


@pytest.mark.parametrize(("name", "kind", "family"), SOURCE_NAMES, ids=lambda v: str(v)[:60])
def test_decodes_kernels_by_their_source_names(name: str, kind: str, family: str) -> None:
    assert (parse_kernel_name(name).kind, parse_kernel_name(name).family) == (kind, family)


def test_mmcvs_gather_keep_from_mask_is_not_torchvisions() -> None:
    # The same kernel name in mmcv, with no namespace: no rule may say torchvision there.
    assert parse_kernel_name("void gather_keep_from_mask(bool*, unsigned long long const*, int)").family == "unknown"


@pytest.mark.parametrize(("name", "kind"), FBGEMM_SOURCE_NAMES)
def test_decodes_fbgemm_kernels_by_their_source_names(name: str, kind: str) -> None:
    assert (parse_kernel_name(name).kind, parse_kernel_name(name).family) == (kind, "fbgemm")


def test_corpus_covers_every_kind_and_every_family_of_the_rules() -> None:
    # Decoded, not read from the expectations: a rule or kind without a real name to prove
    # it, or a rule that no longer fires for the names it was written for, fails here.
    import csv

    from pytest_kernelprof.decode import RULES

    with (DATA / "names_corpus.tsv").open(encoding="utf-8") as handle:
        elsewhere = [row["name"] for row in csv.DictReader(handle, delimiter="\t")]
    names = [name for name, *_ in (*CORPUS, *LIBRARY_CORPUS, *SOURCE_NAMES)] + elsewhere
    names += [n for n, _ in FBGEMM_SOURCE_NAMES]
    decoded = [parse_kernel_name(name) for name in names]
    # "template" is asked for by kind (kind="template") but is the separate fact KernelName.template.
    assert {d.kind for d in decoded} | {"template" for d in decoded if d.template} >= set(KINDS)
    assert {d.family for d in decoded} >= {rule.family for rule in RULES}


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


def test_every_decoded_dtype_is_one_of_dtypes() -> None:
    # kernelprof_forbid rules validate dtype= against DTYPES: a dtype outside it could never be asked for.
    decoded = {parse_kernel_name(name).dtype for name, *_ in (*CORPUS, *LIBRARY_CORPUS)} - {None}
    assert decoded <= set(DTYPES)
    assert {"fp64", "fp32", "tf32", "bf16", "fp16", "int8"} <= decoded


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


def test_names_package_does_not_import_torch() -> None:
    import subprocess
    import sys

    # The package's __init__ imports nothing eagerly; names/ must not pull torch in either.
    code = (
        "import sys; from pytest_kernelprof.decode import parse_kernel_name; "
        "assert parse_kernel_name('triton_poi_fused_mul_0').kind == 'pointwise'; "
        "assert not [m for m in sys.modules if m.startswith('torch')], 'names/ imported torch'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# Families of libraries whose kernels must never be `other`: their names say what they are.
LIBRARY_FAMILIES = frozenset({"aten", "cub", "cudnn", "cublas", "cutlass", "nvjet", "nccl", "flash", "mem_efficient"})
NEW_KINDS = ("indexing", "sort", "scan", "pooling", "resampling", "loss", "optimizer")


@pytest.mark.parametrize(("name", "kind", "family"), LIBRARY_CORPUS, ids=lambda v: str(v)[:60])
def test_decodes_library_kernels_of_real_models(name: str, kind: str, family: str) -> None:
    decoded = parse_kernel_name(name)
    assert (decoded.kind, decoded.family) == (kind, family)


def test_no_library_kernel_of_real_models_is_other() -> None:
    other = [
        name
        for name, _, family in LIBRARY_CORPUS
        if family in LIBRARY_FAMILIES and parse_kernel_name(name).kind == "other"
    ]
    assert other == []


def test_library_corpus_covers_every_new_kind_and_keeps_user_triton_kernels_unknown() -> None:
    assert set(NEW_KINDS) <= {kind for _, kind, _ in LIBRARY_CORPUS}
    assert set(NEW_KINDS) <= set(KINDS)
    # Liger's kernels carry no marker in their names: capture, not the name, must tell.
    liger = [name for name, _, family in LIBRARY_CORPUS if family == "unknown"]
    assert "_rms_norm_forward_kernel" in liger
    assert all(parse_kernel_name(name).kind == "other" for name in liger)


def test_an_unknown_kind_lists_the_new_kinds() -> None:
    with pytest.raises(ValueError, match="indexing, sort, scan, pooling, resampling, loss, optimizer"):
        KernelList([]).of_kind("sorting")
