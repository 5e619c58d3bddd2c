"""Plain-text tables shared by reprs, failure messages and the terminal."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

NAME_WIDTH = 96


def display_name(name: str, width: int = NAME_WIDTH) -> str:
    """A kernel name short enough for a table row.

    C++ kernel names carry a parameter list and nested template arguments that run to
    hundreds of characters; the head and the functor are what a reader needs.
    """
    text = name[5:] if name.startswith("void ") else name
    depth = 0
    for index, char in enumerate(text):
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
        elif char == "(" and depth == 0 and index > 0:
            text = text[:index]
            break
    if len(text) <= width:
        return text
    keep = width - 3
    return text[: keep * 2 // 3] + "..." + text[len(text) - (keep - keep * 2 // 3) :]


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
