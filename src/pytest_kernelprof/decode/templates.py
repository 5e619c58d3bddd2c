"""The dtype a kernel's template arguments name.

A demangled name is ``<head><template arguments>(<parameters>)``: ``void at::native::
vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, ...>(int, ...)``. Libraries
put the element type there far more often than in the head (``scal_kernel<float, float, ...>``,
``dot_kernel<float, 128, 0, cublasDotParams<cublasGemvTensor<__nv_bfloat16 const>, ...>>``).
"""

from __future__ import annotations

import re

# The earliest type named wins: element types come before accumulator types in these
# libraries' argument lists (ReduceOp<float, ...> accumulates a reduction in float).
_TYPES = (
    # ATen's cast kernels of fixed types name the type they write in the function's name and only
    # the type they read in its lambda (float16_copy_kernel_cuda(...)::{lambda(float)#1} writes
    # fp16): a kernel has the dtype it writes, as ATen's other elementwise kernels' common dtype
    # is. First, so that bfloat16tofloat32_copy_kernel_cuda (ROCm's) is not read as bf16.
    (re.compile(r"\bb?float16tofloat32_copy_kernel"), "fp32"),
    (re.compile(r"\bfloat16_copy_kernel"), "fp16"),
    (re.compile(r"\bfloat8_copy_kernel"), "fp8"),
    (re.compile(r"__nv_fp8|Float8_e[45]m[23]|fp8_e[45]m[23]|__hip_fp8"), "fp8"),
    (re.compile(r"__nv_bfloat16|BFloat16|bfloat16|__bf16|hip_bfloat16"), "bf16"),
    (re.compile(r"c10::Half\b|__half\b|\bhalf\b|half_t|_Float16|\bHalf\b"), "fp16"),
    (re.compile(r"complex<double>|\bdouble2\b|cuDoubleComplex|ComplexDouble"), "complex128"),
    (re.compile(r"complex<float>|\bfloat2\b|cuComplex\b|ComplexFloat"), "complex64"),
    (re.compile(r"\bdouble\b"), "fp64"),
    (re.compile(r"\bfloat\b"), "fp32"),
)
# The data type of a cuBLAS level-1/2 kernel is its tensor parameter's; the leading scalar
# type is the compute type (dot_kernel<float, ..., cublasGemvTensor<__nv_bfloat16 const>>).
# (No ``\\w*`` before it: the same arguments found, without a scan back over each word.)
_TENSOR_ARGUMENT = re.compile(r"Tensor<([^<>]*)>")
_HEAD_END = re.compile(r"[<(]")


# Itanium-mangled names (CUPTI leaves some, e.g. Composable Kernel's and cuDNN's CUTLASS
# kernels): _ZN<len><id><len><id>...I<template arguments>E...; read the nested name and
# spell the extended float types that the rules and the template reader know. A length of
# nine digits at most: longer runs name no part of any real name, and Python refuses to read
# an integer of more than 4,300 digits.
_LENGTH = re.compile(r"\d{1,9}")
_MANGLED_TYPES = (("DF16b", " __bf16 "), ("DF16_", " _Float16 "), ("DF8_", " __fp8 "))


def demangled(name: str) -> str:
    """``name`` with a mangled nested name spelled as ``a::b::c<...`` (the rest kept as it
    is, for the type reader); other names unchanged."""
    if not name.startswith("_ZN"):
        return name
    position, parts = 3, []
    while position < len(name) and name[position] in "KVrL":  # qualifiers
        position += 1
    while True:
        length = _LENGTH.match(name, position)
        if length is None:
            break
        start = length.end()
        part = name[start : start + int(length.group())]
        parts.append("(anonymous namespace)" if part.startswith("_GLOBAL__N") else part)
        position = start + int(length.group())
    if not parts:
        return name
    rest = name[position:]
    for code, spelled in _MANGLED_TYPES:
        rest = rest.replace(code, spelled)
    return "::".join(parts) + ("<" + rest[1:] if rest.startswith("I") else "(" + rest)


def split_head(name: str) -> tuple[str, str]:
    """``name`` split into its head and the rest (template arguments and parameters)."""
    found = _HEAD_END.search(name)
    if found is None:
        return name, ""
    return name[: found.start()], name[found.start() :]


def _first_type(text: str) -> str | None:
    best: tuple[int, str] | None = None
    for pattern, dtype in _TYPES:
        found = pattern.search(text)
        if found and (best is None or found.start() < best[0]):
            best = (found.start(), dtype)
    return best[1] if best else None


def template_dtype(arguments: str) -> str | None:
    """The floating (or complex) element type that a name's template arguments (and
    parameters) name, or None. Integer types are read by :func:`template_integer_dtype`."""
    if not arguments:
        return None
    for tensor in _TENSOR_ARGUMENT.finditer(arguments):
        dtype = _first_type(tensor.group(1))
        if dtype is not None:
            return dtype
    return _first_type(arguments)


# Integer element types, as demangled names spell them (int64_t is "long" there).
_INTEGER_TYPES = {
    "long": "int64",
    "long int": "int64",
    "long long": "int64",
    "int64_t": "int64",
    "unsigned long": "uint64",
    "unsigned long long": "uint64",
    "uint64_t": "uint64",
    "int": "int32",
    "int32_t": "int32",
    "unsigned int": "uint32",
    "unsigned": "uint32",
    "uint32_t": "uint32",
    "signed char": "int8",
    "int8_t": "int8",
    "unsigned char": "uint8",
    "uint8_t": "uint8",
    "bool": "bool",
}
# Templates whose first argument is an index, size, accumulator or random-bits type, not the
# data's: elementwise_kernel_with_index<int, ...> is arange's index type, distribution_
# elementwise_grid_stride_kernel<unsigned int, ...> the generator's, IntDivider<unsigned int> a
# divisor's, CUB's policy_hub<int, ...> its tuning's (the data's type follows, NonZeroOp<bool>).
_NOT_DATA = re.compile(
    r"(?:elementwise_kernel_with_index|distribution_\w*kernel|IntDivider|OffsetCalculator|region_transform\w*"
    r"|Array|array|ncclDevKernelArgsStorage|policy_hub)$"
)
_FIRST_ARGUMENT_END = re.compile(r"[,<>()]")


def _owner(text: str, end: int) -> str:
    """The word that ends ``text[:end]``, spaces after it allowed (``ReduceOp`` of ``ReduceOp <``):
    read backwards from ``end``, so that the ``<`` of a long name cost no more than the word each.
    (``\\w`` and ``\\s`` are ``isalnum`` or ``_`` and ``isspace``, as ``re`` defines them.)"""
    stop = end
    while stop > 0 and text[stop - 1].isspace():
        stop -= 1
    start = stop
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    return text[start:stop]


def _template_section(arguments: str) -> str:
    """The template argument list that ``arguments`` starts with (without the parameters)."""
    if not arguments.startswith("<"):
        return ""
    depth = 0
    for position, char in enumerate(arguments):
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
            if depth == 0:
                return arguments[: position + 1]
    return arguments  # shortened by the printer ("...<long, …"): what is there


def template_integer_dtype(head: str, arguments: str) -> str | None:
    """The integer element type that a template names as its first argument, or None.

    Read only where no floating type is named, and only as a whole first argument of a template
    (``ReduceOp<long, ...>``, ``FillFunctor<int>``, ``BinaryFunctor<int, int, bool, ...>``,
    ``csr_partition_kernel<long, long>``): the element type comes first in these libraries'
    templates, while index and size types come later (``ReduceOp<float, ..., unsigned int, ...>``)
    or as values (``(int)4``, ``int=4``). The kernel's parameters are not read (``(int, float*)``
    is a count and a pointer), nor the templates of ``_NOT_DATA``. ``head`` and ``arguments``
    are a name split by :func:`split_head`.
    """
    section = _template_section(arguments)
    for position, char in enumerate(section):
        if char != "<":
            continue
        owner = _owner(head, len(head)) if position == 0 else _owner(section, position)
        if owner and _NOT_DATA.search(owner):
            continue
        end = _FIRST_ARGUMENT_END.search(section, position + 1)
        if end is None or end.group() not in ",>":
            continue
        first = section[position + 1 : end.start()].strip().removesuffix(" const").strip()
        dtype = _INTEGER_TYPES.get(first)
        if dtype is not None:
            return dtype
    return None
