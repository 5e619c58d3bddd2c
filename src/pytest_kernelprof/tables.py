"""Plain-text tables shared by reprs, failure messages and the terminal; kernel names as every
output shows them (:func:`display_name`) and the names a user may copy from them (:func:`name_matches`)."""

from __future__ import annotations

import difflib
import fnmatch
import functools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

NAME_WIDTH = 120
# A shown name longer than this even without its template arguments is no kernel's (the longest
# library and Triton names are under 200 characters): a hostile or corrupt trace's, it loses its middle.
LONGEST_NAME = 256
# Names longer than this, or nested deeper, are shortened whole: their template arguments as ``<...>``.
_PARSED_CHARS, _PARSED_DEPTH, _PARSED_ARGUMENTS = 4096, 32, 256


@functools.lru_cache(maxsize=4096)  # a query tests every kernel, and a profile repeats a few names
def display_name(name: str, width: int = NAME_WIDTH) -> str:
    """A kernel name as tables, failures, diffs, reprs, the job summary and the timeline page
    show it: one rule everywhere, written down in docs/decoding.md ("How names are shown").

    1. The kernel's qualified name (namespaces included) and its template arguments: no return
       type (``void``, cuBLAS's ``std::enable_if<...>::type``), no parameter list.
    2. Inside the template arguments, names without their namespaces (``array``, not
       ``std::array``) and a lambda as the function that defines it (``sin_kernel_cuda(...)``,
       not ``sin_kernel_cuda(at::TensorIteratorBase&)::{lambda()#1}::...``).
    3. While the name is wider than ``width``, template arguments give way, each written ``...``
       (neighbours as one ``...``): the innermost first, the last of a list first; the first
       argument of a list that names a functor or a function (has ``<`` or ``(``: what tells
       ATen's add from its mul) only after every other argument; an argument of three characters
       or fewer never (``...`` would be no shorter). The qualified name itself is never shortened.

    A name with unbalanced brackets (a truncated one) is shown as it is, and any name is cut
    in the middle only beyond :data:`LONGEST_NAME` characters. Shortening a shown name again
    gives it back unchanged.
    """
    text = _function(name).replace(_UNNAMED, _MARK)
    if "<" in text and _balanced(text):
        plain = _in_arguments(text, _plain_arguments)
        text = _shortened(plain, width) if _balanced(plain) else text
    text = text.replace(_MARK, _UNNAMED)
    if len(text) > max(width, LONGEST_NAME):
        keep = max(width, LONGEST_NAME) - 3
        text = text[: keep * 2 // 3] + "..." + text[len(text) - (keep - keep * 2 // 3) :]
    return printable(text)


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
# Some demanglers (nsys) write the anonymous namespace ``<unnamed>``: a namespace, not template
# arguments, so it stands as one character while brackets are counted.
_UNNAMED, _MARK = "<unnamed>", "\ue000"
# ``at::native::``, ``(anonymous namespace)::``; not ``Foo<int>::`` nor the ``::`` of ``f(int)::{lambda(int)#1}``.
_QUALIFIERS = re.compile(r"(?:\b[A-Za-z_]\w*::|\(anonymous namespace\)::|\ue000::)+")
_DROPPED = "..."


def _plain_arguments(arguments: str) -> str:
    return _without_inner_calls(_QUALIFIERS.sub("", arguments))


def _shown_length(text: str) -> int:
    return len(text) + text.count(_MARK) * (len(_UNNAMED) - 1)


@dataclass(eq=False)
class _Argument:
    """One template argument: text and the argument lists in it, in order."""

    parts: list[str | _Arguments]
    depth: int  # 1 for an argument of the kernel's own list
    dropped: bool = False
    outer: _Argument | None = None  # the argument whose list holds this one

    def shown(self) -> bool:
        """Whether it is in the name: neither it nor an argument around it is ``...``."""
        argument: _Argument | None = self
        while argument is not None:
            if argument.dropped:
                return False
            argument = argument.outer
        return True

    def text(self) -> str:
        return _DROPPED if self.dropped else "".join(p if isinstance(p, str) else p.text() for p in self.parts)

    def names_something(self) -> bool:
        """Whether it names a functor or a function (a type with arguments, a call), not a
        number or a plain type."""
        return any(not isinstance(p, str) or "(" in p for p in self.parts)


@dataclass(eq=False)
class _Arguments:
    """A template argument list, ``<`` to ``>``, as the name writes it: the separator, and
    whether a ``>`` after a ``>`` has a space before it (``array<char*, 3ul> >``)."""

    arguments: list[_Argument] = field(default_factory=list)
    separator: str = ", "
    spaced: bool = False

    def text(self) -> str:
        shown: list[str] = []
        for argument in self.arguments:
            text = argument.text()
            if not (text == _DROPPED and shown and shown[-1] == _DROPPED):
                shown.append(text)
        inside = self.separator.join(shown)
        return f"<{inside}{' ' if self.spaced and inside.endswith('>') else ''}>"


def _parse(text: str, start: int, depth: int, spaced: bool) -> tuple[_Arguments, int]:
    """The argument list that opens at ``text[start - 1]`` (a ``<``) and where it ends (after its ``>``)."""
    found = _Arguments(spaced=spaced)
    parts: list[str | _Arguments] = []
    at = index = start
    rounds = 0
    while index < len(text):
        char = text[index]
        if char == "<" and rounds == 0:
            parts.append(text[at:index])
            inner, index = _parse(text, index + 1, depth + 1, spaced)
            parts.append(inner)
            at = index
            continue
        if char in ",>" and rounds == 0:
            parts.append(text[at:index])
            if isinstance(parts[0], str):
                parts[0] = parts[0].lstrip(" ")
            if isinstance(parts[-1], str):
                parts[-1] = parts[-1].rstrip(" ")
            parts = [p for p in parts if p != ""]
            if char == "," and not text.startswith(" ", index + 1):
                found.separator = ","
            argument = _Argument(parts, depth, dropped=parts == [_DROPPED])
            for inner in (a for part in parts if not isinstance(part, str) for a in part.arguments):
                inner.outer = argument
            found.arguments.append(argument)
            if char == ">":
                return found, index + 1
            parts, at = [], index + 1
        rounds += (char in "({") - (char in ")}")
        index += 1
    raise ValueError(f"unbalanced template arguments: {text!r}")  # _balanced() says they are not


def _in_order(node: _Arguments) -> Iterator[tuple[_Arguments, _Argument]]:
    """The arguments of ``node`` and of the lists in them, in text order, each with its list."""
    for argument in node.arguments:
        yield node, argument
        for part in argument.parts:
            if not isinstance(part, str):
                yield from _in_order(part)


def _shortened(text: str, width: int) -> str:
    """``text`` (a qualified name and its template arguments, balanced) with template arguments
    given way to fit ``width``, in the order :func:`display_name` says."""
    if len(text) > _PARSED_CHARS or max(angles for *_, angles, _ in _depths(text)) > _PARSED_DEPTH:
        return _in_arguments(text, lambda _: "<...>")
    pieces = _pieces(text)
    found = [entry for piece in pieces if not isinstance(piece, str) for entry in _in_order(piece)]
    if len(found) > _PARSED_ARGUMENTS:
        return _in_arguments(text, lambda _: "<...>")
    firsts = {id(next((a for a in node.arguments if a.names_something()), None)) for node, _ in found}
    # Deepest first, the last first.
    order = [entry for _, entry in sorted(enumerate(found), key=lambda e: (-e[1][1].depth, -e[0]))]
    length = _shown_length(_joined(pieces))

    def drop(node: _Arguments, argument: _Argument) -> None:
        nonlocal length
        if not argument.shown():
            return
        before = _shown_length(node.text())
        argument.dropped = True
        length += _shown_length(node.text()) - before

    def join(nodes: Iterable[_Arguments]) -> None:
        """The short arguments of ``nodes`` join a ``...`` beside them, while the name is too wide."""
        nodes = list(nodes)
        joined = True
        while joined and length > width:
            joined = False
            for node in nodes:
                for argument in node.arguments:
                    if (
                        length > width
                        and not argument.dropped
                        and id(argument) not in firsts
                        and len(argument.text()) <= len(_DROPPED)
                        and _beside_dropped(node, argument)
                    ):
                        drop(node, argument)
                        joined = True

    for depth in sorted({a.depth for _, a in found}, reverse=True):
        for node, argument in order:
            if length <= width:
                return _joined(pieces)
            if argument.depth == depth and id(argument) not in firsts and len(argument.text()) > len(_DROPPED):
                drop(node, argument)
        join(dict.fromkeys(node for node, a in found if a.depth == depth))
    for node, argument in order:
        if length <= width:
            break
        if id(argument) in firsts:
            drop(node, argument)
            join([node])
    return _joined(pieces)


def _pieces(text: str) -> list[str | _Arguments]:
    """``text`` as its qualified name's parts and its template argument lists: usually one
    list, two for ``Outer<...>::Kernel<...>``."""
    # Demanglers write "> >" (and the name is written so once its lambdas are functors) or ">>".
    spaced = "> >" in text or ">>" not in text
    pieces: list[str | _Arguments] = []
    at = 0
    while at < len(text):
        if text[at] == "<":
            node, at = _parse(text, at + 1, 1, spaced)
            pieces.append(node)
        else:
            after = text.find("<", at)
            after = len(text) if after < 0 else after
            pieces.append(text[at:after])
            at = after
    return pieces


def _joined(pieces: Sequence[str | _Arguments]) -> str:
    return "".join(p if isinstance(p, str) else p.text() for p in pieces)


def _beside_dropped(node: _Arguments, argument: _Argument) -> bool:
    at = node.arguments.index(argument)
    return any(0 <= i < len(node.arguments) and node.arguments[i].dropped for i in (at - 1, at + 1))


def _depths(text: str) -> Iterator[tuple[int, str, int, int]]:
    """(index, character, template depth, bracket depth) of each character of ``text``, the depths
    before it: ``<`` and ``>`` count only outside parentheses and braces, where they are
    comparisons (``enable_if<((8)>(0))>``), and brackets count ``(`` and ``{``."""
    angles = rounds = 0
    for index, char in enumerate(text):
        yield index, char, angles, rounds
        if rounds == 0:
            angles += (char == "<") - (char == ">")
        rounds += (char in "({") - (char in ")}")


def _function(name: str) -> str:
    """The kernel's qualified name and template arguments: without its parameter list and,
    where it has one (a C++ signature), the return type before it (the text up to the last space
    outside brackets); a name without one (a truncated name) loses only a leading ``void ``."""
    text = _without_parameters(name).rstrip()
    if text == name.rstrip():
        return text.removeprefix("void ") or text
    start = 0
    for index, char, angles, rounds in _depths(text):
        if char == " " and angles == rounds == 0:
            start = index + 1
    return text[start:] or text


def _without_parameters(text: str) -> str:
    """The name up to its parameter list: the first ``(`` outside template arguments that is
    not the ``(anonymous namespace)`` of a qualifier."""
    for index, char, angles, rounds in _depths(text):
        if char == "(" and angles == rounds == 0 and index > 0 and not text.startswith(_ANONYMOUS, index):
            return text[:index]
    return text


def _in_arguments(text: str, change: Callable[[str], str]) -> str:
    """``text`` with ``change`` applied to each outermost template argument list (``<`` to ``>``)."""
    out: list[str] = []
    opened = 0
    for index, char, angles, rounds in _depths(text):
        if rounds == 0 and char == "<" and angles == 0:
            out.append(text[opened:index])
            opened = index
        elif rounds == 0 and char == ">" and angles == 1:
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
    for index, char, angles, rounds in _depths(text[start:]):
        if (char in ",>" or char in ")}") and angles == rounds == 0:
            return start + index
    return len(text)


def _balanced(text: str) -> bool:
    """Whether every bracket of ``text`` closes, and in order (a truncated name's do not)."""
    angles = rounds = 0
    for char in text:
        if rounds == 0:
            angles += (char == "<") - (char == ">")
        rounds += (char in "({") - (char in ")}")
        if angles < 0 or rounds < 0:
            return False
    return angles == rounds == 0


def render_table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, right: Iterable[int] = ()) -> str:
    """Columns padded to their widest cell; the columns in ``right`` are right-aligned. Each
    cell is shown :func:`printable`: a name from a trace stays on its row."""
    all_rows = [[printable(cell) for cell in row] for row in (headers, *rows)]
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
