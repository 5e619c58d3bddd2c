"""What a Triton kernel computes, read from its compiled Triton IR (TTIR) rather than its name.

A hand-written ``@triton.jit`` kernel is named after its Python function, which says nothing a
decoder can trust (``_kernel``, ``fwd``, ``my_add``). Its TTIR does: the operations in it are
Triton's own, the same whatever the function is called. Pure text in, facts out; no Triton import.

The kind, from the strongest operation present:

- ``tt.dot`` / ``tt.dot_scaled``: ``gemm``, with the dtype of the dot's operands (``f32``
  operands read with ``inputPrecision = tf32`` are ``tf32``);
- a ``tt.reduce`` whose operand was reshaped into pairs (``tensor<...x2x2x2x...>``): ``sort``
  (``tl.sort`` and ``tl.topk`` are bitonic networks of such reductions);
- ``tt.scan``: ``scan`` (``tl.cumsum``, ``tl.associative_scan``);
- ``tt.reduce``: ``reduction`` (``tl.sum``, ``tl.max``, ``tl.argmin``, ...);
- ``tt.histogram``: ``reduction``;
- otherwise loads and stores with elementwise math: ``pointwise``.

The dtype of a kernel that is no GEMM is what it writes, as the template (common) dtype of an ATen
elementwise kernel is (a cast is the dtype it casts to, eager or compiled): the element type of
the first floating-point block it stores (a single value stored, as a norm's per-row rstd, counts
after every block), else of the first floating-point tensor it loads (an argmax stores integers;
integer loads are mostly indices and targets), else of the first integer tensor it loads, else
of the first it stores.

Inductor's kernels whose TTIR capture cannot reach (launched through Inductor's static CUDA
launcher, which keeps no IR) are read from the signature they were compiled with
(``dtype_from_signature``), by the same rule: Inductor names the pointers a kernel loads
``in_ptr<n>``, those it stores ``out_ptr<n>``, and one it does both with ``in_out_ptr<n>``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# MLIR element types -> the decoder's dtypes (facts.DTYPES); others (i16, f8 variants spelled
# otherwise) give no dtype rather than a wrong one.
_ELEMENT_TYPES = {
    "f64": "fp64",
    "f32": "fp32",
    "f16": "fp16",
    "bf16": "bf16",
    "i64": "int64",
    "i32": "int32",
    "i8": "int8",
}
_FP8 = re.compile(r"^f8E\d")
_FLOATING = frozenset(("fp64", "fp32", "fp16", "bf16", "fp8"))
# Triton's spelling of a pointer argument's element type in a kernel signature (``*bf16``);
# unsigned and boolean pointers are spelled apart there, unlike in TTIR.
_SIGNATURE_TYPES = {
    "fp64": "fp64",
    "fp32": "fp32",
    "fp16": "fp16",
    "bf16": "bf16",
    "i64": "int64",
    "i32": "int32",
    "i8": "int8",
    "u64": "uint64",
    "u32": "uint32",
    "u8": "uint8",
    "i1": "bool",
}

_DOT = re.compile(r"\btt\.dot(?:_scaled)?\b[^\n]*?:\s*tensor<(?:\d+x)+([A-Za-z]\w*)>\s*\*")
_TF32 = re.compile(r"inputPrecision\s*=\s*tf32")
_REDUCE = re.compile(r"[\"\s]tt\.reduce\"?\(")
_SCAN = re.compile(r"[\"\s]tt\.scan\"?\(")
_HISTOGRAM = re.compile(r"\btt\.histogram\b")
_PAIRS = re.compile(r"\btt\.reshape\b[^\n]*->\s*tensor<(?:\d+x)*?(?:2x){3,}")
_LOAD = re.compile(r"\btt\.load\b[^\n]*?:\s*(?:tensor<(?:\d+x)+)?!tt\.ptr<([A-Za-z]\w*)>")
_STORE = re.compile(r"\btt\.store\b[^\n]*?:\s*(tensor<(?:\d+x)+)?!tt\.ptr<([A-Za-z]\w*)>")


@dataclass(frozen=True)
class IrFacts:
    """The kind and dtype a kernel's TTIR shows (``dtype`` None where the IR names none we list)."""

    kind: str
    dtype: str | None

    def to_json(self) -> dict[str, str | None]:
        return {"kind": self.kind, "dtype": self.dtype}


def _dtype(element: str | None) -> str | None:
    if element is None:
        return None
    if _FP8.match(element):
        return "fp8"
    return _ELEMENT_TYPES.get(element)


def facts_from_ttir(ttir: str) -> IrFacts | None:
    """What the kernel of ``ttir`` computes, or None where the text is no Triton function."""
    if "tt.func" not in ttir:
        return None
    dot = _DOT.search(ttir)
    if dot is not None:
        dtype = _dtype(dot.group(1))
        if dtype == "fp32" and _TF32.search(ttir[dot.start() : ttir.find("\n", dot.start())]):
            dtype = "tf32"
        return IrFacts("gemm", dtype)
    if _REDUCE.search(ttir) and _PAIRS.search(ttir):
        kind = "sort"
    elif _SCAN.search(ttir):
        kind = "scan"
    elif _REDUCE.search(ttir) or _HISTOGRAM.search(ttir):
        kind = "reduction"
    else:
        kind = "pointwise"
    loaded = [_dtype(element) for element in _LOAD.findall(ttir)]
    # A block's store before a single value's: a norm stores its row's fp32 rstd (one value)
    # before its bf16 output (a block); a row sum stores one value and nothing else.
    stores = _STORE.findall(ttir)
    stored = [_dtype(element) for block, element in stores if block] + [
        _dtype(element) for block, element in stores if not block
    ]
    return IrFacts(kind, _what_it_writes(loaded, stored))


def _what_it_writes(loaded: Sequence[str | None], stored: Sequence[str | None]) -> str | None:
    # The data, not its indices: a loss kernel loads its int64 targets beside its bf16 logits.
    floating = [dtype for dtype in (*stored, *loaded) if dtype in _FLOATING]
    written = floating or loaded or stored
    return written[0] if written else None


def dtype_from_signature(signature: Sequence[tuple[str, str]]) -> str | None:
    """The dtype of an Inductor kernel from its compiled signature, ``(argument, type)`` in order
    (``("in_ptr0", "*bf16")``, ``("xnumel", "i32")``): the rule of ``facts_from_ttir`` over its
    pointers, those named ``out_ptr<n>`` stored, ``in_out_ptr<n>`` loaded and stored, the others
    (``in_ptr<n>``, a template's ``arg_A``) loaded."""
    loaded: list[str | None] = []
    stored: list[str | None] = []
    for argument, spelled in signature:
        if not spelled.startswith("*"):
            continue  # a size, a stride, a constexpr
        element = spelled[1:]
        dtype = "fp8" if element.startswith("fp8") else _SIGNATURE_TYPES.get(element)
        if not argument.startswith("out_ptr"):
            loaded.append(dtype)
        if argument.startswith(("out_ptr", "in_out_ptr")):
            stored.append(dtype)
    return _what_it_writes(loaded, stored)
