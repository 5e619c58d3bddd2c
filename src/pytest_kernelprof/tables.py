"""Plain-text tables shared by reprs, failure messages and the terminal."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

NAME_WIDTH = 96


def display_name(name: str, width: int = NAME_WIDTH) -> str:
    """A kernel name short enough for a table row.

    C++ kernel names carry a parameter list and nested template arguments that run to
    hundreds of characters; the kernel's own name and its functor are what a reader needs.
    So, until the name fits: the parameter list goes, then the namespaces and the lambdas'
    enclosing calls inside the template arguments (``sin_kernel_cuda(...)``, not its
    ``(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::...``), then the kernel's
    own namespaces, then template argument lists (``<...>``), innermost and longest first.
    A name without any, such as a long Triton name, loses its middle.
    """
    text = _without_parameters(name[5:] if name.startswith("void ") else name)
    if len(text) <= width:
        return text
    split = text.find("<")
    if split > 0 and _depths_balance(text):
        head, arguments = text[:split], _without_inner_calls(_QUALIFIERS.sub("", text[split:]))
        for shorter in (head + arguments, _QUALIFIERS.sub("", head) + arguments):
            if len(shorter) <= width:
                return shorter
        text = shorter
        while (collapsed := _collapse_longest(text)) is not None:
            text = collapsed
            if len(text) <= width:
                return text
    keep = width - 3
    return text[: keep * 2 // 3] + "..." + text[len(text) - (keep - keep * 2 // 3) :]


_ANONYMOUS = "(anonymous namespace)"
# ``at::native::``, ``(anonymous namespace)::``; not ``Foo<int>::`` nor the ``::`` of ``f(int)::{lambda(int)#1}``.
_QUALIFIERS = re.compile(r"(?:\b[A-Za-z_]\w*::|\(anonymous namespace\)::)+")


def _without_parameters(text: str) -> str:
    """The name up to its parameter list: the first ``(`` outside template arguments that is
    not the ``(anonymous namespace)`` of a qualifier."""
    depth = 0
    for index, char in enumerate(text):
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
        elif char == "(" and depth == 0 and index > 0 and not text.startswith(_ANONYMOUS, index):
            return text[:index]
    return text


def _without_inner_calls(arguments: str) -> str:
    """Template arguments with each function's parameter list, and the lambda chain after it,
    as ``(...)``: from a ``(`` after a name up to the next ``,`` or ``>`` of the same depth."""
    out: list[str] = []
    index = 0
    while index < len(arguments):
        char = arguments[index]
        before = arguments[index - 1] if index else ""
        if char == "(" and (before.isalnum() or before in "_>") and out[-1:] != ["{lambda"]:
            index = _argument_end(arguments, index)
            out.append("(...)")
            continue
        if arguments.startswith("{lambda", index):
            char = "{lambda"
        out.append(char)
        index += len(char)
    return "".join(out)


def _argument_end(text: str, start: int) -> int:
    """Where the template argument that ``text[start]`` is in ends: its ``,`` or closing ``>``."""
    angles = rounds = braces = 0
    for index in range(start, len(text)):
        char = text[index]
        if char in ",>" and angles == rounds == braces == 0:
            return index
        angles += (char == "<") - (char == ">")
        rounds += (char == "(") - (char == ")")
        braces += (char == "{") - (char == "}")
    return len(text)


def _depths_balance(text: str) -> bool:
    depth = 0
    for char in text:
        depth += (char == "<") - (char == ">")
        if depth < 0:
            return False
    return depth == 0


def _collapse_longest(text: str) -> str | None:
    """``text`` with one template argument list as ``<...>``: of those that hold no list
    longer than that, the deepest, then the longest; None where none is longer than that."""
    opened: list[list[int]] = []  # [where, whether a list in it is longer than "..."]
    best: tuple[int, int, int, int] | None = None  # depth, length, start, end
    for index, char in enumerate(text):
        if char == "<":
            opened.append([index, 0])
        elif char == ">":
            start, holds_long = opened.pop()
            long = index - start - 1 > 3
            candidate = (len(opened), index - start, start, index)
            if long and not holds_long and (best is None or candidate[:2] > best[:2]):
                best = candidate
            if long and opened:
                opened[-1][1] = 1
    if best is None:
        return None
    return text[: best[2]] + "<...>" + text[best[3] + 1 :]


def render_table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, right: Iterable[int] = ()) -> str:
    """Columns padded to their widest cell; the columns in ``right`` are right-aligned."""
    all_rows = [list(headers), *[list(row) for row in rows]]
    right_aligned = set(right)
    widths = [max(len(row[i]) for row in all_rows) for i in range(len(headers))]
    lines = []
    for row in all_rows:
        cells = [cell.rjust(widths[i]) if i in right_aligned else cell.ljust(widths[i]) for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def format_us(value: float) -> str:
    return f"{value:.1f}"


def nearest(word: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The candidates closest to ``word``, best first (substring matches count as close)."""
    pool = list(dict.fromkeys(candidates))
    close = difflib.get_close_matches(word, pool, n=n, cutoff=0.3)
    core = word.strip("*?")
    contains = [c for c in pool if core and core.lower() in c.lower() and c not in close]
    return (contains + close)[:n]
