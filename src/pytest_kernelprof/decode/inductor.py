"""Inductor's kernel names: ``triton_<category>_fused_<origin ops>_<n>``.

The category says the kind (``INDUCTOR_KINDS``), a template's origin ops say what it computes
(``template_kind``), and the origin ops are split back out of the name (``inductor_ops``),
views left out (``VIEW_OPS``).
Pure functions over strings, like ``extractors.py``.
"""

from __future__ import annotations

import bisect
import functools
import re

from .aten_op_names import ATEN_OP_NAMES
from .ops import kind_of_op

# Inductor names a kernel "triton_<kind>_fused_<ops>_<n>" (torch/_inductor/utils.py,
# get_fused_kernel_name): <ops> is the sorted, deduplicated names of its origins' ATen ops
# (OpOverloadPacket.__name__: "_unsafe_view", "avg_pool2d") and higher-order ops
# ("flex_attention"), joined with "_". Op names contain "_" themselves, so the text is split
# back against every name torch has (aten_op_names.py, read from torch by a tool: no torch
# import here, traces are decoded without it). A name the list lacks (a custom op's, a newer
# torch's) is kept whole, never cut into words, some of which are op names ("dot", "t").
_LONGEST_NAME = max(map(len, ATEN_OP_NAMES))
# Inductor names a kernel after its origins, a few dozen at most; the words past this many
# are not split, so that a hostile name costs no more than a long real one.
MAX_FUSED_WORDS = 256

# What a split costs, compared in order:
# - its runs of unknown text;
# - its ops out of Inductor's order: the names are sorted and deduplicated, so "silu_and_mul" (a
#   custom op) is not "silu", "and", "mul" ("and" would come first);
# - the characters of its runs: a run is as short as the known names around it allow;
# - its in-place ops: Inductor's graphs are functional, an origin op is in-place only where it is
#   the copy back into a mutated input ("copy_"), so "_foreach_ceil__softmax" is "_foreach_ceil"
#   and "_softmax", while "copy__div" is still "copy_" and "div" (no op is named "_div");
# - its ops: a known name whole rather than cut into shorter known ones ("index_put", not "index"
#   and "put").
_Cost = tuple[int, int, int, int, int]
_FREE: _Cost = (0, 0, 0, 0, 0)
_NO_SPLIT: _Cost = (1 << 30, 0, 0, 0, 0)


def _split_fused(joined: str) -> tuple[str, ...]:
    """The ops of ``joined``: known names and, between them, runs of unknown text, each run one
    op; the split of least cost (``_Cost``), as far as the best split up to each "_" decides
    (an op's order is judged against the op before it in that split). Linear in the text's
    length (times the words of the longest name)."""
    # Where an op may end: at a "_" between two ops (neither empty) or at the end; position 0
    # is the start of the text (a virtual end at -1), the next op starts after an end's "_".
    cut = [-1, *(i for i in range(1, len(joined) - 1) if joined[i] == "_"), len(joined)]
    # Per position: the best split of the text before it whose last op is known (an unknown run
    # may follow only such a split: two runs side by side are one) and the best of all, each
    # with the position its last op starts after; the best says whether its last op is known.
    known_best: list[tuple[_Cost, int]] = [(_FREE, 0)]
    best: list[tuple[_Cost, int, bool]] = [(_FREE, 0, True)]

    def last_op(here: int, start_from: int) -> str:
        return joined[cut[start_from] + 1 : cut[here]] if here else ""

    run_key, run_from = _NO_SPLIT, 0
    for here in range(1, len(cut)):
        end = cut[here]
        # A run from after any earlier position: the one whose cost, less where the run starts,
        # is least costs least for this end and every later one. Its order is judged on the
        # rest of the text, which the run begins (as far as the op before it can tell).
        before = here - 1
        (unknown, order, chars, in_place, ops), from_ = known_best[before]
        start = cut[before] + 1
        previous = last_op(before, from_)
        out_of_order = bool(previous) and previous >= joined[start : start + len(previous) + 1]
        key = (unknown, order + out_of_order, chars - start, in_place, ops)
        if key < run_key:
            run_key, run_from = key, before
        run_cost = (run_key[0] + 1, run_key[1], run_key[2] + end, run_key[3], run_key[4] + 1)
        known_cost, known_from = _NO_SPLIT, 0
        for before in range(here - 1, -1, -1):
            start = cut[before] + 1
            if end - start > _LONGEST_NAME:
                break
            op = joined[start:end]
            if op in ATEN_OP_NAMES:
                (unknown, order, chars, in_place, ops), from_, _ = best[before]
                previous = last_op(before, from_)
                out_of_order = bool(previous) and previous >= op
                cost = (unknown, order + out_of_order, chars, in_place + op.endswith("_"), ops + 1)
                if cost < known_cost:
                    known_cost, known_from = cost, before
        known_best.append((known_cost, known_from))
        if known_cost <= run_cost:
            best.append((known_cost, known_from, True))
        else:
            best.append((run_cost, run_from, False))
    found: list[str] = []
    here, must_be_known = len(cut) - 1, False
    while here > 0:
        if must_be_known:
            (_, before), known = known_best[here], True
        else:
            _, before, known = best[here]
        found.append(last_op(here, before))
        must_be_known, here = not known, before
    return tuple(reversed(found))


@functools.cache
def _sorted_names() -> list[str]:
    """The names in order, for a cut-off name's last op: sorted on first use, not at import."""
    return sorted(ATEN_OP_NAMES)


def _truncated_tail(joined: str) -> int:
    """Where the last op of a cut-off name starts: the longest tail, from after a "_", that
    begins a known name (``native_layer_norm_backw``); -1 where no tail does."""
    names = _sorted_names()
    for start in (0, *(i + 1 for i in range(1, len(joined) - 1) if joined[i] == "_")):
        if len(joined) - start > _LONGEST_NAME:
            continue
        tail = joined[start:]
        at = bisect.bisect_left(names, tail)
        if at < len(names) and names[at].startswith(tail):
            return start
    return -1


# The kind of each Inductor kernel category, by the three letters of its name's prefix
# (torch/_inductor: "triton_" + the category's first three letters). A template ("tem") is
# placed by what it computes (template_kind); "unk" is a kernel of no single category: None
# leaves it unplaced.
INDUCTOR_KINDS: dict[str, str | None] = {
    "poi": "pointwise",
    # foreach: one launch over many tensors (a compiled optimizer step, grad clipping).
    "for": "pointwise",
    "red": "reduction",
    "per": "persistent_reduction",
    "sca": "reduction",
    "spl": "scan",  # split_scan: cumsum and other scans over long rows
    "mix": "reduction",
    "unk": None,
}

# What an Inductor template computes, by its origin ops (its name's fused ops): the GEMM
# templates (mm, addmm, bmm, baddbmm, scaled and int8 mm, mm_plus_mm), flex attention and flex
# decoding, and the convolution template. Searched in this order: an attention or convolution
# template may carry a GEMM's name among its epilogue's ops, not the other way round.
_TEMPLATE_KINDS = (
    ("attention", re.compile(r"^flex_(?:attention|attention_backward|decoding)$")),
    ("convolution", re.compile(r"^_?convolution(?:_backward)?$")),
    ("gemm", re.compile(r"^(?:mm|addmm|bmm|baddbmm|addbmm|_scaled_mm|_int_mm|_grouped_mm|_scaled_grouped_mm)$")),
)


def template_kind(fused_ops: tuple[str, ...]) -> str | None:
    """The kind of work an Inductor template computes, by its origin ops; None where they give
    no hint (``triton_tem_fused_0``, a template whose ops Inductor did not name)."""
    for kind, pattern in _TEMPLATE_KINDS:
        if any(pattern.match(op) for op in fused_ops):
            return kind
    return None


# Triton before 3.0 appended its specialisation of each argument to a kernel's name, argument
# 0 first (triton_poi_fused_add_0_0d1d2d3de: kernel 0, then "0d1d2d3de"). One character class,
# not ``[a-z]*(?:\d+[a-z]*)*`` (the same strings), whose nested repeats backtrack exponentially
# on a long run of digits that does not end the name.
_TRITON_SIGNATURE = re.compile(r"_0[a-z\d]*$")


# The ATen ops that compute nothing: views and aliases of their input (a new shape, strides or
# offset over the same storage), which Inductor names among a kernel's origins because the
# graph reshaped what the kernel reads or writes. Left out of fused ops: "what the kernel
# computes" is the same on two cards whose graphs differ only by a view (an H100's and an
# H200's compiled GeGLU, one with "_unsafe_view"). Still op names for the split above (a view
# is one of the ops joined into the name), only left out of the result. Not views here: the
# "_copy", "_scatter" and "_backward" forms (they write a tensor), and the lazy conjugate and
# negative views (conj, _conj, _neg_view), which a kernel that has them as origins computes.
# reshape is here though it copies where no view fits: Inductor's graph then has the copy
# (clone) among the origins too.
VIEW_OPS = frozenset(
    (
        *("view", "_unsafe_view", "view_as", "_reshape_alias", "reshape", "reshape_as", "alias", "lift", "lift_fresh"),
        *("detach", "detach_", "expand", "expand_as", "broadcast_to", "broadcast_tensors", "as_strided", "as_strided_"),
        *("permute", "transpose", "transpose_", "t", "t_", "mT", "mH", "adjoint", "numpy_T", "movedim"),
        *("swapaxes", "swapaxes_", "swapdims", "swapdims_", "squeeze", "squeeze_", "unsqueeze", "unsqueeze_"),
        *("flatten", "unflatten", "ravel", "slice", "select", "narrow", "diagonal", "linalg_diagonal", "unfold"),
        *("split", "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes", "tensor_split", "hsplit"),
        *("vsplit", "dsplit", "chunk", "unsafe_chunk", "unbind", "view_as_real", "view_as_complex", "real", "imag"),
    )
)


def computing_ops(ops: tuple[str, ...]) -> tuple[str, ...]:
    """``ops`` without the views (``VIEW_OPS``): what a kernel of these origins computes."""
    return tuple(op for op in ops if op not in VIEW_OPS)


# The kinds of work Inductor leaves to a library (an extern kernel: SDPA, mm, a convolution) or
# computes in a template, never in a pointwise or reduction Triton kernel. Such an op among the
# origins of one is the op its output feeds (a copy into the strides cuDNN's attention wants, a
# convolution's bias add): named after it, the kernel computes none of its work.
_EXTERN_KINDS = frozenset(("attention", "gemm", "convolution"))
_TRITON_KINDS = frozenset(("pointwise", "reduction", "persistent_reduction"))


def _extern(op: str) -> bool:
    """Whether ``op`` (an origin's name) is work of another kind than a Triton kernel's own,
    by the launching op's kinds (``ops.kind_of_op``) and the templates' (``template_kind``)."""
    return kind_of_op(f"aten::{op}") in _EXTERN_KINDS or template_kind((op,)) is not None


def own_work(ops: tuple[str, ...], name: str) -> tuple[str, ...]:
    """``ops`` (origins of the Inductor kernel ``name``) without the views (``VIEW_OPS``) and, for a
    pointwise or reduction kernel, without the attention, GEMM and convolution ops (``_EXTERN_KINDS``):
    what the kernel computes. A template keeps them: they say what it computes (``template_kind``)."""
    ops = computing_ops(ops)
    if INDUCTOR_KINDS.get(name[len("triton_") : len("triton_") + 3]) not in _TRITON_KINDS:
        return ops
    return tuple(op for op in ops if not _extern(op))


def inductor_origins(name: str) -> tuple[str, ...]:
    """Every origin op a kernel's name gives, views included, in the name's order."""
    ops, last = _origins(name)
    return ops if last is None else (*ops, last)


def inductor_ops(name: str) -> tuple[str, ...]:
    """The origin ops a kernel's name gives, views left out (``VIEW_OPS``), and other kinds' work
    out of a pointwise or reduction kernel's (``own_work``); a name whose only ops are views gives
    none, as one that names no op does. The last op of a name cut short is kept as written, a
    view's name or not: it may begin a longer name ("t" of "tanh")."""
    ops, last = _origins(name)
    return own_work(ops, name) if last is None else (*own_work(ops, name), last)


def _origins(name: str) -> tuple[tuple[str, ...], str | None]:
    """The whole ops of a kernel's name, and the last op of a name cut short, as written."""
    body = name[len("triton_xxx_") :]
    if body.startswith("fused"):
        body = body[len("fused") :]
    body = body[1:] if body.startswith("_") else body
    ellipsis = next((mark for mark in ("…", "...") if body.endswith(mark)), "")
    body = body.removesuffix(ellipsis)
    body, signatures = _TRITON_SIGNATURE.subn("", body)
    body, indexes = re.subn(r"(?:^|_)\d+$", "", body)
    body = "_".join(body.split("_", MAX_FUSED_WORDS)[:MAX_FUSED_WORDS])
    cut_off = bool(ellipsis) or not (signatures or indexes)
    if cut_off:
        # Cut off (a table's column, a log's line, a prefix to match): its last op is as far as
        # the name goes, and a last "_" is the one before the next op.
        body = body.removesuffix("_")
    if not body:
        return (), None
    if cut_off:
        tail = _truncated_tail(body)
        if tail > 0:
            return _split_fused(body[: tail - 1]), body[tail:] + ellipsis
        if tail == 0:
            return (), body + ellipsis
    return _split_fused(body), None
