"""Kernels as text, as every output shows and names them: the kernel table (a failed query, a
broken rule, the job summary, ``kernelprof show``) and its cells, which the timeline's table
shares; a list's names (``prof.kernels.names``), which the assertion report explains as the table
shows them; and ``in`` on names, which asks for a whole name and refuses a glob that names none
(ops' and modules' ``in`` say it too)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import QueryError
from ..tables import display_name, format_us, name_matches, plural, printable, render_table

if TYPE_CHECKING:
    from ..decode import KernelName
    from .kernels import Kernel

GLOB = re.compile(r"[*?[]")  # what makes a string a glob to fnmatch
# Row numbers a query's head line names (``matched 2 of 7 kernels: #0, #6``); the table below
# marks every match, so a line stays one line on a trace of thousands.
ROWS_SHOWN = 20


def rows_text(numbers: Sequence[int]) -> str:
    """``#0, #6``: the kernel table's rows ``numbers``, the first ``ROWS_SHOWN`` of them, the rest counted."""
    shown = ", ".join(f"#{n}" for n in numbers[:ROWS_SHOWN])
    return shown + (f", ... and {len(numbers) - ROWS_SHOWN} more" if len(numbers) > ROWS_SHOWN else "")


def glob_in_message(text: str, matched: Sequence[str], noun: str, instead: str) -> str:
    """Why ``text in ...`` has no answer: no ``noun`` is named ``text``, and as a glob it
    matches those named ``matched``; ``instead`` is what to write for the pattern."""
    distinct = list(dict.fromkeys(matched))
    more = f", ... ({len(distinct)} in all)" if len(distinct) > 3 else ""
    names = ", ".join(printable(display_name(name)) for name in distinct[:3]) + more
    return (
        f"{text!r} is no {noun}'s name, but as a glob it matches {plural(len(distinct), f'{noun} name')} "
        f"({names}): `in` asks for a whole name, and never reads a pattern as one. For the pattern, write {instead}"
    )


# "fused ops", the attribute's words: the cell is ``Kernel.fused_ops`` (what the name says the
# kernel computes), not ``Kernel.ops``, its launch chain (a trial read "ops: gelu" and asserted
# ``k.ops == ("gelu",)``).
KERNEL_CELLS = ("kind", "family", "dtype", "layout", "fused ops")


# What a cell's "(source)" says, in the table's key line: the suffix was explained only in
# docs/decoding.md, which a failure's reader does not have open (a trial asked what "(ir)" meant).
EVIDENCE_KEY = {
    "op": "from the op that launched it",
    "op-inputs": "the dtype of its op's inputs",
    "ir": "read from its compiled Triton IR",
    "template": "read from its template arguments",
    "user": "taught to the decoder (kernelprof.teach, ini option kernelprof_kernels, --kernels)",
}


def evidence_key(kernels: Sequence[Kernel]) -> str | None:
    """``(ir): read from its compiled Triton IR; (op): ...``: what the table's suffixes say, for
    those it shows, or None where it shows none."""
    shown = {k.evidence.kind for k in kernels if k.evidence.kind not in (None, "name")}
    shown |= {"op" for k in kernels if k.fused_ops and k.evidence.fused_ops == "op"}
    shown |= {"user" for k in kernels if k.dtype is not None and k.evidence.dtype == "user"}
    if not shown:
        return None
    return "; ".join(f"({source}): {EVIDENCE_KEY.get(source, 'its evidence')}" for source in sorted(shown))


def kind_text(kernel: KernelName) -> str:
    """``pointwise/cublas (part of gemm)``: a kernel's kind and family, and the work a helper
    kernel belongs to (``part_of``), as every one-line description of a kernel starts (a diff's
    lines, a baseline failure's, the timeline page's side-by-side rows). In the words of the
    kernel table's ``part of`` column: a trial saw ``scal_kernel`` as ``part of gemm`` in the
    table and as a plain pointwise kernel in the diff."""
    part = f" (part of {kernel.part_of})" if kernel.part_of else ""
    return f"{kernel.kind}/{kernel.family}{part}"


def kernel_cells(k: Kernel) -> tuple[str, str, str, str, str]:
    """A kernel's ``KERNEL_CELLS`` as every kernel table shows them (see ``kernel_table``)."""
    return (
        k.kind if k.evidence.kind in (None, "name") else f"{k.kind} ({k.evidence.kind})",
        f"{k.family} template" if k.template else k.family,
        "?" if k.dtype is None else f"{k.dtype} (user)" if k.evidence.dtype == "user" else k.dtype,
        k.layout or "-",
        _fused_cell(k),
    )


def _fused_cell(k: Kernel) -> str:
    """``bias (op)`` where the fused ops came from the launching op, not the name: the GEMM of an
    fp32 ``aten::addmm`` names no epilogue, and a trial could not tell its ``bias`` from one that
    ``nvjet_..._bias_TNT`` reads in its name. As the kind column marks a kind the op gave."""
    if not k.fused_ops:
        return "-"
    ops = ",".join(k.fused_ops)
    return f"{ops} (op)" if k.evidence.fused_ops == "op" else ops


def kernel_table(
    kernels: Sequence[Kernel],
    positions: Sequence[int] | None = None,
    marked: frozenset[int] = frozenset(),
    *,
    medians: bool = False,
    call: int | None = None,
    medians_beside: Sequence[float] | None = None,
) -> str:
    """The kernels as a table; ``positions`` numbers the rows (a selection keeps its call's numbers),
    and rows whose number is in ``marked`` get a ``*`` before it. A kind that was not read from
    the name says where it came from: ``gemm (op)``, ``attention (user)``; a kernel generated from
    a template says so after its family (``inductor template``). ``dtype`` is ``?`` where no
    evidence gave it, and a taught one says so as a taught kind does (``bf16 (user)``); a
    ``part of`` column names the work a helper kernel belongs to, in tables that have one
    (cuBLAS's ``scal_kernel`` is ``part of gemm``). The time column says whose
    times it holds: ``median us`` where ``medians`` (each kernel's median over the calls, which no
    one call need have), ``call 1 us`` where they are the own times of the call numbered ``call``
    (``kernelprof show``'s), ``us`` where they are one call's own and the table does not know which.
    ``medians_beside``: each kernel's median over the calls, in a ``median us`` column after the
    call's own (``kernelprof show``'s: a failure's figures are all in it, and the call's column
    still adds up to its time in kernels). Where a cell has a ``(source)``, a last line says what
    each means (``evidence_key``)."""
    numbers = range(len(kernels)) if positions is None else positions
    helpers = any(k.part_of for k in kernels)
    beside: list[tuple[str, ...]] = [()] * len(kernels)
    if medians_beside is not None:
        beside = [(format_us(us),) for us in medians_beside]
    rows = [
        (
            f"*{i}" if i in marked else str(i),
            *(cells := kernel_cells(k))[:1],
            *((k.part_of or "-",) if helpers else ()),
            *cells[1:],
            format_us(k.duration_us),
            *median,
            k.op or "-",
            display_name(k.name),
        )
        for i, k, median in zip(numbers, kernels, beside, strict=True)
    ]
    time = "median us" if medians else "us" if call is None else f"call {call} us"
    times = (time,) if medians_beside is None else (time, "median us")
    headers = ("#", KERNEL_CELLS[0], *(("part of",) if helpers else ()), *KERNEL_CELLS[1:], *times)
    right = (0, *range(len(headers) - len(times), len(headers)))
    table = render_table((*headers, "launched by", "name"), rows, right=right)
    key = evidence_key(kernels)
    return table if key is None else f"{table}\n{key}"


class KernelNames(list[str]):
    """The names of a list's kernels (``prof.kernels.names``): a plain list, equal to one, that
    the assertion report knows to explain (the names as the kernel table shows them, where the
    two lists part) rather than leave to pytest's diff of whole demangled names.

    ``in`` asks for an exact name, as on the kernels: a string that is no name here but, read as
    a glob, matches some (``"triton_*" in prof.kernels.names``) is a :class:`QueryError`, where
    ``assert "triton_*" not in prof.kernels.names`` would pass on the Triton kernels it forbids."""

    __slots__ = ()

    def __contains__(self, item: object) -> bool:
        __tracebackhide__ = True
        if super().__contains__(item):
            return True
        if isinstance(item, str) and GLOB.search(item):
            globbed = [name for name in self if name_matches(name, item)]
            if globbed:
                instead = f"prof.kernels.count({item!r}) > 0 (or == 0 for none)"
                raise QueryError(glob_in_message(item, globbed, "kernel", instead))
        return False
