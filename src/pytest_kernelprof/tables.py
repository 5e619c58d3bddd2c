"""Plain-text tables shared by reprs, failure messages and the terminal."""

from __future__ import annotations

import difflib
import heapq
import re
from collections.abc import Callable, Iterable, Sequence

NAME_WIDTH = 96


def display_name(name: str, width: int = NAME_WIDTH) -> str:
    """A kernel name as tables, failures, diffs and reprs show it: one rule everywhere.

    C++ kernel names carry a return type, a parameter list and nested template arguments that
    run to hundreds of characters; the kernel's qualified name (namespaces included) and its
    functor are what a reader needs. So the return type (``void``, cuBLAS's ``std::enable_if<...>::type``)
    and the parameter list always go, and so do, inside the template arguments, the namespaces and
    the lambdas' enclosing calls (``sin_kernel_cuda(...)``, not its ``(at::TensorIteratorBase&)::
    {lambda()#1}::operator()() const::...``). Then, until the name fits, template argument lists
    become ``<...>``, innermost and longest first: the qualified name itself is never shortened.
    A name still too long, or without balanced brackets (a long Triton name, a truncated one),
    loses its middle.
    """
    text = _function(name).replace(_UNNAMED, _MARK)
    if _depths_balance(text):
        text = _in_arguments(text, lambda arguments: _without_inner_calls(_QUALIFIERS.sub("", arguments)))
        text = _collapsed(text, width)
    return printable(_without_middle(text.replace(_MARK, _UNNAMED), width))


def _without_middle(text: str, width: int) -> str:
    """``text``, or where it is longer than ``width``, its start and end around ``...``."""
    if len(text) <= width:
        return text
    keep = width - 3
    return text[: keep * 2 // 3] + "..." + text[len(text) - (keep - keep * 2 // 3) :]


_ANONYMOUS = "(anonymous namespace)"
# Some demanglers (nsys) write the anonymous namespace ``<unnamed>``: a namespace, not template
# arguments, so it stands as one character while brackets are counted.
_UNNAMED, _MARK = "<unnamed>", "\ue000"
# ``at::native::``, ``(anonymous namespace)::``; not ``Foo<int>::`` nor the ``::`` of ``f(int)::{lambda(int)#1}``.
_QUALIFIERS = re.compile(r"(?:\b[A-Za-z_]\w*::|\(anonymous namespace\)::|\ue000::)+")


def _shown_length(text: str) -> int:
    return len(text) + text.count(_MARK) * (len(_UNNAMED) - 1)


def _function(name: str) -> str:
    """The kernel's qualified name and template arguments: without its parameter list and
    without the return type before it (the text up to the last space outside brackets)."""
    text = _without_parameters(name).rstrip()
    angles = rounds = braces = 0
    start = 0
    for index, char in enumerate(text):
        angles += (char == "<") - (char == ">")
        rounds += (char == "(") - (char == ")")
        braces += (char == "{") - (char == "}")
        if char == " " and angles == rounds == braces == 0:
            start = index + 1
    return text[start:] or text


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


def _in_arguments(text: str, change: Callable[[str], str]) -> str:
    """``text`` with ``change`` applied to each outermost template argument list (``<`` to ``>``)."""
    out: list[str] = []
    depth = opened = 0
    for index, char in enumerate(text):
        if char == "<":
            if depth == 0:
                out.append(text[opened:index])
                opened = index
            depth += 1
        elif char == ">":
            depth -= 1
            if depth == 0:
                out.append(change(text[opened : index + 1]))
                opened = index + 1
    out.append(text[opened:])
    return "".join(out)


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


def _collapsed(text: str, width: int) -> str:
    """``text`` with template argument lists as ``<...>``, one at a time until it fits ``width``:
    of the lists that hold no list longer than ``...``, the deepest, then the longest, then the
    first. The lists are found in one pass and picked from a heap, so a crafted name of 40 KB
    takes milliseconds (a pass over the name per list took 20 s).

    A list becomes a candidate once no list in it is longer than ``...``; its length is then its
    own, less what each list directly in it lost when it became ``<...>``. A ``<`` that no ``>``
    closes is no list, but the lists in it count it as theirs."""
    starts: list[int] = []
    ends: list[int] = []
    parents: list[int] = []
    depths: list[int] = []
    shown: list[int] = []  # the text between the brackets as shown: marks before the "<", then its length
    opened: list[int] = []
    marks = 0
    for index, char in enumerate(text):
        if char == "<":
            parents.append(opened[-1] if opened else -1)
            depths.append(len(opened))
            opened.append(len(starts))
            starts.append(index)
            ends.append(index)
            shown.append(marks)
        elif char == ">" and opened:
            i = opened.pop()
            ends[i] = index
            shown[i] = index - starts[i] - 1 + (marks - shown[i]) * (len(_UNNAMED) - 1)
        elif char == _MARK:
            marks += 1
    for i in opened:
        shown[i] = -1
    inside = [end - start - 1 for start, end in zip(starts, ends, strict=True)]  # -1 for a list left open
    inside_shown, lengths = shown[:], inside[:]  # as it was, and as it is now
    long_inside = [0] * len(starts)
    for i, parent in enumerate(parents):
        if inside[i] > 3 and parent >= 0:
            long_inside[parent] += 1
    heap = [(-depths[i], -inside[i], starts[i], i) for i in range(len(starts)) if inside[i] > 3 and not long_inside[i]]
    heapq.heapify(heap)
    total = _shown_length(text)
    collapsed: list[int] = []
    while total > width and heap:
        i = heapq.heappop(heap)[3]
        collapsed.append(i)
        total -= shown[i] - 3
        parent = parents[i]
        if parent >= 0:  # all of the list's text became "...", what it had lost before included
            lengths[parent] -= inside[i] - 3
            shown[parent] -= inside_shown[i] - 3
            long_inside[parent] -= 1
            if not long_inside[parent] and inside[parent] >= 0:  # it holds "<...>": longer than "..."
                heapq.heappush(heap, (-depths[parent], -lengths[parent], starts[parent], parent))
    out: list[str] = []
    done = 0
    for i in sorted(collapsed, key=starts.__getitem__):
        if starts[i] >= done:  # not inside a list collapsed after it
            out += (text[done : starts[i]], "<...>")
            done = ends[i] + 1
    out.append(text[done:])
    return "".join(out)


# The widest a table's cell is shown: a column is padded to its widest cell, so one op name of
# 100 KB in a trace made every row of the kernel table 100 KB wide (200 MB for 2,000 kernels).
CELL_WIDTH = 256


def render_table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, right: Iterable[int] = ()) -> str:
    """Columns padded to their widest cell; the columns in ``right`` are right-aligned. Each
    cell is shown :func:`printable` (a name from a trace stays on its row) and at most
    ``CELL_WIDTH`` characters wide, a longer one without its middle."""
    all_rows = [[_without_middle(printable(cell), CELL_WIDTH) for cell in row] for row in (headers, *rows)]
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


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(char: str) -> str:
    code = ord(char)
    if char in _ESCAPES:
        return _ESCAPES[char]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str) -> str:
    """``text`` (a name from a trace, say) as it can be shown on one line of a terminal or a CI
    log: each character that is not printable (a newline, a carriage return, an ANSI escape, a
    line separator) as its Python escape (``\\n``, ``\\x1b``, ``\\u2028``), and a ``::`` that would
    start the line written ``\\x3a:``, so that no name becomes a GitHub Actions workflow command
    (the runner reads a line that starts with ``::``, spaces before it allowed, as one)."""
    if text.isprintable() and not text.lstrip(" ").startswith("::"):
        return text
    shown = "".join(char if char.isprintable() else _escaped(char) for char in text)
    start = len(shown) - len(shown.lstrip(" "))
    if shown.startswith("::", start):
        shown = shown[:start] + "\\x3a" + shown[start + 1 :]
    return shown
