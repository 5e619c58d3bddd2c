"""GitHub Actions annotations: ``::error file=...,line=...::`` workflow commands.

Written by the controller at the end of the session (terminal summary), from the record each
failing test's report carried (records.py, plugin/ci.py):

- each host sync that broke an assertion on syncs or a rule, at the user's line that made it,
  where the profile has the stack (``stacks=True``; ``Sync.where``), with its ``to fix:`` lines;
- the test's line for each rule break and each baseline regression (and for a sync assertion
  where no sync's stack is known), with the failure's first lines; a failure on syncs or copies
  that named them in a line (``assert not prof.syncs``) with their tables' ``to fix:`` lines;
- the test's line for every other failure about a profile (a kernel count, a fusion, a dtype,
  an op ...), with the assertion's head: the comparison and its first explanation line, and the
  hints below it (the nearest names, the kernels of unknown kind or dtype that could be it). The
  pull request's diff is where a reader looks; the whole explanation is in the job summary.

A test whose setup or teardown (a fixture) raised on a profile is annotated at its line as
an error of that phase, once: not where its call's failure is annotated already.

GitHub shows ten error annotations per step, the worst first here (the summary's order): the
rest are counted in one notice. Each message is bounded (``MESSAGE_LINES`` lines of
``LINE_CHARS`` characters, the test id cut to ``summary.MAX_TEXT``), its paths under the
checkout relative to it. Where a message is cut, what says what to do (the update command,
``to fix: ...``, the marker that allows a rule, a failed query's hints: ``summary.acts``) is
kept, and a table is kept with its first row or not at all. A baseline's diff that is cut tells
its unchanged kernels in one line and keeps its ``fused:`` and ``split:`` lines: what changed
goes ahead of what did not.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ..tables import clip, plural
from .categories import noun
from .records import Failure, ReportRecord
from .summary import Place, acting_lines, actions_at_end, place, relative_paths, without_addresses

MAX_ERRORS = 10  # GitHub keeps this many error annotations of a step
MESSAGE_LINES = 12
HEAD_LINES = 2  # of an assertion that is not a rule's, a baseline's, a sync's or a copy's
LINE_CHARS = 500
# The categories whose annotation carries the failure's first lines, not only its head: their
# messages are short and end with what to do.
WHOLE = ("rule", "baseline", "syncs", "copies")

# The categories of a failure that may name its records in one line (``assert not prof.syncs``):
# their ``to fix:`` lines are under the records' tables in the record (plugin/ci_facts.py), which
# the annotation does not show, so it carries those lines itself.
RECORDS = ("syncs", "copies")
FIX = "to fix: "  # what a line starts with that says what would remove records (model/records.py)

# The first cell of a table's header (tables.render_table's callers): a kernel, sync or copy
# table ("#  kind", "#  runtime call"), an op table ("op  count"), a module's or a compile's.
_HEADER = re.compile(r"^\s*(#|op|module|compile)  +\S")


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, *, file: str, line: int | None, title: str) -> str:
    where = f"file={escape_property(file)}" + (f",line={line}" if line else "")
    return f"::{kind} {where},title={escape_property(title)}::{escape_data(message)}"


def relative(file: str, workspace: Path) -> str:
    """A path as GitHub wants it: relative to the checkout, with forward slashes."""
    path = Path(file)
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(workspace.resolve())
        except ValueError:
            return path.as_posix()
    return path.as_posix()


def _in_checkout(file: str, workspace: Path) -> bool:
    path = Path(file)
    return (path if path.is_absolute() else workspace / path).is_file()


def _without_lone_header(lines: list[str]) -> list[str]:
    """``lines`` without what they end with that is no use alone: blank lines, and a table's
    header whose rows were cut."""
    while lines and (not lines[-1].strip() or _HEADER.match(lines[-1])):
        lines.pop()
    return lines


def _unchanged_told(lines: list[str]) -> list[str]:
    """A kernel diff's lines with its unchanged kernels (its ``=`` lines) told in one line where
    the first of them was: a cut diff kept the unchanged GEMMs ahead of it and dropped the
    ``split:`` line that says what changed."""
    start = next((i + 1 for i, line in enumerate(lines) if line.lstrip().startswith("+++ ")), len(lines))
    same = [i for i in range(start, len(lines)) if lines[i].lstrip().startswith("= ")]
    if not same:
        return lines
    first = lines[same[0]]
    indent = first[: len(first) - len(first.lstrip())]
    told = f"{indent}({plural(len(same), 'unchanged kernel')}: their = lines are in the job log)"
    left = set(same)
    kept = [line for i, line in enumerate(lines) if i not in left]
    kept.insert(same[0], told)
    return kept


def _short(message: str, more_lines: int, workspace: Path, first: int = MESSAGE_LINES, diff: bool = False) -> str:
    """The message's first ``first`` lines, and past them the lines that say what to do
    (``summary.acting_lines``: a failed query's hints, the update command, ``to fix:``), half of
    ``MESSAGE_LINES`` at most, the first lines fewer where those need the room; each within
    ``LINE_CHARS``; ``more_lines``: those the record had already left out. A kernel diff
    (``diff``) that is cut tells its unchanged kernels in one line and keeps its ``fused:`` and
    ``split:`` lines with the lines that act: what changed goes ahead of what did not."""
    lines = without_addresses(message).splitlines()
    if diff and len(lines) > first:
        lines = _unchanged_told(lines)
    if len(lines) > first:
        room = MESSAGE_LINES // 2
        start = min(first, MESSAGE_LINES - room)
        picked = acting_lines(lines, start, room)
        if diff:
            end = len(lines) - actions_at_end(lines)
            told = [i for i in range(start, end) if lines[i].lstrip().startswith(("fused: ", "split: "))]
            picked = sorted({*picked, *told[: max(room - len(picked), 0)]})
        size = min(first, MESSAGE_LINES - len(picked))
        head = _without_lone_header(lines[:size])
        picked = [index for index in picked if index >= size]
    else:
        head, picked = lines, []
    end = len(lines) - actions_at_end(lines)
    left_out = len(lines) - len(head) - len(picked) + more_lines
    more = [f"(+{plural(left_out, 'line')} in the job log)"] if left_out else []
    # The cut goes where the lines were left out: the hints below the head before it (a count's
    # nearest names, above its table), the lines the message ends with after it; those the record
    # kept after its own cut (plugin/ci_facts.py) are already at the message's end.
    hints = [lines[index] for index in picked if index < end]
    actions = [lines[index] for index in picked if index >= end]
    shown = [*head, *hints, *more, *actions]
    return "\n".join(clip(relative_paths(line, workspace), LINE_CHARS) for line in shown)


def _with_fixes(failure: Failure) -> str:
    """The failure's message, with the ``to fix:`` lines of its records' tables that it does not
    say already (a failed ``assert not prof.syncs`` says none: its tables are the summary's)."""
    if failure.category not in RECORDS:
        return failure.message
    said = {line.strip() for line in failure.message.splitlines()}
    fixes = [line.strip() for line in failure.tables.splitlines() if line.strip().startswith(FIX)]
    new = [fix for fix in dict.fromkeys(fixes) if fix not in said]
    return "\n".join([failure.message, *new]) if new else failure.message


def _lines_of(category: str) -> int:
    """How many of a failure's first lines its annotation shows."""
    return MESSAGE_LINES if category in WHOLE else HEAD_LINES


def collect(
    tests: Mapping[str, ReportRecord], workspace: Path, errors: Mapping[str, Sequence[Failure]] | None = None
) -> list[tuple[str, int | None, str, str]]:
    """(file, line, title, message) of each annotation, worst first, in the summary's order
    (``summary.place``: rules, baselines, ..., syncs, copies, kernel assertions, ..., each by file
    and line; then the setup and teardown errors of tests whose call did not fail on a profile).
    A sync is annotated where it was called only where that file is in the checkout: a loaded
    trace's syncs name files of the machine that recorded it."""
    # The summary's order: its failures, then its errors (each test's annotations together, in
    # the order made), so that past MAX_ERRORS the tests annotated are those it lists first.
    found: list[tuple[bool, Place, tuple[str, int | None, str, str]]] = []
    for nodeid, phases in (errors or {}).items():
        test = tests.get(nodeid)
        if not phases or (test is not None and test.failure is not None):
            continue
        error = phases[0]
        title = f"kernelprof: {noun(error.category)} ({error.when} error)"
        message = (
            f"{clip(nodeid)} errored in {error.when} ({noun(error.category)})\n"
            f"{_short(error.message, error.more_lines, workspace, _lines_of(error.category))}"
        )
        found.append(
            (True, place(nodeid, error, workspace), (relative(error.file, workspace), error.line, title, message))
        )
    for nodeid, test in tests.items():
        failure = test.failure
        if failure is None:
            continue
        at = place(nodeid, failure, workspace)
        syncs = [s for s in test.syncs if s.file and _in_checkout(s.file, workspace)]
        broke = "a kernelprof_forbid rule" if failure.category == "rule" else "an assertion on host syncs"
        for sync in syncs:
            inside = f" in {sync.function}" if sync.function else ""
            times = f" ({sync.count} calls)" if sync.count > 1 else ""
            op = f" from {sync.op}" if sync.op else ""
            message = clip(f"host sync {sync.call}{op}{inside}{times} broke {broke} of {clip(nodeid)}", LINE_CHARS * 2)
            message = "\n".join([message, *(clip(fix, LINE_CHARS) for fix in sync.fixes)])
            found.append((False, at, (relative(sync.file, workspace), sync.line, "kernelprof: host sync", message)))
        if failure.category in ("rule", "baseline") or not syncs:
            diff = failure.category == "baseline"
            short = _short(_with_fixes(failure), failure.more_lines, workspace, _lines_of(failure.category), diff)
            message = f"{clip(nodeid)}\n{short}"
            title = f"kernelprof: {noun(failure.category)}"
            found.append((False, at, (relative(failure.file, workspace), failure.line, title, message)))
    found.sort(key=lambda item: (item[0], item[1]))
    return [item[2] for item in found]


def workflow_commands(
    tests: Mapping[str, ReportRecord], *, workspace: Path, errors: Mapping[str, Sequence[Failure]] | None = None
) -> Iterator[str]:
    found = collect(tests, workspace, errors)
    for file, line, title, message in found[:MAX_ERRORS]:
        yield command("error", message, file=file, line=line, title=title)
    if len(found) > MAX_ERRORS:
        yield (
            f"::notice title=kernelprof::{plural(len(found) - MAX_ERRORS, 'more kernelprof annotation')} not written "
            f"(GitHub shows {MAX_ERRORS} per step): see the job summary and the log"
        )
