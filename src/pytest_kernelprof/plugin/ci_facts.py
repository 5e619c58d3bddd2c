"""What a failed test's CI outputs say of it (``ci.py`` registers their hooks): the failure's
category, its message whole (as the plugin explained it, not as the terminal cut it), the
profiles' tables where the message carried none, the test's line, and the user's lines that
made the host syncs it failed on.

A failure's category comes from types, never from its message: the exception's type
(:func:`category`), else what the failed assertion compared (``pytest_assertrepr_compare``
records it on the item) or named (:func:`asserted`).
"""

from __future__ import annotations

import ast
import contextlib
import re
import textwrap
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ForbiddenError, KernelProfError
from ..paths import is_own_file
from ..reports.categories import leaves, of_error, worst
from .books import COMPARED_KEY, EXPLAINED_KEY

if TYPE_CHECKING:
    from ..reports.records import Failure, SyncSite

# Of a failure's message, kept for the summary: a kernel table of a couple of hundred kernels
# whole, and ten failures (the summary shows ten) well inside GitHub's 1 MiB a step's summary.
MESSAGE_LINES = 250
MESSAGE_CHARS = 50_000
# The metrics of rules whose breaks the summary and annotations point at syncs for.
SYNC_METRICS = frozenset(("syncs", "dtoh_copies"))
# The categories of plain assertions whose message may carry no kernel table (``len()``, ``all()``
# over kernels): the summary folds the profiles' tables under them.
TABLED = frozenset(("kernels", "profile"))
# The categories whose failure may name its records in one line, and what to call them.
RECORDS = {"syncs": "host syncs", "copies": "copies"}


def category(error: BaseException, profiled: bool, about: str | None = None) -> str | None:
    """What a test's failure was about (a name of ``reports/categories.py``), or None where it
    was not about a profile: by the type of an error this package raised (a failed ``one()``,
    an op lookup, a dtype it does not know, no GPU activity ...), else, for a plain assertion in
    a test that profiled, by ``about``, what the assertion compared or named ("syncs",
    "kernels", "ops", "baseline", ..., None)."""
    named = of_error(error)
    if named is not None:
        return named
    if not isinstance(error, AssertionError):
        return None
    if about == "baseline":  # ``assert prof == kernel_baseline``
        return "baseline"
    return about if profiled else None


# The parts of a profile a failed statement can read off a name (``prof.kernels.of_kind("gemm")``
# inside an ``all(...)``, whose subexpressions pytest's rewrite does not keep): each a view the
# profile holds, whose type says what the statement was about where the profile alone says
# "profile". Any other attribute (``prof.launches``) is one of the profile's own numbers.
_PROFILE_PARTS = frozenset({"kernels", "syncs", "copies", "memory_ops", "ops", "modules", "compile", "memory"})


def asserted(excinfo: pytest.ExceptionInfo[BaseException]) -> str | None:
    """What the failed ``assert`` statement was about, by the types of the values it named (its
    names' values in the failing frame, and the parts of a profile it read off a name) and
    evaluated (pytest's rewrite keeps each subexpression's value in a local named
    ``@py_assert<N>``): ``assert not prof.syncs`` is about syncs, though no comparison reached
    pytest_assertrepr_compare; ``assert all(k.dtype == "bf16" for k in prof.kernels)`` is about kernels."""
    from ..model.explain import subject

    return subject(*statement_values(excinfo))


def statement_values(excinfo: pytest.ExceptionInfo[BaseException]) -> list[Any]:
    """The values a failed ``assert`` statement named and evaluated (:func:`asserted`)."""
    from ..model.profiles import CallProfile, KernelProfile

    entry = excinfo.traceback[-1]
    frame = entry.frame
    values = [value for name, value in frame.f_locals.items() if name.startswith("@py_assert")]
    try:
        tree = ast.parse(textwrap.dedent(str(entry.statement)))
    except Exception:  # no source (exec'd code), or a statement that does not parse alone
        tree = None
    if tree is not None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                if node.id in frame.f_locals:
                    values.append(frame.f_locals[node.id])
                elif node.id in frame.f_globals:
                    values.append(frame.f_globals[node.id])
            elif isinstance(node, ast.Attribute) and node.attr in _PROFILE_PARTS and isinstance(node.value, ast.Name):
                base = frame.f_locals.get(node.value.id, frame.f_globals.get(node.value.id))
                if isinstance(base, KernelProfile | CallProfile):
                    with contextlib.suppress(KernelProfError):  # not measured or not recorded: the profile says it
                        values.append(getattr(base, node.attr))
    return values


def failure_text(error: BaseException, explained: Sequence[tuple[Sequence[str], Sequence[str]]]) -> str:
    """A failure's message, whole: for a failed assertion, the message pytest made with the
    explanation the plugin gave it whole again (the last one the message holds), where pytest
    made it of the lines the terminal shows (the table cut, or moved to a report section)."""
    text = str(error)
    if isinstance(error, AssertionError):
        from ..model.explain import restore

        for shown, whole in reversed(explained):
            restored = restore(text, shown, whole)
            if restored is not None:
                return restored
    return text


def profile_tables(sections: Sequence[tuple[str, str]]) -> list[str]:
    """The profile sections of a failed test, as its report shows them: a CI reader has no
    terminal section. Where the message showed a profile's kernel table whole, its section says so
    in a line instead of the table, and still names the trace and card the table is of and gives
    the call's figures (a trial could not tell which profile a count's table was of)."""
    from .report_sections import PROFILE_SECTION

    profiles = [(title, text) for title, text in sections if title.startswith(PROFILE_SECTION)]
    lines: list[str] = []
    for title, text in profiles:
        lines += [*([""] if lines else []), f"{title}:", *text.splitlines()]
    return lines


def record_tables(profiles: Sequence[Any], what: str) -> list[str]:
    """The syncs or copies of a failed test's profiles as tables, each with its ``to fix:``
    lines, for a failure whose message named them in one line (``assert not prof.syncs``): the
    op chain, the times and what would remove them, which a CI reader would otherwise find only
    in the log's profile section (the one line, printed twice by pytest, says no fix). The syncs'
    fixes are the profile section's, the copies' included: a sync that is a pageable DtoH copy
    has two causes, and the section says both (the summary kept only the sync's)."""
    from ..model.records import advice
    from .report_sections import PROFILE_SECTION

    lines: list[str] = []
    for number, prof in enumerate(profiles, 1):
        try:
            records = prof.syncs if what == "syncs" else prof.copies
            fixes = advice(records, prof.copies) if what == "syncs" else records.fix_lines()
            table = [*records.table().splitlines(), *fixes]
        except KernelProfError:  # no GPU activity: the message says so
            continue
        title = f"{PROFILE_SECTION}{number} of {len(profiles)}, its {RECORDS[what]}{_whose(prof, records)}:"
        lines += [*([""] if lines else []), title, *table]
    return lines


def _whose(prof: Any, records: Any) -> str:
    """`` in call 2, numbered from 0, the fastest of 3 by host span``: which call a sync table's
    ``call 2 host us`` is, said above it (a trial read the column without the line that names
    the call, which the summary leaves out with the profile's section). Empty for a copy table
    (its times are medians, its header says so) and for a profile of one call."""
    from ..model.profiles import fastest_call_words

    call = getattr(records, "call", None)
    if call is None or len(prof.calls) < 2:
        return ""
    if call == prof.fastest_call.index:
        return f" in {fastest_call_words(prof)}"
    return f" in call {call}, numbered from 0, the call with the most: the calls synced differently"


def kept_lines(lines: Sequence[str], most: int = MESSAGE_LINES, chars: int = MESSAGE_CHARS) -> list[str]:
    """The first lines of a message, as many as ``most`` lines and ``chars`` characters allow
    (at least the start of the first, where any line is allowed)."""
    kept: list[str] = []
    left = chars
    for line in lines[: max(most, 0)]:
        if len(line) > left:
            if not kept and left > 0:
                kept.append(line[:left] + "...")
            break
        kept.append(line)
        left -= len(line) + 1
    return kept


def kept_message(lines: Sequence[str], most: int = MESSAGE_LINES, chars: int = MESSAGE_CHARS) -> list[str]:
    """A message's first lines, as :func:`kept_lines` keeps them, and where that cuts it, the
    lines past them that say what to do (``summary.acting_lines``: a baseline's update command,
    ``to fix: ...``, a failed query's nearest names), half the bounds at most: a baseline's diff
    of 300 lines still says how to accept it, a table of 300 syncs its fixes, a table of 300
    kernels the names the query nearly matched."""
    kept = kept_lines(lines, most, chars)
    if len(kept) == len(lines):
        return kept
    from ..reports.summary import acting_lines

    start = len(kept_lines(lines, most - most // 2, chars - chars // 2))
    picked = acting_lines(lines, start, most // 2)
    actions = kept_lines([lines[index] for index in picked], most // 2, chars // 2)
    if not actions:
        return kept
    room = chars - len("\n".join(actions)) - 1
    head = kept_lines(lines, most - len(actions), room)
    return [*head, *(text for index, text in zip(picked, actions, strict=False) if index >= len(head))]


def test_line(excinfo: pytest.ExceptionInfo[BaseException], path: Path) -> int | None:
    """The line of the test's own file where it failed (1-based): the last frame in that file."""
    line = None
    for entry in excinfo.traceback:
        if Path(str(entry.path)) == path:
            line = entry.lineno + 1
    return line


_PROFILER_FRAME = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<function>.*)$")
_FLAGGED_LINE = re.compile(r"^(?P<file>.+):(?P<line>\d+)$")


def sync_location(where: str) -> tuple[str, int, str] | None:
    """(file, line, function or "") of a ``Sync.where``: ``file.py(40): fn`` or ``file.py:41``."""
    found = _PROFILER_FRAME.match(where)
    if found:
        return found["file"], int(found["line"]), found["function"]
    found = _FLAGGED_LINE.match(where)
    if found:
        return found["file"], int(found["line"]), ""
    return None


def _syncs(profiles: Sequence[Any]) -> tuple[SyncSite, ...]:
    """The user's lines that made the profiles' syncs, each with the ``to fix:`` lines of its
    syncs' causes: an annotation at a sync's line is the one a reader sees of that failure."""
    from ..model.records import advice
    from ..reports.records import SyncSite

    seen: dict[tuple[str, int], SyncSite] = {}
    for prof in profiles:
        try:
            syncs = list(prof.syncs)
        except KernelProfError:
            continue
        for sync in syncs:
            place = sync_location(sync.where) if sync.where else None
            if place is None:
                continue
            file, line, function = place
            found = seen.get((file, line)) or SyncSite(file, line, function, sync.call, sync.op, 0)
            fixes = tuple(dict.fromkeys([*found.fixes, *advice([sync])]))
            seen[file, line] = replace(found, count=found.count + 1, fixes=fixes)
    return tuple(seen.values())


def _found(
    item: pytest.Item,
    excinfo: pytest.ExceptionInfo[BaseException],
    report: pytest.TestReport,
    profiles: Sequence[Any],
) -> list[tuple[BaseException, str, pytest.ExceptionInfo[BaseException]]]:
    """The profile failures of a failed phase, each with its category and its own traceback: the
    error, or the errors inside its exception group (an ``asyncio.TaskGroup``'s, pytest's of
    several fixtures' teardowns) that were about a profile."""
    call = report.when == "call"
    compared = item.stash.get(COMPARED_KEY, []) if call else []
    errors = leaves(excinfo.value)
    found = []
    for error in errors:
        info = excinfo
        if error is not excinfo.value:
            if error.__traceback__ is None:
                continue
            info = pytest.ExceptionInfo.from_exception(error)
        about = compared[-1] if compared else None
        if about is None and profiles and isinstance(error, AssertionError):
            about = asserted(info)
        what = category(error, bool(profiles), about)
        if what is not None:
            found.append((error, what, info))
    return found


def _named_in_a_line(what: str, explained: Sequence[object]) -> bool:
    # ``assert not prof.copies``, ``len(prof.copies) == 0``: the records named in a line, no table.
    return what in RECORDS and not explained


def records_named(
    item: pytest.Item,
    excinfo: pytest.ExceptionInfo[BaseException],
    report: pytest.TestReport,
    profiles: Sequence[Any],
) -> str | None:
    """The records ("syncs", "copies") a failed phase failed on where its message named them in
    a line and showed no table of them: the summary carries their tables (:func:`record_tables`),
    and the terminal's profile sections end with them, so that both show what a failed copies
    question shows. None where the failure was about anything else or explained itself."""
    found = _found(item, excinfo, report, profiles)
    if not found:
        return None
    what = worst([name for _, name, _ in found])
    explained = item.stash.get(EXPLAINED_KEY, []) if report.when == "call" else []
    return what if _named_in_a_line(what, explained) else None


def _ops_named(
    found: Sequence[tuple[BaseException, str, pytest.ExceptionInfo[BaseException]]], explained: Sequence[object]
) -> list[Any]:
    # The Op values of a failed assertion on ops that showed no table (``assert op.count == 2``).
    from ..model.ops import Op

    if not found or worst([name for _, name, _ in found]) != "ops" or explained:
        return []
    named = {
        id(value): value
        for error, what, info in found
        if what == "ops" and isinstance(error, AssertionError)
        for value in statement_values(info)
        if isinstance(value, Op)
    }
    return list(named.values())


def ops_named(
    item: pytest.Item,
    excinfo: pytest.ExceptionInfo[BaseException],
    report: pytest.TestReport,
    profiles: Sequence[Any],
) -> list[Any]:
    """The ``Op`` values a failed phase's assertion on ops named, where its message showed no
    table (``assert prof.ops["aten::mm"].count == 2``): the summary carries the op table that
    holds them, their rows marked (:func:`op_tables`), and the terminal's profile sections end
    with it. Empty where the failure was about anything else or explained itself (a failed
    ``"aten::add" in prof.ops`` shows the table)."""
    explained = item.stash.get(EXPLAINED_KEY, []) if report.when == "call" else []
    return _ops_named(_found(item, excinfo, report, profiles), explained)


def about_profile(
    item: pytest.Item,
    excinfo: pytest.ExceptionInfo[BaseException],
    report: pytest.TestReport,
    profiles: Sequence[Any],
) -> bool:
    """Whether a failed phase failed on a profile: the summary and the annotations tell it."""
    return bool(_found(item, excinfo, report, profiles))


def fixture_line(excinfo: pytest.ExceptionInfo[BaseException], rootpath: Path) -> tuple[Path, int] | None:
    """Where in the checkout a setup's or teardown's error was raised (1-based): the last frame
    under the rootdir that is neither this package's nor an installed one's (a fixture of a
    ``conftest.py``, say)."""
    place = None
    for entry in excinfo.traceback:
        path = Path(str(entry.path))
        if not path.is_absolute() or {"site-packages", "dist-packages"} & set(path.parts):
            continue
        if is_own_file(path) or not path.is_relative_to(rootpath):
            continue
        place = (path, entry.lineno + 1)
    return place


def failure_of(
    item: pytest.Item,
    excinfo: pytest.ExceptionInfo[BaseException],
    report: pytest.TestReport,
    profiles: Sequence[Any],
) -> tuple[Failure | None, tuple[SyncSite, ...]]:
    """A failed phase's failure where it was about a profile (None where not), and the syncs to
    point at. A setup or teardown error (a fixture's) has no comparison of the call's to read:
    its category is its error's type, and its place the fixture's line. An exception group's
    failure is that of the profile failures inside it, listed."""
    found = _found(item, excinfo, report, profiles)
    if not found:
        return None, ()
    from ..reports.records import Failure

    call = report.when == "call"
    what = worst([name for _, name, _ in found])
    explained = item.stash.get(EXPLAINED_KEY, []) if call else []
    lines: list[str] = []
    for error, _, _ in found:
        lines += [*([""] if lines else []), *failure_text(error, explained).splitlines()]
    kept = kept_message(lines)
    tables = profile_tables(report.sections) if what in TABLED else []
    if _named_in_a_line(what, explained):
        tables = record_tables(profiles, what)
    ops = _ops_named(found, explained)
    if ops:
        from .report_sections import op_tables

        tables = op_tables(profiles, ops)
    # The tables in what the message left of the summary's limits for one failure.
    kept_tables = kept_message(tables, MESSAGE_LINES - len(kept), MESSAGE_CHARS - len("\n".join(kept)))
    first = found[0][2]
    path = Path(str(item.path))
    line = test_line(first, path)
    if not call:
        place = fixture_line(first, item.config.rootpath)
        if place is not None:
            path, line = place
    failure = Failure(
        category=what,
        message="\n".join(kept),
        more_lines=len(lines) - len(kept) + len(tables) - len(kept_tables),
        file=str(path),
        line=line,
        tables="\n".join(kept_tables),
        when=report.when,
    )
    # The syncs to point at: those of a failed assertion on syncs, or of a rule on syncs or DtoH
    # copies (not those of a profile that broke a rule on kernels).
    syncs: tuple[SyncSite, ...] = ()
    rules = [e for e, _, _ in found if isinstance(e, ForbiddenError)]
    if what == "syncs" or any(SYNC_METRICS & set(e.metrics) for e in rules):
        syncs = _syncs(profiles)
    return failure, syncs
