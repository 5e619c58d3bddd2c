"""Decode a GPU kernel from evidence: kind, family, layout, dtype, fused ops, and where each came from.

``grammar`` reads library naming conventions (with ``extractors``), ``templates`` the types
in template arguments, ``ops`` the launching op and its inputs, ``teach`` what users say;
``decode`` puts them in order.
No torch import anywhere here: usable on names read from a trace file, testable anywhere.

``fused_ops`` means "the operations this kernel computes, as far as its name tells":
the origin ops of an Inductor kernel, views left out (``("gelu", "mul")`` of
``triton_poi_fused__unsafe_view_gelu_mul_0``), the op of an ATen elementwise functor
(``("gelu",)``) or else of the ATen op that launched the kernel (``("clamp_min",)``), the
epilogue of a GEMM (``("bias",)``, also where ``aten::addmm`` launched it). One field
for all three lets a test compare eager and compiled runs with the same query.
"""

from __future__ import annotations

from ..errors import TeachingError
from .decoder import BUILT_IN, FAMILIES, Decoder, bias_in_epilogues, fused_ops_read_now, parse_kernel_name
from .facts import DTYPES, KINDS, LAYOUTS, NO_EVIDENCE, SOURCES, TRITON_FAMILIES, Evidence, KernelName
from .grammar import RULES, Rule
from .ops import dtype_of_inputs, kind_of_op
from .teach import FAMILY_NAME, TAUGHT_FIELDS, Teaching, parse_teaching, parse_teachings

__all__ = [
    "BUILT_IN",
    "DTYPES",
    "FAMILIES",
    "FAMILY_NAME",
    "KINDS",
    "LAYOUTS",
    "NO_EVIDENCE",
    "RULES",
    "SOURCES",
    "TRITON_FAMILIES",
    "TAUGHT_FIELDS",
    "Decoder",
    "Evidence",
    "KernelName",
    "Rule",
    "Teaching",
    "TeachingError",
    "dtype_of_inputs",
    "bias_in_epilogues",
    "fused_ops_read_now",
    "kind_of_op",
    "parse_kernel_name",
    "parse_teaching",
    "parse_teachings",
]
