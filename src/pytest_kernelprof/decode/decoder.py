"""A kernel's facts from every piece of evidence there is, in a stated order.

For each fact the first source that gives it wins:

1. ``user``: what the user taught (``kernelprof_kernels`` lines, :meth:`Decoder.teach`);
2. ``name``: the library's naming grammar read from the name's head (``grammar.RULES``), and
   Liger-Kernel's kernel names (``liger.py``) where there is evidence that the kernel is that
   Triton kernel (the capture learned it is Triton, or a Liger autograd Function launched it);
3. ``template``: the floating types in the name's template arguments (``templates.py``);
4. ``op``: the family of work of the op that launched the kernel (``ops.py``), for its kind,
   and what it computes, for the fused ops of a kernel whose name tells none;
5. ``op-inputs``: the dtype of that op's inputs, where the profile recorded them;
6. ``template`` again: an integer type as a template's first argument (``ReduceOp<long, ...>``,
   ``FillFunctor<int>``). Last: integer types in templates are indices and counts as often as
   data, so a floating dtype of the op's inputs wins over them.

A kernel that no source places keeps kind ``"other"`` with no evidence for it
(:attr:`KernelName.unplaced`): queries about kinds and dtypes say so instead of guessing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from ..tables import plural
from .facts import Evidence, KernelName
from .grammar import CUBLASLT_EPILOGUE, RULES
from .inductor import INDUCTOR_KINDS, computing_ops, own_work, template_kind
from .liger import LigerKernel, liger_kernel
from .ops import dtype_of_inputs, fused_ops_of_op, kind_of_op
from .teach import TAUGHT_FIELDS, Teaching, check_teaching, parse_teachings
from .templates import demangled, split_head, template_dtype, template_integer_dtype

K = TypeVar("K", bound=KernelName)

_VOID = "void "
# Every family the built-in evidence gives: the grammar's, Liger-Kernel's, a Triton kernel's
# whose name says no library (a user's @triton.jit), and "unknown".
FAMILIES = tuple(dict.fromkeys([*(rule.family for rule in RULES), "liger", "triton", "unknown"]))
# Kernels that work on an op's indices rather than its data: neither the integer types of
# their templates nor their op's inputs' dtype says what they compute on.
_INDEX_KINDS = frozenset(("indexing", "sort", "scan"))
# How much of a name the grammar reads: the longest real names (CUTLASS, cuDNN) run to about
# 5,000 characters; a longer one is read on its first MAX_READ, so that no rule's pattern costs
# more than that on a name made to be long.
MAX_READ = 8192


def _grammar_text(name: str) -> str:
    """The text the grammar's rules read: demangled, its leading ``void`` gone, cut at MAX_READ."""
    return demangled(name[len(_VOID) :] if name.startswith(_VOID) else name)[:MAX_READ]


@functools.lru_cache(maxsize=8192)
def _by_name(name: str) -> KernelName:
    """What the name alone says: the grammar, then the floating types of the template arguments."""
    text = _grammar_text(name)
    head, arguments = split_head(text)
    for rule in RULES:
        if not rule.pattern.search(text):
            continue
        kind, places_kind, template = rule.kind, rule.places_kind, False
        fused_ops = rule.fused_ops(text)
        if rule.family == "inductor" and rule.places_kind:
            # One rule for all Inductor kernels; the three letters after "triton_" say the kind,
            # and a template's origin ops say what it computes (triton_tem_fused_addmm_gelu_t_0:
            # a GEMM). A template whose ops give no hint (triton_tem_fused_0) is left unplaced,
            # for the launching op to place: it is a GEMM most often, but not always.
            prefix = text[len("triton_") : len("triton_") + 3]
            template = prefix == "tem"
            placed = template_kind(fused_ops) if template else INDUCTOR_KINDS[prefix]
            kind, places_kind = (placed, True) if placed is not None else ("other", False)
        dtype, dtype_source = None, "template"
        if rule.template_dtype_first:
            dtype = template_dtype(arguments)
        if dtype is None:
            dtype, dtype_source = rule.dtype(head), "name"
        if dtype is None and rule.dtype_anywhere:
            dtype, dtype_source = rule.dtype(text), "template"
        if dtype is None:
            dtype, dtype_source = template_dtype(arguments), "template"
        layout = rule.layout(text)
        return KernelName(
            name=name,
            kind=kind,
            family=rule.family,
            layout=layout,
            dtype=dtype,
            fused_ops=fused_ops,
            collective=rule.collective(text),
            part_of=rule.part_of,
            template=template,
            evidence=Evidence(
                kind="name" if places_kind else None,
                family="name",
                dtype=dtype_source if dtype is not None else None,
                layout="name" if layout is not None else None,
                fused_ops="name" if fused_ops else None,
            ),
        )
    dtype = template_dtype(arguments)
    return KernelName(
        name=name,
        kind="other",
        family="unknown",
        dtype=dtype,
        evidence=Evidence(dtype="template" if dtype is not None else None),
    )


def _liger(name: str, liger: LigerKernel) -> KernelName:
    # The name is the evidence, given that the kernel is Triton's; nothing the grammar read from
    # a name that only looks like ATen's (_layer_norm_forward_kernel) is kept.
    return KernelName(
        name=name,
        kind=liger.kind,
        family="liger",
        part_of=liger.part_of,
        fused_ops=liger.fused_ops,
        evidence=Evidence(kind="name", family="name", fused_ops="name" if liger.fused_ops else None),
    )


@functools.lru_cache(maxsize=8192)
def _integer_dtype(name: str) -> str | None:
    text = demangled(name[len(_VOID) :] if name.startswith(_VOID) else name)
    return template_integer_dtype(*split_head(text))


def _with_op(decoded: KernelName, op: str | None, input_types: tuple[str, ...]) -> KernelName:
    kind = kind_of_op(op) if decoded.unplaced else None
    dtype, dtype_source = None, "op-inputs"
    if decoded.dtype is None and (kind or decoded.kind) not in _INDEX_KINDS:
        dtype = dtype_of_inputs(input_types) if input_types else None
        if dtype is None:
            dtype, dtype_source = _integer_dtype(decoded.name), "template"
    fused_ops = () if decoded.fused_ops else fused_ops_of_op(op, kind or decoded.kind, decoded.family)
    if kind is None and dtype is None and not fused_ops:
        return decoded
    evidence = decoded.evidence
    if kind is not None:
        evidence = replace(evidence, kind="op")
    if dtype is not None:
        evidence = replace(evidence, dtype=dtype_source)
    if fused_ops:
        evidence = replace(evidence, fused_ops="op")
    return replace(
        decoded,
        kind=kind or decoded.kind,
        dtype=dtype or decoded.dtype,
        fused_ops=fused_ops or decoded.fused_ops,
        evidence=evidence,
    )


def fused_ops_read_now(stored: tuple[str, ...], name: str, op: str | None, kind: str, family: str) -> tuple[str, ...]:
    """The fused ops that an older decoder gave a kernel (a baseline's stored ones), as this one
    gives them: no views (``inductor.VIEW_OPS``), nor, in an Inductor pointwise or reduction
    kernel's, the attention, GEMM or convolution op its output feeds; ``threshold``, not ``relu``, for the threshold
    functor that ReLU's backward runs; and where none were stored, those the name or else the
    launching op says now (an ATen functor newly read, the bias of addmm's GEMM, an ATen
    kernel's op). A stored record compares as it would be written now, so that a baseline
    written before these changes keeps passing."""
    if not stored:
        return _by_name(name).fused_ops or fused_ops_of_op(op, kind, family)
    if stored == ("relu",) and family == "aten" and _by_name(name).fused_ops == ("threshold",):
        return ("threshold",)
    # An Inductor kernel's stored origins as they are read now: no attention, GEMM or
    # convolution op of the one its output feeds (inductor.own_work).
    return own_work(stored, name) if family == "inductor" and name.startswith("triton_") else computing_ops(stored)


def bias_in_epilogues(
    kernels: Sequence[K], ops: Sequence[str | None], moved: Callable[[K, tuple[str, ...]], K]
) -> list[K]:
    """``kernels`` (their launching ``ops``), where a GEMM given ``bias`` by its op
    (``aten::addmm``; its name tells no epilogue) is followed, in the op's run, by cuBLASLt's
    epilogue kernel: the bias is the epilogue kernel's, which adds it, not the GEMM's. ``moved``
    makes a kernel with other fused ops. A trial read ``bias`` on a GEMM beside the kernel that
    did the add: ``gemm.fused_ops == ("bias",)`` held of a GEMM that fused none. Applied to a
    call's kernels and to a stored baseline's alike, so that an older baseline compares as one
    written now."""
    out = list(kernels)
    gemm: int | None = None
    for i, kernel in enumerate(out):
        if i and ops[i] != ops[i - 1]:
            gemm = None  # another op's launch
        if kernel.kind == "gemm":
            by_op = "bias" in kernel.fused_ops and "bias" not in _by_name(kernel.name).fused_ops
            gemm = i if by_op else None
        elif gemm is not None and kernel.part_of == "gemm" and CUBLASLT_EPILOGUE.search(_grammar_text(kernel.name)):
            out[gemm] = moved(out[gemm], tuple(op for op in out[gemm].fused_ops if op != "bias"))
            out[i] = moved(kernel, ("bias",))
            gemm = None
    return out


def _taught(decoded: KernelName, teachings: Sequence[Teaching]) -> KernelName:
    """``decoded`` with the facts of every matching taught rule; for each fact the earliest
    rule that gives it wins, as for the other sources."""
    given: dict[str, Any] = {}
    for teaching in teachings:
        for fact in TAUGHT_FIELDS:
            value = getattr(teaching, fact)
            if value is not None:
                given.setdefault(fact, value)
    if not given:
        return decoded
    evidence = replace(decoded.evidence, **{fact: "user" for fact in given if fact != "part_of"})
    return replace(decoded, **given, evidence=evidence)


class Decoder:
    """Decodes kernel names with what users taught first, then the built-in evidence.

    Immutable: :meth:`teach` returns a new decoder, so one test's teaching never leaks
    into another's.
    """

    __slots__ = ("_cache", "taught")

    def __init__(self, taught: Sequence[Teaching] = ()) -> None:
        self.taught: tuple[Teaching, ...] = tuple(taught)
        self._cache: dict[tuple[str, str | None, tuple[str, ...], bool], KernelName] = {}

    def __repr__(self) -> str:
        return f"Decoder({plural(len(self.taught), 'taught rule')})"

    def teach(
        self,
        pattern: str,
        *,
        kind: str | None = None,
        family: str | None = None,
        dtype: str | None = None,
        layout: str | None = None,
        part_of: str | None = None,
        origin: str = "teach()",
    ) -> Decoder:
        """A new decoder that gives kernels matching the glob ``pattern`` these facts, before
        anything else this decoder knows; this one is unchanged (``d = d.teach(...)``)."""
        __tracebackhide__ = True
        facts = {"kind": kind, "family": family, "dtype": dtype, "layout": layout, "part_of": part_of}
        check_teaching(pattern, origin, facts)
        return Decoder((Teaching(pattern, origin=origin, **facts), *self.taught))

    def teach_lines(self, lines: Iterable[str], origin: str) -> Decoder:
        """A new decoder that also knows ``GLOB: field=value ...`` lines; earlier lines win."""
        __tracebackhide__ = True
        return Decoder((*parse_teachings(lines, origin), *self.taught))

    def families(self) -> tuple[str, ...]:
        """Every family this decoder can give: the built-in ones, "unknown", and taught ones."""
        return tuple(dict.fromkeys([*FAMILIES, *(t.family for t in self.taught if t.family is not None)]))

    def decode(
        self, name: str, op: str | None = None, input_types: tuple[str, ...] = (), triton: bool = False
    ) -> KernelName:
        """The facts of the kernel ``name`` launched by ``op`` (whose inputs had ``input_types``);
        ``triton``: whether there is evidence that it is a Triton kernel (capture learned it,
        or Inductor launched it), which places Liger-Kernel's kernels and gives a kernel whose
        name knew no family the family ``triton``."""
        key = (name, op, input_types, triton)
        found = self._cache.get(key)  # the hot path of a build: a profile repeats a few names
        if found is None:
            if not isinstance(name, str):
                raise TypeError(f"parse_kernel_name() takes a kernel name (str), got {type(name).__name__}")
            decoded = _by_name(name)
            liger = liger_kernel(name, op, triton)
            if liger is not None:
                decoded = _liger(name, liger)
            elif triton and decoded.family == "unknown":
                decoded = replace(decoded, family="triton")
            found = _with_op(decoded, op, input_types)
            if self.taught:
                found = _taught(found, [teaching for teaching in self.taught if teaching.matches(name)])
            if len(self._cache) < 65536:  # a profile repeats a few names; a cap bounds a long session
                self._cache[key] = found
        return found


BUILT_IN = Decoder()


def parse_kernel_name(name: str) -> KernelName:
    """Decode ``name`` from the name alone (no op, nothing taught).

    >>> parse_kernel_name("nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN").layout
    'tn'
    """
    return BUILT_IN.decode(name)
