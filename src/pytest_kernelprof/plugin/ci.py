"""The outputs CI reads: a Markdown job summary, GitHub annotations, JUnit properties and a
timeline page next to each failing test's trace.

``hooks.py`` imports this module, and registers :class:`ReportHooks`, only where one of
them is asked for (``reports_asked``): a session that asks for none pays nothing.

Each test's facts are worked out where the test ran (an xdist worker, or the one process):
the run's books (``books.py``) ask :meth:`ReportHooks.add_facts` for them and carry them to the
controller in the report's record, which alone writes the summary and the annotations from
the books. The JUnit figures are the item's user properties, as ``record_property`` adds them
(reports/junit.py), with what ``pytest_kernelprof_junit_properties`` implementations add.

A failure's category comes from types, never from its message: the exception's type
(:func:`category`), else what the failed assertion compared (``pytest_assertrepr_compare``
records it on the item) or named (:func:`asserted`).
"""

from __future__ import annotations

import ast
import contextlib
import errno
import os
import re
import textwrap
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import pytest

from ..errors import ForbiddenError, KernelProfError
from ..reports.categories import of_error
from .books import COMPARED_KEY, EXPLAINED_KEY
from .settings import SETTINGS_KEY

if TYPE_CHECKING:
    from ..reports.records import Failure, ReportRecord, SyncSite
    from .books import Books

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


def annotations_on(config: pytest.Config) -> bool:
    mode = config.getoption("kernelprof_annotations", "auto") or "auto"
    return mode == "on" or (mode == "auto" and os.environ.get("GITHUB_ACTIONS") == "true")


def summary_path(config: pytest.Config) -> Path | None:
    """Where to append the Markdown summary: ``--kernelprof-summary``, else $GITHUB_STEP_SUMMARY."""
    given: str | None = config.getoption("kernelprof_summary", None)
    if given == "none":
        return None
    if given:
        return config.invocation_params.dir / given
    env = os.environ.get("GITHUB_STEP_SUMMARY")
    return Path(env) if env else None


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
    return subject(*values)


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
    """The kernel tables of a failed test's profiles, as its report's sections show them, for a
    failure whose message carried none (a plain ``len()``, an ``all()`` over kernels): a CI reader
    has no terminal section. None where the message showed a profile's table whole."""
    from .report_sections import PROFILE_SECTION, SHOWN_ABOVE

    profiles = [(title, text) for title, text in sections if title.startswith(PROFILE_SECTION)]
    if any(SHOWN_ABOVE in text for _, text in profiles):
        return []
    lines: list[str] = []
    for title, text in profiles:
        lines += [*([""] if lines else []), f"{title}:", *text.splitlines()]
    return lines


def record_tables(profiles: Sequence[Any], what: str) -> list[str]:
    """The syncs or copies of a failed test's profiles as tables, for a failure whose message
    named them in one line (``assert not prof.syncs``): the op chain and the times a CI reader
    would otherwise find only in the log's profile section."""
    from .report_sections import PROFILE_SECTION

    lines: list[str] = []
    for number, prof in enumerate(profiles, 1):
        try:
            records = prof.syncs if what == "syncs" else prof.copies
            table = records.table()
        except KernelProfError:  # no GPU activity: the message says so
            continue
        title = f"{PROFILE_SECTION}{number} of {len(profiles)}, its {RECORDS[what]}:"
        lines += [*([""] if lines else []), title, *table.splitlines()]
    return lines


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
            seen[file, line] = replace(found, count=found.count + 1)
    return tuple(seen.values())


class ReportHooks:
    """Registered per config where an output is asked for; see the module's docstring."""

    def __init__(self, config: pytest.Config, books: Books) -> None:
        self.config = config
        self.books = books
        self.summary = summary_path(config)
        self.annotations = annotations_on(config)
        self.junit = bool(getattr(config.option, "xmlpath", None))
        self.pages = config.getoption("kernelprof_trace_dir", None) is not None
        self.summary_error = ""

    # -- where the test runs -------------------------------------------------------------

    def add_facts(
        self,
        item: pytest.Item,
        call: pytest.CallInfo[None],
        report: pytest.TestReport,
        profiles: Sequence[Any],
    ) -> tuple[Failure | None, tuple[SyncSite, ...]]:
        """What the outputs need of a test's call phase: its failure where it was about a
        profile, and the syncs to point at. The JUnit properties go on the item, the timeline
        pages beside the failed test's traces."""
        if self.junit and profiles:
            from ..reports.junit import properties

            # As record_property does: junitxml writes the properties of the teardown report,
            # which pytest makes from the item's.
            item.user_properties.extend(properties(profiles))
            for prof in profiles:
                for pairs in item.config.hook.pytest_kernelprof_junit_properties(item=item, profile=prof):
                    item.user_properties.extend(pairs)
        if self.summary is None and not self.annotations and not self.pages:
            return None, ()
        if not report.failed or call.excinfo is None:
            return None, ()
        failure: Failure | None = None
        syncs: tuple[SyncSite, ...] = ()
        error = call.excinfo.value
        compared = item.stash.get(COMPARED_KEY, [])
        about = compared[-1] if compared else None
        if about is None and profiles and isinstance(error, AssertionError):
            about = asserted(call.excinfo)
        what = category(error, bool(profiles), about)
        if what is not None:
            from ..reports.records import Failure

            path = Path(str(item.path))
            explained = item.stash.get(EXPLAINED_KEY, [])
            lines = failure_text(error, explained).splitlines()
            kept = kept_lines(lines)
            tables = profile_tables(report.sections) if what in TABLED else []
            if what in RECORDS and not explained:  # `assert not prof.syncs`: one line, no table
                tables = record_tables(profiles, what)
            # The tables in what the message left of the summary's limits for one failure.
            kept_tables = kept_lines(tables, MESSAGE_LINES - len(kept), MESSAGE_CHARS - len("\n".join(kept)))
            failure = Failure(
                category=what,
                message="\n".join(kept),
                more_lines=len(lines) - len(kept) + len(tables) - len(kept_tables),
                file=str(path),
                line=test_line(call.excinfo, path),
                tables="\n".join(kept_tables),
            )
            # The syncs to point at: those of a failed assertion on syncs, or of a rule on
            # syncs or DtoH copies (not those of a profile that broke a rule on kernels).
            if what == "syncs" or (isinstance(error, ForbiddenError) and SYNC_METRICS & set(error.metrics)):
                syncs = _syncs(profiles)
        if self.pages and profiles:
            written = pages_for_failed_test(item, profiles)
            if written:
                report.sections.append(("kernelprof timeline pages", "\n".join(written)))
        return failure, syncs

    # -- where the reports arrive (the controller under xdist) ---------------------------

    def _baseline_sections(self, tests: dict[str, ReportRecord]) -> list[list[str]]:
        if not any(record.baselines for record in tests.values()):
            return []
        session = self.books.baseline_session()
        return [] if session is None else session.summary(self.config.rootpath, narrowed=self.books.narrowed())

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.summary is None or not self.books.controller():
            return
        from ..reports.summary import render_summary

        tests = self.books.by_test()
        extra = self.config.hook.pytest_kernelprof_summary(config=self.config, exitstatus=int(exitstatus))
        text = render_summary(
            tests,
            self._baseline_sections(tests),
            rootpath=self.config.rootpath,
            extra=[str(line) for lines in extra for line in lines or ()],
        )
        if not text:
            return
        try:
            self.summary.parent.mkdir(parents=True, exist_ok=True)
            with _appending(self.summary) as handle:
                handle.write(text)
        except OSError as exc:
            # Told in the terminal summary, below the failures, where the reader looks: here it
            # would be glued onto the progress line.
            self.summary_error = f"kernelprof: the job summary was not written to {self.summary}: {exc}"

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.summary_error:
            terminalreporter.ensure_newline()
            terminalreporter.write_line(self.summary_error, yellow=True, bold=True)
        if not self.annotations or not self.books.controller():
            return
        from ..reports.annotations import workflow_commands

        for line in workflow_commands(self.books.by_test(), workspace=_workspace(self.config)):
            terminalreporter.write_line(line)


def _appending(path: Path) -> TextIO:
    """``path`` opened to append text to. Opened without blocking: a named pipe that no one reads
    is refused (ENXIO) instead of hanging the end of the run; then written blocking, as a file is.
    A test's message may hold a lone surrogate (a path's undecodable byte): written as its escape."""
    nonblocking = getattr(os, "O_NONBLOCK", 0)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | nonblocking
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno != errno.ENXIO:
            raise
        raise OSError(exc.errno, "a named pipe that no one reads", str(path)) from None
    try:
        if nonblocking:
            os.set_blocking(fd, True)
        return open(fd, "a", encoding="utf-8", errors="backslashreplace")
    except BaseException:
        os.close(fd)
        raise


def _workspace(config: pytest.Config) -> Path:
    """The folder annotation paths are relative to: $GITHUB_WORKSPACE (the checkout), else rootdir."""
    env = os.environ.get("GITHUB_WORKSPACE")
    return Path(env) if env else config.rootpath


def _page_baselines(item: pytest.Item, profiles: Sequence[Any]) -> list[tuple[str, str]]:
    """Side-by-side tables of the baselines a failed test checked."""
    from ..checks.baseline import Checked, Signature, read_baseline
    from ..reports.timeline import baseline_table
    from .fixtures import BASELINE_NOTES_KEY

    checked = [note for note in item.stash.get(BASELINE_NOTES_KEY, []) if isinstance(note, Checked)]
    if not checked or not profiles:
        return []
    sections = []
    for note in dict.fromkeys(checked):
        run = next((p for p in reversed(profiles) if (p.arch or "unknown_arch") == note.arch), None)
        if run is None:
            continue
        try:
            stored = read_baseline(Path(note.path)).get("archs", {}).get(note.arch, {}).get(note.name)
            kernels = Signature.from_json(stored).kernels if stored is not None else ()
            current = list(run.kernels)
        except (KernelProfError, ValueError, KeyError, TypeError):
            continue
        title = f"baseline {note.arch}/{note.name} ({note.path}) and this run"
        sections.append((title, baseline_table(kernels, current)))
    return sections


def pages_for_failed_test(item: pytest.Item, profiles: Sequence[Any]) -> list[str]:
    """A page beside each trace the plugin saved for a failed test: one line per page."""
    from ..paths import trace_file_name
    from ..reports.timeline import page_path, write_page

    settings = item.config.stash[SETTINGS_KEY]
    if settings.trace_dir is None or settings.save == "none":
        return []
    baselines = _page_baselines(item, profiles)
    lines = []
    for index, prof in enumerate(profiles):
        trace = settings.trace_dir / trace_file_name(item.nodeid, index)
        if not trace.exists():
            continue
        page = page_path(trace)
        try:
            write_page(page, prof, title=f"{item.nodeid} profile {index + 1}", trace=trace, baselines=baselines)
        except OSError as exc:
            lines.append(f"{page}: not written ({exc})")
        else:
            lines.append(f"{page}")
    return lines
