"""The arguments of kernel queries, checked: a kind, a family, a dtype (a ``torch.dtype`` mapped to
the decoder's name), a name pattern; errors that say what to write instead."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from ..decode import DTYPES, FAMILY_NAME, KINDS
from ..errors import QueryError, QueryTypeError
from ..tables import nearest


def check_kind(kind: str | None) -> None:
    __tracebackhide__ = True
    if kind is not None and not isinstance(kind, str):
        raise QueryTypeError(f"a kernel kind is a str, one of {', '.join(KINDS)}; got {type(kind).__name__}")
    if kind is not None and kind not in KINDS:
        # A kind copied from a table's cell with its evidence ("reduction (ir)", "gemm (op)"): say
        # that the parenthesis is where the kind came from, and what to write.
        shown = re.fullmatch(r"(\w+) \((\S+)\)", kind)
        if shown is not None and shown.group(1) in KINDS:
            named, source = shown.groups()
            raise QueryError(
                f"unknown kernel kind {kind!r}: the tables' {kind!r} is kind {named!r}, and '({source})' "
                f"says where the kind came from (Kernel.evidence); write kind={named!r}"
            )
        raise QueryError(f"unknown kernel kind {kind!r}{kind_hint(kind)}; the kinds are: {', '.join(KINDS)}")


# Words users reach for, to the kind this decoder gives the kernels they mean (each checked on
# the recorded traces: aten's softmax_warp_forward and layer_norm kernels, Liger's norms and
# Inductor's per-kernels are reductions; SDPA's math backend is GEMMs and a softmax).
_KIND_WORDS: dict[str, tuple[str, str]] = {
    **dict.fromkeys(("matmul", "mm", "bmm", "addmm", "baddbmm", "linear", "gemv"), ("gemm", "")),
    **dict.fromkeys(
        ("conv", "conv1d", "conv2d", "conv3d"),
        ("convolution", "; cuDNN runs some as kind 'gemm', with kind 'pointwise' helpers"),
    ),
    **dict.fromkeys(
        ("sdpa", "flash", "flashattention", "flashattn", "fmha", "mha", "scaleddotproductattention"),
        ("attention", ", the fused ones: SDPA's math backend launches gemm and reduction kernels"),
    ),
    **dict.fromkeys(
        ("softmax", "logsoftmax", "norm", "layernorm", "rmsnorm", "batchnorm", "groupnorm", "sum", "mean"),
        ("reduction", "; count(kind='reduction') counts the persistent_reduction ones too"),
    ),
    **dict.fromkeys(("eltwise", "gelu", "relu", "silu", "activation", "dropout"), ("pointwise", "")),
    **dict.fromkeys(("maxpool", "avgpool", "maxpool2d", "avgpool2d"), ("pooling", "")),
    **dict.fromkeys(("allreduce", "allgather", "reducescatter", "nccl", "collective"), ("communication", "")),
    **dict.fromkeys(("embedding", "gather", "scatter"), ("indexing", "")),
    **dict.fromkeys(("topk", "argsort"), ("sort", "")),
    **dict.fromkeys(("cumsum", "cumprod"), ("scan", "")),
    **dict.fromkeys(("crossentropy", "nll", "nllloss"), ("loss", "")),
    **dict.fromkeys(("upsample", "interpolate"), ("resampling", "")),
}


def kind_hint(kind: str) -> str:
    """`` (did you mean 'gemm'?)`` for a kind that is no kind: the kind of the kernels a common
    word names (``matmul``, ``conv2d``, ``softmax``), else the nearest kind by spelling."""
    word = re.sub(r"[^a-z0-9]", "", kind.lower())
    named, note = _KIND_WORDS.get(word, ("", ""))  # note: what the kind covers, where it needs saying
    if named:
        return f" (did you mean {named!r}? {kind} kernels are kind {named!r}{note})"
    # difflib's own cutoff, not ``nearest``'s looser one: 'foo' is no misspelt 'pooling'.
    close = difflib.get_close_matches(kind.lower(), KINDS, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_family(family: object) -> None:
    """A family is free-form (users teach their own, ``family=flash-attn``): one name, checked
    for its type and shape only; a name no kernel has is told by the failure (``family_lines``)."""
    __tracebackhide__ = True
    if family is None:
        return
    if not isinstance(family, str):
        raise QueryTypeError(
            f"a kernel family is a str, one name such as 'aten', 'inductor' or 'cublas'; got {type(family).__name__}"
        )
    if not FAMILY_NAME.match(family):
        several = [part.strip() for part in family.split(",") if part.strip()]
        hint = (
            " (for several families, add their counts: "
            + " + ".join(f"count(family={part!r})" for part in several)
            + ")"
            if len(several) > 1
            else ""
        )
        raise QueryError(
            f"{family!r} is no kernel family: a family is one name of letters, digits, '_', '-' and '.' "
            f"(such as 'aten', 'inductor', 'flash-attn'), matched whole{hint}"
        )


def family_lines(family: str | None, families: Iterable[str]) -> list[str]:
    """For a query on ``family`` that matched nothing: where no kernel has it, the families the
    kernels have (``families``: each kernel's), as the nearest names are told for a pattern."""
    present = sorted(set(families))
    if family is None or family in present:
        return []
    close = nearest(family, present, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return [f"no kernel's family is {family!r}{hint}; the kernels' families: {', '.join(present) or '(none)'}"]


# torch's names for the decoder's dtypes (``torch.bfloat16`` is ``bf16``), read from
# ``str(dtype)``: a query must not import torch where the test did not.
_TORCH_DTYPES = {
    "float64": "fp64",
    "double": "fp64",
    "float32": "fp32",
    "float": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "float8_e4m3fn": "fp8",
    "float8_e4m3fnuz": "fp8",
    "float8_e5m2": "fp8",
    "float8_e5m2fnuz": "fp8",
    "int8": "int8",
    "uint8": "uint8",
    "int32": "int32",
    "int": "int32",
    "uint32": "uint32",
    "int64": "int64",
    "long": "int64",
    "uint64": "uint64",
    "bool": "bool",
    "complex64": "complex64",
    "cfloat": "complex64",
    "complex128": "complex128",
    "cdouble": "complex128",
}


def _is_torch_dtype(value: object) -> bool:
    cls = type(value)
    return cls.__module__ == "torch" and cls.__name__ == "dtype"


def _torch_dtype_name(dtype: object) -> str | None:
    """The decoder's name of a ``torch.dtype`` (None for one no kernel has)."""
    return _TORCH_DTYPES.get(str(dtype).removeprefix("torch."))


class KernelDtype(str):
    """A kernel's dtype (``Kernel.dtype``): the decoder's name, a plain ``str`` everywhere but in
    ``==``, where it also equals the ``torch.dtype`` a query maps to it. A trial asserted
    ``not any(k.dtype == torch.float32 for k in gemms)``, which a plain string made pass on fp32
    GEMMs. It hashes, prints, pickles and serialises as the plain string (a baseline, a JSON
    output or a copy holds no subclass), and imports no torch: a torch dtype is told by its type."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if _is_torch_dtype(other):
            return str.__eq__(self, _torch_dtype_name(other) or "")
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, str) and not _is_torch_dtype(other):
            return NotImplemented
        return not self.__eq__(other)

    __hash__ = str.__hash__

    def __repr__(self) -> str:
        return str.__repr__(str(self))

    def __reduce__(self) -> tuple[type[str], tuple[str]]:
        return (str, (str.__str__(self),))


def check_dtype(dtype: object) -> str | None:
    """The decoder's name of ``dtype``: one of ``DTYPES``, or a ``torch.dtype`` mapped to it."""
    __tracebackhide__ = True
    if dtype is None:
        return None
    if _is_torch_dtype(dtype):
        mapped = _torch_dtype_name(dtype)
        if mapped is None:
            raise QueryError(f"no kernel dtype is {dtype}; the dtypes are: {', '.join(DTYPES)}")
        return mapped
    if not isinstance(dtype, str):
        raise QueryTypeError(
            f"dtype is one of {', '.join(DTYPES)} (a str) or a torch.dtype, got {type(dtype).__name__}"
        )
    if dtype not in DTYPES:
        bare = dtype.removeprefix("torch.")
        close = [_TORCH_DTYPES[bare]] if bare in _TORCH_DTYPES else nearest(bare, DTYPES, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise QueryError(f"unknown dtype {dtype!r}{hint}; the dtypes are: {', '.join(DTYPES)}")
    return dtype


def check_pattern(pattern: object) -> None:
    __tracebackhide__ = True
    if pattern is not None and not isinstance(pattern, str | re.Pattern):
        raise QueryTypeError(
            f"a kernel pattern is a glob string or a compiled re.Pattern, got {type(pattern).__name__}"
        )
