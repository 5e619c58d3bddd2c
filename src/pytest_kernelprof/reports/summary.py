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
implementations add. Nothing is appended to $GITHUB_STEP_SUMMARY where there is nothing to say;
a file the user named gets a line that says so (``nothing_to_report``).

It reads each test's record (records.py), as the run's books merged them.

Bounded whatever the run: each text of a user's (a test id, a path, a kernel name, a baseline's
line) is cut to ``MAX_TEXT`` characters, each failure's message to ``FAILURE_CHARS``, and the
whole to a byte budget (``SUMMARY_BYTES``: GitHub refuses a step's summary over 1 MiB), the parts
past it left out with a line that says so and where the whole text is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..tables import CLIP_TEXT, clip, display_name, plural, printable
from .categories import ORDER, noun
from .records import Failure, ReportRecord

MAX_FAILURES = 10
MAX_NAMED = 300  # failed tests past MAX_FAILURES named in one line
MAX_NAMES = 15
MAX_BASELINE_LINES = 20
# A user's text on one line (a parametrised test id can be any length): its start and its end.
MAX_TEXT = CLIP_TEXT
# A failure's message and tables in the summary (plugin/ci.py keeps about as much of them).
FAILURE_CHARS = 60_000
# What one run may append to the step's summary file, in bytes: GitHub refuses a step's summary
# over 1 MiB, and the file is the whole step's (other tools append to it too).
SUMMARY_BYTES = 900 * 1024
# The line that says what was left out: room kept for it below the budget.
_CUT_ROOM = 512


# The lines of a failure that say what to do, kept where a message is cut (the record's, the
# annotations'): those it ends with (checks/baseline/check.py, checks/rules.py, model/records.py)
# and the hints of a failed kernel query, below its head or its table (model/kernels.py): the
# names it nearly matched, the kernels that kind or dtype ruled out or that the decoder could not.
ACTION_STARTS = ("if the change is intended:", "to fix:", "(a test that may break it:", "nearest names:")
ACTION_ENDS = (
    "which a test that may break it leaves out)",
    "could be it: teach the decoder",
    "could be it: record the trace with the plugin",
    " ruled it out",
    " ruled them out",
)


def acts(line: str) -> bool:
    """Whether ``line`` says what to do (``ACTION_STARTS``, ``ACTION_ENDS``)."""
    text = line.strip()
    return text.startswith(ACTION_STARTS) or text.endswith(ACTION_ENDS)


def actions_at_end(lines: Sequence[str]) -> int:
    """How many of ``lines``, at their end, say what to do (blank lines between them counted)."""
    count = 0
    for index, line in enumerate(reversed(lines)):
        text = line.strip()
        if acts(text):
            count = index + 1
        elif text:
            break
    return count


def acting_lines(lines: Sequence[str], start: int, most: int) -> list[int]:
    """The indexes of the lines from ``start`` on that say what to do, ``most`` at most, in
    order: the first of those the message ends with, and of those before them as many as fit."""
    end = len(lines) - actions_at_end(lines)
    tail = list(range(max(start, end), len(lines)))[: max(most, 0)]
    hints = [index for index in range(start, end) if acts(lines[index])][: most - len(tail)]
    return [*hints, *tail]


def _ticks(text: str, least: int) -> str:
    # One longer than the longest run of backticks in the text (found in one pass: a message of
    # backticks is a user's, and growing a fence until it fits is quadratic in it).
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(least, longest + 1)


def _fence(text: str) -> str:
    ticks = _ticks(text, 3)
    return f"{ticks}text\n{text}\n{ticks}"


def code_span(text: str) -> str:
    """A Markdown code span of ``text`` as it is, backticks included (a command in it can be
    pasted): delimited by a run of backticks longer than any in it, and padded with a space where
    it starts or ends with a backtick, or with a space at both ends (CommonMark strips one)."""
    if not text:
        return "` `"
    ticks = _ticks(text, 1)
    edge = text[0] + text[-1]
    pad = " " if "`" in edge or (edge == "  " and text.strip(" ")) else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _code(text: str) -> str:
    """A Markdown code span: its text is shown as it is (no Markdown, no HTML), on one line."""
    return code_span(printable(clip(text)))


def _cell(text: str) -> str:
    return _code(text).replace("|", "\\|")


def _location(failure: Failure, rootpath: Path, *, line: bool = True) -> str:
    file = Path(failure.file)
    try:
        shown = file.resolve().relative_to(rootpath.resolve()).as_posix()
    except ValueError:
        shown = file.as_posix()
    shown = clip(shown)
    return f"{shown}:{failure.line}" if failure.line and line else shown


# ``<generator object test_x.<locals>.<genexpr> at 0x7efe0cef4e10>``: an address that changes
# every run, in outputs one compares between runs.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def without_addresses(text: str) -> str:
    """``text`` with each object's memory address written ``at 0x...``: the summary's, the
    annotations' and the JUnit message's text of a failure, the same from one run to the next."""
    return _ADDRESS.sub(" at 0x...", text)


def natural(text: str) -> list[str | int]:
    """``text`` to sort by, its numbers as numbers: ``test_x[2]`` before ``test_x[10]``, as the
    parametrised tests were collected. (The parts alternate text and digits, so two keys compare
    text with text and numbers with numbers.)"""
    return [int(part) if i % 2 else part for i, part in enumerate(_DIGITS.split(text))]


_DIGITS = re.compile(r"(\d+)")


Block = list[str]  # lines the budget keeps or leaves out together (a failure's <details>, a table)


Place = tuple[int, str, int, list[str | int]]


def place(nodeid: str, failure: Failure, rootpath: Path) -> Place:
    """Where a failure is listed: its category's rank, then its file and line, then its test's
    id. The summary's order, and the annotations' (reports/annotations.py): past their caps, both
    keep the same tests."""
    return (
        ORDER.get(failure.category, len(ORDER)),
        _location(failure, rootpath, line=False),
        failure.line or 0,
        natural(nodeid),
    )


def _order(rootpath: Path) -> Callable[[tuple[str, Failure]], Place]:
    return lambda item: place(item[0], item[1], rootpath)


def _body(failure: Failure, rootpath: Path) -> str:
    """A failure's message and tables as the summary shows them: within ``FAILURE_CHARS``, the
    paths under the rootdir relative to it (the summary is read on another machine)."""
    more = failure.more_lines
    message, actions = failure.message, ""
    if more and not failure.tables:
        # What the record kept of the message's end that says what to do: after the count of the
        # lines it left out, where they were left out (plugin/ci_facts.py).
        lines = message.splitlines()
        kept = actions_at_end(lines)
        if kept:
            message, actions = "\n".join(lines[:-kept]), "\n".join(lines[-kept:])
    text = message + (f"\n\n{failure.tables}" if failure.tables else "")
    if len(text) > FAILURE_CHARS:
        cut = text[:FAILURE_CHARS]
        more += text.count("\n") - cut.count("\n") + 1
        text = cut.rsplit("\n", 1)[0] if "\n" in cut else cut + "..."
    text = relative_paths(without_addresses(text), rootpath)
    actions = relative_paths(actions, rootpath)
    return text + (f"\n... {more} more lines in the job log" if more else "") + (f"\n{actions}" if actions else "")


def _failures(
    tests: Mapping[str, ReportRecord], errors: Mapping[str, Sequence[Failure]], rootpath: Path
) -> list[Block]:
    """The tests that failed on their profiles, each once: a setup or teardown error of a test
    that failed in its call is told inside the test's entry, not counted again."""
    failed = sorted(
        ((nodeid, test.failure) for nodeid, test in tests.items() if test.failure is not None), key=_order(rootpath)
    )
    if not failed:
        return []
    blocks = [[_heading([failure.category for _, failure in failed]), ""]]
    for nodeid, failure in failed[:MAX_FAILURES]:
        also = [line for error in errors.get(nodeid, ()) for line in _then(error, rootpath)]
        blocks.append(_entry(nodeid, f"failed ({noun(failure.category)})", failure, rootpath, also))
    blocks += _rest(("failed test", "failed tests"), failed)
    return blocks


def _errors(tests: Mapping[str, ReportRecord], errors: Mapping[str, Sequence[Failure]], rootpath: Path) -> list[Block]:
    """The tests whose setup or teardown (a fixture) raised on a profile, and whose call did not
    fail on one: pytest counts them as errors, and so does the summary."""
    errored = sorted(
        (
            (nodeid, found[0])
            for nodeid, found in errors.items()
            if found and (nodeid not in tests or tests[nodeid].failure is None)
        ),
        key=_order(rootpath),
    )
    if not errored:
        return []
    phases = sorted({failure.when for _, failure in errored}, key=("setup", "teardown").index)
    verb = f"errored in {' or '.join(phases)}"
    blocks = [[_heading([failure.category for _, failure in errored], verb), ""]]
    for nodeid, failure in errored[:MAX_FAILURES]:
        also = [line for error in errors[nodeid][1:] for line in _then(error, rootpath)]
        what = f"errored in {failure.when} ({noun(failure.category)})"
        blocks.append(_entry(nodeid, what, failure, rootpath, also))
    blocks += _rest((f"test {verb}", f"tests {verb}"), errored)
    return blocks


def _entry(nodeid: str, what: str, failure: Failure, rootpath: Path, also: Sequence[str]) -> Block:
    return [
        f"<details><summary><code>{_html(nodeid)}</code> {what} "
        f"at <code>{_html(_location(failure, rootpath))}</code></summary>",
        "",
        _fence(_body(failure, rootpath)),
        "",
        *also,
        "</details>",
        "",
    ]


def _then(error: Failure, rootpath: Path) -> list[str]:
    """A later phase's error of a test already listed (its teardown's, after its call failed)."""
    return [
        f"Its {error.when} then errored ({noun(error.category)}) at <code>{_html(_location(error, rootpath))}</code>:",
        "",
        _fence(_body(error, rootpath)),
        "",
    ]


def _rest(which: tuple[str, str], listed: Sequence[tuple[str, Failure]]) -> list[Block]:
    """``which``: the words for one test and for several (``failed test``, ``failed tests``)."""
    if len(listed) <= MAX_FAILURES:
        return []
    # Named, in the order above, so that the heading's counts have their tests (their failures
    # are in the job log); a few hundred at most, the summary being one page.
    rest = [f"<code>{_html(nodeid)}</code>" for nodeid, _ in listed[MAX_FAILURES : MAX_FAILURES + MAX_NAMED]]
    unnamed = len(listed) - MAX_FAILURES - len(rest)
    tail = f" and {unnamed} more" if unnamed else ""
    more = len(listed) - MAX_FAILURES
    return [[f"... and {more} more {which[more != 1]} (see the job log): {', '.join(rest)}{tail}.", ""]]


def _heading(categories: Sequence[str], verb: str = "failed") -> str:
    """``### 1 test failed: host syncs``; ``### 3 tests failed: kernelprof_forbid rule (1), kernel
    assertion (2)``; ``### 1 test errored in setup: kernel assertion``."""
    counts = {c: categories.count(c) for c in sorted(set(categories), key=lambda c: ORDER.get(c, len(ORDER)))}
    tests = f"{len(categories)} test{'s' if len(categories) != 1 else ''} {verb}"
    if len(counts) == 1:
        return f"### {tests}: {noun(categories[0])}"
    return f"### {tests}: " + ", ".join(f"{noun(c)} ({n})" for c, n in counts.items())


def relative_paths(text: str, base: Path) -> str:
    """``text`` with each absolute path under ``base`` written relative to it: a baseline's path
    in a failure's message, read in a job summary or an annotation on another machine."""
    prefixes = sorted({str(base), str(base.resolve())}, key=len, reverse=True)
    for prefix in prefixes:
        folder = prefix.rstrip("/\\") + os.sep
        if len(folder) > 1:
            text = re.sub(r"(?<![\w./\\-])" + re.escape(folder), "", text)
    return text


def _html(text: str) -> str:
    """Text inside HTML (the failures' ``<summary>`` lines): on one line, no markup."""
    return printable(clip(text)).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")


def _markdown(text: str) -> str:
    """Text in Markdown (a bold title): on one line, its Markdown and HTML shown as they are."""
    return _MARKDOWN.sub(r"\\\1", _html(text))


def _baselines(sections: Sequence[Sequence[str]], rootpath: Path) -> list[Block]:
    if not sections:
        return []
    blocks = [["### Kernel baselines", ""]]
    for title, *rest in sections:
        lines = [f"**{_markdown(relative_paths(title.removeprefix('kernelprof: '), rootpath))}**", ""]
        shown = rest[:MAX_BASELINE_LINES]
        lines += [f"- {_code(relative_paths(line, rootpath))}" for line in shown]
        if len(rest) > len(shown):
            lines.append(f"- ... and {len(rest) - len(shown)} more")
        lines.append("")
        blocks.append(lines)
    return blocks


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
    # The terminal's words for them (model/unknowns.py) and the API's (Kernel.unplaced); the
    # count is of launches, as a profile's call holds them ("kernels" read as a count of names).
    lines = [
        f"### {plural(len(ranked), 'kernel name')} no evidence could place (unplaced)",
        "",
        "Kernels that no evidence placed (`Kernel.unplaced`): rules and baselines cannot match them by kind "
        "or family. Teach the decoder what they are (`kernelprof_kernels` in the ini file), or report them. "
        "*launches*: of the name, in one call of each profile, every test's added up.",
        "",
        "| kernel name | launches | tests | first test |",
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
    errors: Mapping[str, Sequence[Failure]] | None = None,
    budget: int = SUMMARY_BYTES,
) -> str:
    """The Markdown, or "" where no part has anything to say. ``tests``: each test's record by
    node id; ``errors``: the profile errors of each test's setup and teardown, in order (their
    ``when``); ``extra``: Markdown lines to end with (``pytest_kernelprof_summary``), each kept
    or left out whole; ``budget``: the most bytes (UTF-8) the text may take."""
    errors = errors or {}
    blocks = [
        *_failures(tests, errors, rootpath),
        *_errors(tests, errors, rootpath),
        *_baselines(baseline_sections, rootpath),
        *([names] if (names := _names(tests)) else []),
        *([line] for line in extra),
    ]
    if not blocks:
        return ""
    lines = ["## pytest-kernelprof", ""]
    used = _size(lines)
    for number, block in enumerate(blocks):
        size = _size(block)
        if used + size > budget - _CUT_ROOM:
            left = blocks[number:]
            lines += [
                f"... the rest of this summary ({len(left)} more parts, {sum(map(_size, left))} bytes) is left out: "
                f"a step's summary is kept under GitHub's 1 MiB limit. pytest's output in the job log (and the "
                f"JUnit XML, where --junitxml writes one) has every failure whole.",
                "",
            ]
            break
        lines += block
        used += size
    return "\n".join(lines) + "\n"


def nothing_to_report(tests: Mapping[str, ReportRecord]) -> str:
    """The summary of a run that ``render_summary`` has nothing to say of, for a file the user
    named (``--kernelprof-summary PATH``): a CI step that uploads or reads it finds it, and
    reads what the run did rather than an empty file."""
    counts = [record.profiles for record in tests.values() if record.profiles]
    if not counts:
        said = "no test took a profile."
    elif counts == [1]:
        said = "1 test took 1 profile and did not fail on it."
    elif len(counts) == 1:
        said = f"1 test took {counts[0]} profiles and failed on none."
    else:
        said = f"{len(counts)} tests took {plural(sum(counts), 'profile')}, none failed on one."
    return f"## pytest-kernelprof\n\nNo profile failures: {said}\n"


def _size(lines: Sequence[str]) -> int:
    return sum(len(line.encode("utf-8", "backslashreplace")) + 1 for line in lines)
