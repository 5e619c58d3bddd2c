"""Plain-text tables shared by reprs, failure messages and the terminal; kernel names as every
output shows them (:func:`display_name`) and the names a user may copy from them (:func:`name_matches`)."""

from __future__ import annotations

import difflib
import fnmatch
import functools
import re
from collections.abc import Iterable, Sequence

from .template_arguments import MARK, UNNAMED, balanced, depths, in_arguments, shortened

NAME_WIDTH = 120
# A shown name longer than this even without its template arguments is no kernel's (the longest
# library and Triton names are under 200 characters, ROCm's Tensile names aside): it loses its
# middle, as any table cell that long does (CELL_WIDTH).
LONGEST_NAME = 256


@functools.lru_cache(maxsize=4096)  # a query tests every kernel, and a profile repeats a few names
def display_name(name: str, width: int = NAME_WIDTH) -> str:
    """A kernel name as tables, failures, diffs, reprs, the job summary and the timeline page
    show it: one rule everywhere, written down in docs/decoding.md ("How names are shown").

    1. The kernel's qualified name (namespaces included) and its template arguments: no return
       type (``void``, cuBLAS's ``std::enable_if<...>::type``), no parameter list.
    2. Inside the template arguments, names without their namespaces (``array``, not
       ``std::array``), a lambda as the function that defines it (``sin_kernel_cuda(...)``, not
       ``sin_kernel_cuda(at::TensorIteratorBase&)::{lambda()#1}::...``) and a lambda in a
       functor's call operator as the functor (``sum_functor<long, long, long>``).
    3. While the name is wider than ``width``, template arguments give way, each written ``...``
       (neighbours as one ``...``): the innermost first, the last of a list first. The first
       argument of a list that names something (has ``<`` or ``(``: a functor, a function, what
       tells ATen's add from its mul) goes only after every other; one of three characters or
       fewer only where it joins a ``...`` beside it (alone, ``...`` would be no shorter).
    4. The qualified name itself is never shortened. A name whose brackets do not close (a
       truncated one) is shown as it is; any name is cut in the middle only beyond
       :data:`LONGEST_NAME` characters.

    Shown again, a shown name stays as it is, so a name copied from any output is shown, and
    matches (:func:`name_is`), as its kernel's.
    """
    text = _function(name).replace(UNNAMED, MARK)
    if "<" in text and balanced(text):
        plain = in_arguments(text, _plain_arguments)
        text = shortened(plain, width) if balanced(plain) else text
    return printable(_without_middle(text.replace(MARK, UNNAMED), max(width, LONGEST_NAME)))


def _without_middle(text: str, width: int) -> str:
    """``text``, or where it is longer than ``width``, its start and end around ``...``."""
    if len(text) <= width:
        return text
    keep = width - 3
    return text[: keep * 2 // 3] + "..." + text[len(text) - (keep - keep * 2 // 3) :]


def name_is(name: str, text: str) -> bool:
    """Whether ``text`` names the kernel ``name`` exactly: its whole name, without a leading
    ``void ``, or as every output shows it (:func:`display_name`). What ``in`` and ``==`` ask."""
    return text == name or text == name.removeprefix("void ") or text == display_name(name)


def name_matches(name: str, pattern: str) -> bool:
    """Whether the glob ``pattern`` matches the kernel ``name``: the whole name, without a leading
    ``void ``, or as every output shows it; and a shown name copied whole matches its kernel,
    though a glob reads its brackets and ``*`` (``array<char*, 3ul>``) as patterns."""
    if name_is(name, pattern) or fnmatch.fnmatchcase(name, pattern):
        return True
    if name.startswith("void ") and fnmatch.fnmatchcase(name[len("void ") :], pattern):
        return True
    return fnmatch.fnmatchcase(display_name(name), pattern)


_ANONYMOUS = "(anonymous namespace)"
# ``at::native::``, ``(anonymous namespace)::``; not ``Foo<int>::`` nor the ``::`` of ``f(int)::{lambda(int)#1}``.
_QUALIFIERS = re.compile(r"(?:\b[A-Za-z_]\w*::|\(anonymous namespace\)::|\ue000::)+")


def _plain_arguments(arguments: str) -> str:
    """Template arguments without namespaces and inner calls (step 2), written so that doing it
    again changes nothing: a name shown again stays as it is."""
    for _ in range(4):  # a real name needs one pass; text crafted to nest qualifiers, a few
        plain = _without_inner_calls(_QUALIFIERS.sub("", arguments))
        if plain == arguments:
            break
        arguments = plain
    return arguments


def _function(name: str) -> str:
    """The kernel's qualified name and template arguments: without its parameter list and,
    where it has one (a C++ signature), the return type before it (the text up to the last space
    outside brackets); a name without one (a truncated name) loses only a leading ``void ``."""
    text = _without_parameters(name).rstrip()
    if text == name.rstrip():
        plain = text
        while plain.startswith("void "):
            plain = plain[len("void ") :]
        return plain or text
    start = 0
    for index, char, angles, rounds in depths(text):
        if char == " " and angles == rounds == 0:
            start = index + 1
    return text[start:] or text


def _without_parameters(text: str) -> str:
    """The name up to its parameter list: the first ``(`` outside template arguments that is
    not the ``(anonymous namespace)`` of a qualifier."""
    for index, char, angles, rounds in depths(text):
        if char == "(" and angles == rounds == 0 and index > 0 and not text.startswith(_ANONYMOUS, index):
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
        if arguments.startswith("::operator()(", index):  # a lambda in a functor's call operator: the functor
            index = _argument_end(arguments, index)
            continue
        if arguments.startswith("{lambda", index):
            char = "{lambda"
        out.append(char)
        index += len(char)
    return "".join(out)


def _argument_end(text: str, start: int) -> int:
    """Where the template argument that ``text[start]`` is in ends: its ``,`` or closing ``>``,
    or the ``)`` that closes the parentheses it is in (``&(void f<int>(int))``)."""
    for index, char, angles, rounds in depths(text[start:]):
        if (char in ",>" or char in ")}") and angles == rounds == 0:
            return start + index
    return len(text)


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


def format_share(fraction: float) -> str:
    """A share as a whole percentage (``38%``), ``>99%`` or ``<1%`` where it rounds to all or none
    without being so: a call whose GPU did 2.6us of work in a 1336.4us host span read "idle 100%"."""
    shown = f"{fraction:.0%}"
    if shown == "100%" and fraction < 1:
        return ">99%"
    if shown == "0%" and fraction > 0:
        return "<1%"
    return shown


def plural(count: int, word: str) -> str:
    """``1 call``, ``3 calls``, ``2 copies``: the one way a count and its noun are written."""
    if count == 1:
        return f"{count} {word}"
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "i", "o", "u"):
        return f"{count} {word[:-1]}ies"
    return f"{count} {word}s"


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


# A user's text on one line of an output (a test id, a check name, a sweep's bucket: any length).
CLIP_TEXT = 300


def clip(text: str, most: int = CLIP_TEXT) -> str:
    """``text`` within ``most`` characters: its start and its end (a test id's parameters end
    it) around a ``[...N chars...]`` that says how much was left out."""
    if len(text) <= most:
        return text
    mark = f"[...{len(text) - most} chars...]"
    keep = max(most - len(mark), 2)
    head = keep * 2 // 3
    return text[:head] + mark + text[len(text) - (keep - head) :]


def changed_parts(a: str, b: str, most: int = 3) -> str:
    """What changed between two names, token by token, each change once with how often it
    came: ``c10::BFloat16 -> float (2 places)``."""
    tokens_a, tokens_b = _TOKEN.findall(a[:_LONGEST]), _TOKEN.findall(b[:_LONGEST])
    changes: dict[tuple[str, str], int] = {}
    matcher = difflib.SequenceMatcher(None, tokens_a, tokens_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            change = ("".join(tokens_a[i1:i2]).strip() or "(nothing)", "".join(tokens_b[j1:j2]).strip() or "(nothing)")
            changes[change] = changes.get(change, 0) + 1
    shown = [
        f"{printable(old)} -> {printable(new)}" + (f" ({count} places)" if count > 1 else "")
        for (old, new), count in list(changes.items())[:most]
    ]
    if not shown:
        return f"past the first {_LONGEST} characters"
    more = f"; {len(changes) - most} more" if len(changes) > most else ""
    return "; ".join(shown) + more


# The part of a name compared token by token: the matcher's time grows with the square of the
# tokens, and a kernel name of a few KB is already a long one.
_LONGEST = 4096
# A C++ name's tokens: qualified identifiers (c10::BFloat16) and numbers whole, each other character alone.
_TOKEN = re.compile(r"[A-Za-z_0-9]+(?:::[A-Za-z_0-9]+)*|\s+|.")
