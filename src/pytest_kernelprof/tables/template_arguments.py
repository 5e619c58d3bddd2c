"""A kernel name's template arguments, for :func:`~pytest_kernelprof.tables.display_name`: where
they open and close, and how they give way, one at a time, to fit a width (its rule's step 3)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

# Names longer than this, or nested deeper, are shortened whole: their template arguments as ``<...>``.
_PARSED_CHARS, _PARSED_DEPTH, _PARSED_ARGUMENTS = 4096, 32, 256


# Some demanglers (nsys) write the anonymous namespace ``<unnamed>``: a namespace, not template
# arguments, so it stands as one character while brackets are counted.
UNNAMED, MARK = "<unnamed>", "\ue000"
DROPPED = "..."


def shown_length(text: str) -> int:
    return len(text) + text.count(MARK) * (len(UNNAMED) - 1)


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
        return DROPPED if self.dropped else "".join(p if isinstance(p, str) else p.text() for p in self.parts)

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
            if not (text == DROPPED and shown and shown[-1] == DROPPED):
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
            argument = _Argument(parts, depth, dropped=parts == [DROPPED])
            for held in (a for part in parts if not isinstance(part, str) for a in part.arguments):
                held.outer = argument
            found.arguments.append(argument)
            if char == ">":
                return found, index + 1
            parts, at = [], index + 1
        rounds += (char in "({") - (char in ")}")
        index += 1
    raise ValueError(f"unbalanced template arguments: {text!r}")  # balanced() says they are not


def _in_order(node: _Arguments) -> Iterator[tuple[_Arguments, _Argument]]:
    """The arguments of ``node`` and of the lists in them, in text order, each with its list."""
    for argument in node.arguments:
        yield node, argument
        for part in argument.parts:
            if not isinstance(part, str):
                yield from _in_order(part)


def shortened(text: str, width: int) -> str:
    """``text`` (a qualified name and its template arguments, balanced) with template arguments
    given way to fit ``width``, in the order :func:`display_name` says."""
    if len(text) > _PARSED_CHARS or max(angles for *_, angles, _ in depths(text)) > _PARSED_DEPTH:
        return in_arguments(text, lambda _: "<...>")
    pieces = _pieces(text)
    found = [entry for piece in pieces if not isinstance(piece, str) for entry in _in_order(piece)]
    if len(found) > _PARSED_ARGUMENTS:
        return in_arguments(text, lambda _: "<...>")
    firsts = {id(next((a for a in node.arguments if a.names_something()), None)) for node, _ in found}
    # Deepest first, the last first.
    order = [entry for _, entry in sorted(enumerate(found), key=lambda e: (-e[1][1].depth, -e[0]))]
    length = shown_length(_joined(pieces))

    def drop(node: _Arguments, argument: _Argument) -> None:
        nonlocal length
        if not argument.shown():
            return
        before = shown_length(node.text())
        argument.dropped = True
        length += shown_length(node.text()) - before

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
                        and len(argument.text()) <= len(DROPPED)
                        and _beside_dropped(node, argument)
                    ):
                        drop(node, argument)
                        joined = True

    for depth in sorted({a.depth for _, a in found}, reverse=True):
        for node, argument in order:
            if length <= width:
                return _joined(pieces)
            if argument.depth == depth and id(argument) not in firsts and len(argument.text()) > len(DROPPED):
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
    at = rounds = 0
    while at < len(text):
        if text[at] == "<" and rounds == 0:
            node, at = _parse(text, at + 1, 1, spaced)
            pieces.append(node)
            continue
        # up to the next "<" outside parentheses (one inside them is a comparison)
        after = at
        while after < len(text) and not (text[after] == "<" and rounds == 0):
            rounds += (text[after] in "({") - (text[after] in ")}")
            after += 1
        pieces.append(text[at:after])
        at = after
    return pieces


def _joined(pieces: Sequence[str | _Arguments]) -> str:
    return "".join(p if isinstance(p, str) else p.text() for p in pieces)


def _beside_dropped(node: _Arguments, argument: _Argument) -> bool:
    at = node.arguments.index(argument)
    return any(0 <= i < len(node.arguments) and node.arguments[i].dropped for i in (at - 1, at + 1))


def depths(text: str) -> Iterator[tuple[int, str, int, int]]:
    """(index, character, template depth, bracket depth) of each character of ``text``, the depths
    before it: ``<`` and ``>`` count only outside parentheses and braces, where they are
    comparisons (``enable_if<((8)>(0))>``), and brackets count ``(`` and ``{``."""
    angles = rounds = 0
    for index, char in enumerate(text):
        yield index, char, angles, rounds
        if rounds == 0:
            angles += (char == "<") - (char == ">")
        rounds += (char in "({") - (char in ")}")


def in_arguments(text: str, change: Callable[[str], str]) -> str:
    """``text`` with ``change`` applied to each outermost template argument list (``<`` to ``>``)."""
    out: list[str] = []
    opened = 0
    for index, char, angles, rounds in depths(text):
        if rounds == 0 and char == "<" and angles == 0:
            out.append(text[opened:index])
            opened = index
        elif rounds == 0 and char == ">" and angles == 1:
            out.append(change(text[opened : index + 1]))
            opened = index + 1
    out.append(text[opened:])
    return "".join(out)


def balanced(text: str) -> bool:
    """Whether every bracket of ``text`` closes, and in order (a truncated name's do not)."""
    angles = rounds = 0
    for char in text:
        if rounds == 0:
            angles += (char == "<") - (char == ">")
        rounds += (char in "({") - (char in ")}")
        if angles < 0 or rounds < 0:
            return False
    return angles == rounds == 0
