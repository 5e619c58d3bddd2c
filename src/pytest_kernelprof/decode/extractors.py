"""What the tokens of a kernel name say: the layout, dtype, fused-op and collective extractors
that the rules of ``grammar.py`` read a name with, one per library convention.

Pure functions over strings; each returns None (or no ops) where its convention is not in
the name, never an error.
"""

from __future__ import annotations

import re

_LAYOUT_TOKEN = re.compile(r"(?:^|_)(nn|nt|tn|tt)(?:_|$)", re.IGNORECASE)
_LAYOUT_TOKEN3 = re.compile(r"_([nt]{3})_align", re.IGNORECASE)
_NVJET_LAYOUT = re.compile(r"_([NT]{3})$")

# Type letters of cuBLASLt JIT (nvjet) names: <A/B type><compute type><output type>.
_NVJET_TYPES = {"h": "fp16", "t": "bf16", "s": "fp32", "d": "fp64", "e": "fp8", "i": "int8", "q": "fp8"}
# fp8 GEMMs put two letters for the fp8 A and B before the three: nvjet_sm90_qqtst_* (e4m3),
# nvjet_sm90_qrtst_* (e4m3 x e5m2).
_NVJET_DTYPE = re.compile(r"^nvjet_(?:sm\d+_)?([qr][qr])?([a-z])[a-z]{2}_")

_DTYPE_TOKENS = (
    (re.compile(r"bf16|[bB]float16|BFloat16"), "bf16"),
    (re.compile(r"[eE]4[mM]3|[eE]5[mM]2|fp8|Float8"), "fp8"),
    (re.compile(r"fp16|(?<![A-Za-z])f16|Half|(?:^|_)half(?:_|$)|h884|h1688|h16816|hgemm"), "fp16"),
    (re.compile(r"tf32"), "tf32"),
    (re.compile(r"(?<![A-Za-z])f64|fp64|double|dgemm"), "fp64"),
    # complex GEMMs of cuBLAS (cgemm) and the "gcgemm" of cuDNN's FFT convolutions
    (re.compile(r"[gc]cgemm|Cgemm"), "complex64"),
    (re.compile(r"zgemm|Zgemm"), "complex128"),
    (re.compile(r"(?<![A-Za-z])f32|fp32|(?<![bB])float(?!\d)|sgemm"), "fp32"),
    (re.compile(r"int8|(?<![A-Za-z])i8|imma|i16\d{2,4}gemm|_s8_"), "int8"),
)


def first_dtype(text: str) -> str | None:
    best: tuple[int, str] | None = None
    for pattern, dtype in _DTYPE_TOKENS:
        found = pattern.search(text)
        if found and (best is None or found.start() < best[0]):
            best = (found.start(), dtype)
    return best[1] if best else None


# CUTLASS/cuBLAS TF32 tensor-core SGEMMs (``cutlass_80_tensorop_s1688gemm_*``) name no input
# type: the "s" kernel of those instruction shapes reads fp32 (computing in TF32). Other
# input types put their own token in the name (``f16_s1688gemm``, ``bf16_s16816gemm``).
_TF32_SGEMM = re.compile(r"s16(?:88|84)\w*gemm")


def gemm_dtype(name: str) -> str | None:
    dtype = first_dtype(name)
    if dtype is None and _TF32_SGEMM.search(name):
        return "fp32"
    return dtype


def layout_any(name: str) -> str | None:
    three = _LAYOUT_TOKEN3.search(name)
    if three:
        return three.group(1)[:2].lower()
    # The last layout token wins: tile shapes and types come first in these names. The
    # head (before template arguments) is read first: a wrapper's arguments may repeat it.
    head = name.split("(")[0]
    tokens = _LAYOUT_TOKEN.findall(head.split("<")[0]) or _LAYOUT_TOKEN.findall(re.sub(r"[<>,:\s]+", "_", head))
    return tokens[-1].lower() if tokens else None


def nvjet_layout(name: str) -> str | None:
    found = _NVJET_LAYOUT.search(name)
    return found.group(1)[:2].lower() if found else None


def nvjet_dtype(name: str) -> str | None:
    found = _NVJET_DTYPE.match(name)
    if found is None:
        return None
    return "fp8" if found.group(1) else _NVJET_TYPES.get(found.group(2))


_GEMM_EPILOGUES = (("bias", "bias"), ("relu", "relu"), ("gelu", "gelu"), ("swish", "silu"))


def gemm_epilogue(name: str) -> tuple[str, ...]:
    tokens = set(re.split(r"[_<>,:\s]+", name.lower()))
    return tuple(op for token, op in _GEMM_EPILOGUES if token in tokens)


# ATen elementwise kernels carry their functor in the template arguments; the functor
# names the op. Ordered: "GeluBackward" must win over "Gelu". Only functors that name one op:
# ReLU's backward runs threshold_kernel_impl (threshold_backward), so "threshold", not "relu";
# launch_clamp_scalar serves clamp, clamp_min and clamp_max, and CompareEqFunctor both eq and
# ne, so they name none, and the launching op says (ops.fused_ops_of_op).
_ATEN_FUNCTORS = (
    (re.compile(r"gelu_?backward", re.IGNORECASE), "gelu_backward"),
    (re.compile(r"gelu", re.IGNORECASE), "gelu"),
    (re.compile(r"silu_?backward", re.IGNORECASE), "silu_backward"),
    (re.compile(r"silu", re.IGNORECASE), "silu"),
    (re.compile(r"sigmoid", re.IGNORECASE), "sigmoid"),
    (re.compile(r"tanh", re.IGNORECASE), "tanh"),
    (re.compile(r"threshold", re.IGNORECASE), "threshold"),
    (re.compile(r"relu", re.IGNORECASE), "relu"),
    (re.compile(r"clamp_min_scalar"), "clamp_min"),
    (re.compile(r"clamp_max_scalar"), "clamp_max"),
    (re.compile(r"MulFunctor|mul_kernel|binary_internal::MulFunctor", re.IGNORECASE), "mul"),
    (re.compile(r"DivFunctor|div_(?:true|floor|trunc)_kernel", re.IGNORECASE), "div"),
    (re.compile(r"CUDAFunctor(?:OnSelf)?_add|AddFunctor|add_kernel", re.IGNORECASE), "add"),
    (re.compile(r"sub_kernel|CUDAFunctor(?:OnSelf)?_sub", re.IGNORECASE), "sub"),
    (re.compile(r"exp_kernel", re.IGNORECASE), "exp"),
    (re.compile(r"rsqrt", re.IGNORECASE), "rsqrt"),
    (re.compile(r"pow_tensor|pow_kernel", re.IGNORECASE), "pow"),
    (re.compile(r"copy_kernel|CatArrayBatchedCopy", re.IGNORECASE), "copy"),
    (re.compile(r"FillFunctor|fill_kernel", re.IGNORECASE), "fill"),
    (re.compile(r"normal_kernel|uniform_kernel|distribution", re.IGNORECASE), "random"),
    (re.compile(r"bernoulli|multinomial|randperm", re.IGNORECASE), "random"),
    (re.compile(r"dropout", re.IGNORECASE), "dropout"),
    (re.compile(r"MeanOps", re.IGNORECASE), "mean"),
    (re.compile(r"sum_functor|ReduceAdd|sum_kernel", re.IGNORECASE), "sum"),
    (re.compile(r"MaxOps|max_kernel|MaxNanFunctor", re.IGNORECASE), "max"),
    (re.compile(r"MinOps|min_kernel|MinNanFunctor", re.IGNORECASE), "min"),
    (re.compile(r"softmax", re.IGNORECASE), "softmax"),
    (re.compile(r"layer_norm|LayerNorm", re.IGNORECASE), "layer_norm"),
    (re.compile(r"AbsFunctor|abs_kernel", re.IGNORECASE), "abs"),
    (re.compile(r"neg_kernel", re.IGNORECASE), "neg"),
    (re.compile(r"where_kernel", re.IGNORECASE), "where"),
)


def aten_ops(name: str) -> tuple[str, ...]:
    for pattern, op in _ATEN_FUNCTORS:
        if pattern.search(name):
            return (op,)
    return ()


_NCCL_COLLECTIVES = (
    "AllReduce",
    "AllGather",
    "ReduceScatter",
    "Broadcast",
    "Reduce",
    "SendRecv",
    "Send",
    "Recv",
    "AllToAll",
)
_NCCL_DTYPES = {
    "bf16": "bf16",
    "bfloat16": "bf16",
    "f16": "fp16",
    "half": "fp16",
    "f32": "fp32",
    "float": "fp32",
    "f64": "fp64",
    "double": "fp64",
    "i8": "int8",
    "int8": "int8",
    "u8": "uint8",
    "i32": "int32",
    "u32": "uint32",
    "i64": "int64",
    "u64": "uint64",
    "f8e4m3": "fp8",
    "f8e5m2": "fp8",
}


def nccl_collective(name: str) -> str | None:
    for collective in _NCCL_COLLECTIVES:
        if collective in name:
            return collective
    return None


def nccl_dtype(name: str) -> str | None:
    for token in reversed(re.split(r"[_<>,:()\s]+", name)):
        dtype = _NCCL_DTYPES.get(token.lower())
        if dtype:
            return dtype
    return None


# ROCm Tensile (rocBLAS, hipBLASLt) GEMMs: Cijk_<A index order>_<B index order>_<types>_...;
# A as "lik" and B as "jlk" are the transposed operands; the first type letter is A's and B's.
_TENSILE = re.compile(r"^Cijk_A(ilk|lik)_B(ljk|jlk)_(I8|F8|B8|[SDHBCZ])")
_TENSILE_TYPES = {"S": "fp32", "D": "fp64", "H": "fp16", "B": "bf16", "C": "complex64", "Z": "complex128"}
_TENSILE_TYPES.update({"I8": "int8", "F8": "fp8", "B8": "fp8"})


def tensile_layout(name: str) -> str | None:
    found = _TENSILE.match(name)
    if found is None:
        return None
    return ("t" if found.group(1) == "lik" else "n") + ("t" if found.group(2) == "jlk" else "n")


def tensile_dtype(name: str) -> str | None:
    found = _TENSILE.match(name)
    return _TENSILE_TYPES.get(found.group(3)) if found else None


# cuDNN's classic kernels say their input type with one letter before "cudnn":
# volta_scudnn_128x64_relu_interior_nn_v1, cudnn_infer_ampere_h16816cudnn_...
_CUDNN_TYPE = re.compile(r"(?:^|_)(s|h|d|bf16_?s|h\d+|s\d+)cudnn")


def cudnn_dtype(name: str) -> str | None:
    found = _CUDNN_TYPE.search(name)
    if found is None:
        return first_dtype(name)
    # volta_fp16_s884cudnn_fp16_*: an input type named before the instruction wins over it.
    named = first_dtype(name[: found.start()])
    if named is not None:
        return named
    letter = found.group(1)
    if letter.startswith("bf16"):
        return "bf16"
    return {"s": "fp32", "h": "fp16", "d": "fp64"}[letter[0]]


_MAGMA_TYPE = re.compile(r"magma_([sdcz])")
_BLAS_TYPES = {"s": "fp32", "d": "fp64", "c": "complex64", "z": "complex128", "h": "fp16"}


def magma_dtype(name: str) -> str | None:
    found = _MAGMA_TYPE.search(name)
    return _BLAS_TYPES[found.group(1)] if found else None


# cuDNN's generated SDPA kernels say "f16" for any 16-bit input, bf16 included (the same
# cudnn_generated_fort_native_sdpa_*_f16_* name ran for c10::BFloat16 and c10::Half inputs on
# an H100): the name gives no dtype there, and the op's inputs may.
_AMBIGUOUS_F16 = re.compile(r"(?:^|_)f16(?:_|$)")


def cudnn_sdpa_dtype(name: str) -> str | None:
    if _AMBIGUOUS_F16.search(name) and not re.search(r"bf16|bfloat16", name):
        return None
    return first_dtype(name)


def copy_op(_: str) -> tuple[str, ...]:
    return ("copy",)


def none(_: str) -> None:
    return None


def no_ops(_: str) -> tuple[str, ...]:
    return ()
