"""The Markdown section appended to a GitHub Actions job summary ($GITHUB_STEP_SUMMARY or
``--kernelprof-summary=PATH``) at the end of the session.

Three parts, each left out when empty, each worst first and cut at a limit with a count
of the rest: the tests that failed on their profiles, by category worst first (rule breaks,
baseline regressions, profiles with no GPU activity, syncs, kernel assertions, ... as
``categories.py`` orders them) and within a category by file and line (a run's order under
xdist is no order to read in), each with its whole message (the kernel table or diff, as
``plugin/ci.py`` recorded it, not as the terminal cut it) folded under a ``<details>``;
what the run did to baselines (written, updated, improved, unused); the kernel names the
decoder could not place, the most frequent first; then the lines ``pytest_kernelprof_summary``
implementations add. Nothing is written where there is nothing to say.

It reads each test's record (records.py), as the run's books merged them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..tables import display_name, printable
from .categories import ORDER, words
from .records import Failure, ReportRecord

MAX_FAILURES = 10
MAX_NAMED = 300  # failed tests past MAX_FAILURES named in one line
MAX_NAMES = 15
MAX_BASELINE_LINES = 20


def _fence(text: str) -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}text\n{text}\n{ticks}"


def _code(text: str) -> str:
    """A Markdown code span: its text is shown as it is (no Markdown, no HTML), on one line."""
    return "`" + printable(text).replace("`", "'") + "`"


def _cell(text: str) -> str:
    return _code(text).replace("|", "\\|")


def _location(failure: Failure, rootpath: Path, *, line: bool = True) -> str:
    file = Path(failure.file)
    try:
        shown = file.resolve().relative_to(rootpath.resolve()).as_posix()
    except ValueError:
        shown = file.as_posix()
    return f"{shown}:{failure.line}" if failure.line and line else shown


# ``<generator object test_x.<locals>.<genexpr> at 0x7efe0cef4e10>``: an address that changes
# every run, in a summary one compares between runs.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def natural(text: str) -> list[str | int]:
    """``text`` to sort by, its numbers as numbers: ``test_x[2]`` before ``test_x[10]``, as the
    parametrised tests were collected. (The parts alternate text and digits, so two keys compare
    text with text and numbers with numbers.)"""
    return [int(part) if i % 2 else part for i, part in enumerate(_DIGITS.split(text))]


_DIGITS = re.compile(r"(\d+)")


def _failures(tests: Mapping[str, ReportRecord], rootpath: Path) -> list[str]:
    def place(item: tuple[str, Failure]) -> tuple[int, str, int, list[str | int]]:
        nodeid, failure = item
        return (
            ORDER.get(failure.category, len(ORDER)),
            _location(failure, rootpath, line=False),
            failure.line or 0,
            natural(nodeid),
        )

    failed = sorted(((nodeid, test.failure) for nodeid, test in tests.items() if test.failure is not None), key=place)
    if not failed:
        return []
    lines = [_heading([failure.category for _, failure in failed]), ""]
    for nodeid, failure in failed[:MAX_FAILURES]:
        more = f"\n... {failure.more_lines} more lines in the job log" if failure.more_lines else ""
        lines += [
            f"<details><summary><code>{_html(nodeid)}</code> {words(failure.category).what} "
            f"at <code>{_html(_location(failure, rootpath))}</code></summary>",
            "",
            _fence(
                _ADDRESS.sub(" at 0x...", failure.message + (f"\n\n{failure.tables}" if failure.tables else "")) + more
            ),
            "",
            "</details>",
            "",
        ]
    if len(failed) > MAX_FAILURES:
        # Named, in the order above, so that the heading's counts have their tests (their failures
        # are in the job log); a few hundred at most, the summary being one page.
        rest = [f"<code>{_html(nodeid)}</code>" for nodeid, _ in failed[MAX_FAILURES : MAX_FAILURES + MAX_NAMED]]
        unnamed = len(failed) - MAX_FAILURES - len(rest)
        tail = f" and {unnamed} more" if unnamed else ""
        lines += [
            f"... and {len(failed) - MAX_FAILURES} more failed tests (see the job log): {', '.join(rest)}{tail}.",
            "",
        ]
    return lines


def _heading(categories: Sequence[str]) -> str:
    """``### 1 test failed on host syncs``; ``### 3 tests failed: 1 on a kernelprof_forbid rule, 2 on
    kernel assertions``."""
    counts = {c: categories.count(c) for c in sorted(set(categories), key=lambda c: ORDER.get(c, len(ORDER)))}
    said = [(n, words(c).several if n > 1 else words(c).one) for c, n in counts.items()]
    tests = f"{len(categories)} test{'s' if len(categories) != 1 else ''} failed"
    if len(said) == 1:
        return f"### {tests} on {said[0][1]}"
    return f"### {tests}: " + ", ".join(f"{n} on {words}" for n, words in said)


def _html(text: str) -> str:
    """Text inside HTML (the failures' ``<summary>`` lines): on one line, no markup."""
    return printable(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")


def _markdown(text: str) -> str:
    """Text in Markdown (a bold title): on one line, its Markdown and HTML shown as they are."""
    return _MARKDOWN.sub(r"\\\1", _html(text))


def _baselines(sections: Sequence[Sequence[str]]) -> list[str]:
    if not sections:
        return []
    lines = ["### Kernel baselines", ""]
    for title, *rest in sections:
        lines.append(f"**{_markdown(title.removeprefix('kernelprof: '))}**")
        lines.append("")
        shown = rest[:MAX_BASELINE_LINES]
        lines += [f"- {_code(line)}" for line in shown]
        if len(rest) > len(shown):
            lines.append(f"- ... and {len(rest) - len(shown)} more")
        lines.append("")
    return lines


def _names(records: Mapping[str, ReportRecord]) -> list[str]:
    counts: dict[str, int] = {}
    tests: dict[str, set[str]] = {}
    for nodeid, test in records.items():
        for kernel in test.unplaced:
            counts[kernel.name] = counts.get(kernel.name, 0) + kernel.count
            tests.setdefault(kernel.name, set()).add(nodeid)
    if not counts:
        return []
    ranked = sorted(counts, key=lambda name: (-counts[name], name))
    lines = [
        f"### {len(ranked)} kernel name{'s' if len(ranked) != 1 else ''} not decoded",
        "",
        "Kernels that no evidence placed: rules and baselines cannot match them by kind or family. "
        "Teach the decoder what they are (`kernelprof_kernels` in the ini file), or report them.",
        "",
        "| kernel | kernels | tests | first test |",
        "|---|--:|--:|---|",
    ]
    for name in ranked[:MAX_NAMES]:
        first = min(tests[name])
        lines.append(f"| {_cell(display_name(name))} | {counts[name]} | {len(tests[name])} | {_cell(first)} |")
    if len(ranked) > MAX_NAMES:
        lines.append(f"\n... and {len(ranked) - MAX_NAMES} more names.")
    lines.append("")
    return lines


def render_summary(
    tests: Mapping[str, ReportRecord],
    baseline_sections: Sequence[Sequence[str]],
    *,
    rootpath: Path,
    extra: Sequence[str] = (),
) -> str:
    """The Markdown, or "" where no part has anything to say. ``tests``: each test's record by
    node id; ``extra``: Markdown lines to end with (``pytest_kernelprof_summary``)."""
    body = [*_failures(tests, rootpath), *_baselines(baseline_sections), *_names(tests), *extra]
    if not body:
        return ""
    return "\n".join(["## pytest-kernelprof", "", *body]) + "\n"
