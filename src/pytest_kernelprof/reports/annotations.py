"""GitHub Actions annotations: ``::error file=...,line=...::`` workflow commands.

Written by the controller at the end of the session (terminal summary), from the record each
failing test's report carried (records.py, plugin/ci.py):

- each host sync that broke an assertion on syncs or a rule, at the user's line that made it,
  where the profile has the stack (``stacks=True``; ``Sync.where``);
- the test's line for each rule break and each baseline regression (and for a sync assertion
  where no sync's stack is known).

A test whose setup or teardown (a fixture) raised on a profile is annotated at its line as
an error of that phase, once: not where its call's failure is annotated already.

GitHub shows ten error annotations per step: the rest are counted in one notice. Each message
is bounded (``MESSAGE_LINES`` lines of ``LINE_CHARS`` characters, the test id cut to
``summary.MAX_TEXT``), its paths under the checkout relative to it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from .categories import words
from .records import Failure, ReportRecord
from .summary import clip, natural, relative_paths

MAX_ERRORS = 10  # GitHub keeps this many error annotations of a step
MESSAGE_LINES = 12
LINE_CHARS = 500

_TITLES = {
    "rule": "kernelprof: rule broken",
    "baseline": "kernelprof: baseline regression",
    "syncs": "kernelprof: host syncs",
    "copies": "kernelprof: copies",
}


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


def _short(message: str, more_lines: int, workspace: Path) -> str:
    """The message's first lines, each within ``LINE_CHARS``; ``more_lines``: those the record had
    already left out."""
    lines = message.splitlines()
    left_out = max(0, len(lines) - MESSAGE_LINES) + more_lines
    more = f"\n(+{left_out} lines in the job log)" if left_out else ""
    shown = [clip(relative_paths(line, workspace), LINE_CHARS) for line in lines[:MESSAGE_LINES]]
    return "\n".join(shown) + more


def collect(
    tests: Mapping[str, ReportRecord], workspace: Path, errors: Mapping[str, Sequence[Failure]] | None = None
) -> list[tuple[str, int | None, str, str]]:
    """(file, line, title, message) of each annotation, worst first (rules, baselines, syncs,
    copies, then the setup and teardown errors of tests whose call did not fail on a profile). A
    sync is annotated where it was called only where that file is in the checkout: a loaded
    trace's syncs name files of the machine that recorded it."""
    order = {"rule": 0, "baseline": 1, "syncs": 2, "copies": 3}
    found: list[tuple[int, str, tuple[str, int | None, str, str]]] = []
    for nodeid, phases in (errors or {}).items():
        test = tests.get(nodeid)
        if not phases or (test is not None and test.failure is not None):
            continue
        error = phases[0]
        title = f"kernelprof: {error.when} error"
        message = (
            f"{clip(nodeid)} errored in {error.when} on {words(error.category).one}\n"
            f"{_short(error.message, error.more_lines, workspace)}"
        )
        found.append((len(order), nodeid, (relative(error.file, workspace), error.line, title, message)))
    for nodeid, test in tests.items():
        failure = test.failure
        if failure is None or failure.category not in order:
            continue
        rank = order[failure.category]
        syncs = [s for s in test.syncs if s.file and _in_checkout(s.file, workspace)]
        broke = "a kernelprof_forbid rule" if failure.category == "rule" else "an assertion on host syncs"
        for sync in syncs:
            inside = f" in {sync.function}" if sync.function else ""
            times = f" ({sync.count} calls)" if sync.count > 1 else ""
            op = f" from {sync.op}" if sync.op else ""
            message = clip(f"host sync {sync.call}{op}{inside}{times} broke {broke} of {clip(nodeid)}", LINE_CHARS * 2)
            found.append((rank, nodeid, (relative(sync.file, workspace), sync.line, "kernelprof: host sync", message)))
        if failure.category in ("rule", "baseline") or not syncs:
            message = f"{clip(nodeid)}\n{_short(failure.message, failure.more_lines, workspace)}"
            where = (relative(failure.file, workspace), failure.line, _TITLES[failure.category], message)
            found.append((rank, nodeid, where))
    found.sort(key=lambda item: (item[0], natural(item[1])))
    return [item[2] for item in found]


def workflow_commands(
    tests: Mapping[str, ReportRecord], *, workspace: Path, errors: Mapping[str, Sequence[Failure]] | None = None
) -> Iterator[str]:
    found = collect(tests, workspace, errors)
    for file, line, title, message in found[:MAX_ERRORS]:
        yield command("error", message, file=file, line=line, title=title)
    if len(found) > MAX_ERRORS:
        yield (
            f"::notice title=kernelprof::{len(found) - MAX_ERRORS} more kernelprof annotations not written "
            f"(GitHub shows {MAX_ERRORS} per step): see the job summary and the log"
        )
