"""The outputs CI reads: a Markdown job summary, GitHub annotations, JUnit properties and a
timeline page next to each failing test's trace.

``hooks.py`` imports this module, and registers :class:`ReportHooks`, only where one of
them is asked for (``reports_asked``): a session that asks for none pays nothing.

Each test's facts are worked out where the test ran (an xdist worker, or the one process):
the run's books (``books.py``) ask :meth:`ReportHooks.add_facts` for them and carry them to the
controller in the report's record, which alone writes the summary and the annotations from
the books. The JUnit figures are the item's user properties, as ``record_property`` adds them
(reports/junit.py), with what ``pytest_kernelprof_junit_properties`` implementations add.

What a failure says of itself is ``ci_facts.py``'s. A test whose fixture raised on a profile
(its setup or teardown) is an error of the summary and the annotations: this module's own
report hook finds it, and carries it to the controller on the report.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Generator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import pytest

from ..errors import KernelProfError
from ..paths import atomic_path
from .assertions import EXPLAINING_KEY
from .ci_facts import about_profile, failure_of
from .fixtures import PROFILERS_KEY
from .settings import SETTINGS_KEY

if TYPE_CHECKING:
    from ..reports.records import Failure, ReportRecord, SyncSite
    from .books import Books

# The report attribute that carries a setup's or teardown's profile error (a Failure, as JSON)
# to the controller: the books' record is the call's.
ERROR_ATTRIBUTE = "kernelprof_phase_error"
# The report attribute that carries the lines of the plugin's hooks' implementations that failed
# where the test ran (a list of str) to the controller's terminal summary.
HOOK_ERRORS_ATTRIBUTE = "kernelprof_hook_errors"
# Of those lines, the terminal summary shows this many different ones.
MAX_HOOK_ERRORS = 10


def annotations_on(config: pytest.Config) -> bool:
    mode = config.getoption("kernelprof_annotations", "auto") or "auto"
    return mode == "on" or (mode == "auto" and os.environ.get("GITHUB_ACTIONS") == "true")


@dataclass(frozen=True)
class SummaryFile:
    """Where the Markdown summary goes. ``step``: $GITHUB_STEP_SUMMARY, which other steps' tools
    append to too, so appended to, and only where the summary has something to say (the job's
    page stays clean). ``named``: by --kernelprof-summary PATH, so written on every run (a CI
    step that uploads or reads it finds it), a line saying so where nothing failed."""

    path: Path
    step: bool
    named: bool


def summary_paths(config: pytest.Config) -> list[SummaryFile]:
    """Where the Markdown summary goes: appended to $GITHUB_STEP_SUMMARY where it is set (the
    run's page), and written to ``--kernelprof-summary PATH`` besides: the option adds a file, it
    does not take the run page's summary away. ``--kernelprof-summary none`` writes none."""
    given: str | None = config.getoption("kernelprof_summary", None)
    if given == "none":
        return []
    env = os.environ.get("GITHUB_STEP_SUMMARY")
    path = config.invocation_params.dir / given if given else None
    files = [SummaryFile(Path(env), step=True, named=path is not None and _same_file(path, Path(env)))] if env else []
    if path is not None and not any(_same_file(path, other.path) for other in files):
        files.append(SummaryFile(path, step=False, named=True))
    return files


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


class ReportHooks:
    """Registered per config where an output is asked for; see the module's docstring."""

    def __init__(self, config: pytest.Config, books: Books) -> None:
        self.config = config
        self.books = books
        self.summaries = summary_paths(config)
        self.annotations = annotations_on(config)
        self.junit = bool(getattr(config.option, "xmlpath", None))
        self.pages = config.getoption("kernelprof_trace_dir", None) is not None
        self.summary_errors: list[str] = []
        # The lines of hook implementations that failed, each once, with how many times.
        self.hook_errors: dict[str, int] = {}
        # The profile errors of tests' setups and teardowns, by node id, as their reports arrive.
        self.errors: dict[str, list[Failure]] = {}

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
        pages beside the failed test's traces. (A setup or teardown error is this class's own
        hook's: :meth:`pytest_runtest_makereport`.)"""
        if self.junit and profiles:
            try:
                self._add_properties(item, report, profiles)
            except Exception as exc:  # the properties' failure is theirs: the annotation and summary still come
                report.sections.append(("kernelprof CI outputs", f"JUnit properties not written: {exc!r}"))
        if not self.summaries and not self.annotations and not self.pages:
            return None, ()
        if not report.failed or call.excinfo is None or report.when != "call":
            return None, ()
        failure, syncs = failure_of(item, call.excinfo, report, profiles)
        if self.pages and profiles:
            written = pages_for_failed_test(item, profiles)
            if written:
                report.sections.append(("kernelprof timeline pages", "\n".join(written)))
        return failure, syncs

    def _add_properties(self, item: pytest.Item, report: pytest.TestReport, profiles: Sequence[Any]) -> None:
        from ..reports.junit import MAX_PROPERTIES, bounded, properties
        from .user_hooks import junit_pairs

        # As record_property does: junitxml writes the properties of the teardown report,
        # which pytest makes from the item's.
        pairs = properties(profiles)
        more = 0
        told: list[str] = []
        for prof in profiles:
            added, left_out, errors = junit_pairs(item, prof, MAX_PROPERTIES - len(pairs))
            pairs += added
            more += left_out
            told += [error for error in errors if error not in told]
        item.user_properties.extend(bounded(pairs, more))
        if told:
            report.sections.append(("kernelprof CI outputs", "\n".join(told)))
            setattr(report, HOOK_ERRORS_ATTRIBUTE, told)

    # trylast: inside the plugin's own wrapper (hooks.py), which lets the test's profilers go at
    # its teardown: a teardown's error is told with its profiles.
    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        try:
            profiles = [c.profile for p in item.stash.get(PROFILERS_KEY, []) for c in p.captures]
            if self.junit and report.failed and call.excinfo is not None:
                # The call's explanations, which the plugin's outer wrapper (hooks.py) has yet to
                # move onto the item.
                explained = self.config.stash.get(EXPLAINING_KEY, []) if report.when == "call" else []
                junit_message(report, about_profile(item, call.excinfo, report, profiles), explained)
            if report.when != "call" and report.failed and call.excinfo is not None and self._told():
                failure, _ = failure_of(item, call.excinfo, report, profiles)
                if failure is not None:
                    setattr(report, ERROR_ATTRIBUTE, json.dumps(asdict(failure)))
        except Exception as exc:  # a report must never break the run it reports on
            report.sections.append(("kernelprof CI outputs", f"not gathered for this {report.when}: {exc!r}"))
        return report

    def _told(self) -> bool:
        return bool(self.summaries) or self.annotations

    # -- where the reports arrive (the controller under xdist) ---------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        text = getattr(report, ERROR_ATTRIBUTE, None)
        if isinstance(text, str):
            from ..reports.records import Failure

            self.errors.setdefault(report.nodeid, []).append(Failure(**json.loads(text)))
        told = getattr(report, HOOK_ERRORS_ATTRIBUTE, None)
        if isinstance(told, list):
            for line in told:
                if line in self.hook_errors or len(self.hook_errors) <= MAX_HOOK_ERRORS:
                    self.hook_errors[str(line)] = self.hook_errors.get(str(line), 0) + 1

    def _baseline_sections(self, tests: dict[str, ReportRecord]) -> list[list[str]]:
        if not any(record.baselines for record in tests.values()):
            return []
        session = self.books.baseline_session()
        return [] if session is None else session.summary(self.config.rootpath, narrowed=self.books.narrowed())

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.summaries or not self.books.controller():
            return
        from ..reports.summary import SUMMARY_BYTES, nothing_to_report, render_summary
        from .user_hooks import summary_lines

        tests = self.books.by_test()
        extra, failed = summary_lines(self.config, int(exitstatus))
        self.summary_errors += failed
        baselines = self._baseline_sections(tests)
        for target in self.summaries:
            text = render_summary(
                tests,
                baselines,
                rootpath=self.config.rootpath,
                extra=extra,
                errors=self.errors,
                budget=SUMMARY_BYTES - (_size_of(target.path) if target.step else 0),
            )
            if not text and target.named:
                text = nothing_to_report(tests)
            if not text:
                continue
            try:
                _write_summary(target, text)
            except OSError as exc:
                # Told in the terminal summary, below the failures, where the reader looks: here it
                # would be glued onto the progress line.
                self.summary_errors.append(f"kernelprof: the job summary was not written to {target.path}: {exc}")

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        for error in self.summary_errors + self._hook_error_lines():
            terminalreporter.ensure_newline()
            terminalreporter.write_line(error, yellow=True, bold=True)
        if not self.annotations or not self.books.controller():
            return
        from ..reports.annotations import workflow_commands

        for line in workflow_commands(self.books.by_test(), workspace=_workspace(self.config), errors=self.errors):
            terminalreporter.write_line(line)

    def _hook_error_lines(self) -> list[str]:
        shown = list(self.hook_errors.items())[:MAX_HOOK_ERRORS]
        lines = [line + (f" ({count} times)" if count > 1 else "") for line, count in shown]
        if len(self.hook_errors) > MAX_HOOK_ERRORS:
            lines.append("kernelprof: more hook implementations failed: the tests' reports say which")
        return lines


def _write_summary(target: SummaryFile, text: str) -> None:
    """Append to the step's file; replace a file the user named atomically (a reader never sees
    half of it, and it holds this run's summary only, as --junitxml's file does). A named pipe or
    a device (``/dev/stdout``) the user named cannot be replaced: it is written into."""
    try:
        mode = target.path.stat().st_mode
    except OSError:
        mode = 0
    if target.step or stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        target.path.parent.mkdir(parents=True, exist_ok=True)
        with _appending(target.path) as handle:
            handle.write(text)
        return
    with atomic_path(target.path) as tmp, open(tmp, "w", encoding="utf-8", errors="backslashreplace") as handle:
        handle.write(text)


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


def _size_of(path: Path) -> int:
    """What the step's summary file holds already (other steps' tools append to it too): the
    budget is the file's, not the run's."""
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0


def junit_message(
    report: pytest.TestReport,
    about_profile: bool,
    explained: Sequence[tuple[Sequence[str], Sequence[str]]] = (),
) -> None:
    """The terminal points at the rest of a long explanation in a report section "below"; JUnit's
    ``message`` attribute (pytest's crash message) goes where that section is in the failure's
    own text: the pointer says so there. The message of a failure about a profile has its memory
    addresses written ``at 0x...``, as the summary and the annotations write them (a dashboard
    compares it between runs); another test's message is pytest's. Where pytest would cut the
    message of such a failure short (a baseline's diff), it keeps its first lines and the lines
    that say what to do (the update command), and says the rest is in the failure's text; one
    that the terminal cut (``assert prof == kernel_baseline``) has those lines of its whole
    explanation (``explained``: the plugin's explanations, shown and whole) above the pointer."""
    from ..reports.junit import short_message
    from ..reports.summary import without_addresses

    crash = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    if not isinstance(message, str):
        return
    if POINTER_END in message:
        message = _with_actions(_POINTER.sub(JUNIT_POINTER, message), explained)
    elif not about_profile:
        return
    else:
        message = short_message(without_addresses(message))
    setattr(crash, "message", without_addresses(message))  # noqa: B010 (an Any, maybe None)


# The end of the terminal's pointer (model/explain.py), and what JUnit's message says instead.
POINTER_END = "is in the 'kernelprof assertion' section below; -vv shows it here)"
_POINTER = re.compile(r"\(the rest, (\d+) lines, " + re.escape(POINTER_END))
JUNIT_POINTER = r"(the rest, \1 lines, is in the 'kernelprof assertion' section of this failure's text)"


def _with_actions(message: str, explained: Sequence[tuple[Sequence[str], Sequence[str]]]) -> str:
    """``message``, cut by the terminal, with the lines of its whole explanation that say what
    to do and that it left out, above its pointer, where they fit pytest's bound on a message."""
    from ..reports.junit import MESSAGE_CHARS
    from ..reports.summary import acting_lines

    lines = message.splitlines()
    at = next((i for i in range(len(lines) - 1, -1, -1) if "'kernelprof assertion' section" in lines[i]), None)
    if not explained or at is None:
        return message
    whole = explained[-1][1]
    acts = [whole[i] for i in acting_lines(whole, 1, 2) if whole[i].strip() not in message]
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    longer = "\n".join([*lines[:at], *(indent + line.strip() for line in acts), *lines[at:]])
    return longer if len(longer) <= MESSAGE_CHARS else message


def _workspace(config: pytest.Config) -> Path:
    """The folder annotation paths are relative to: $GITHUB_WORKSPACE (the checkout), else rootdir."""
    env = os.environ.get("GITHUB_WORKSPACE")
    return Path(env) if env else config.rootpath


def _page_baselines(item: pytest.Item, profiles: Sequence[Any]) -> list[tuple[str, str]]:
    """Side-by-side tables of the baselines a failed test checked."""
    from ..checks.baseline import Checked, Signature, per_call_lines, read_baseline
    from ..reports.summary import relative_paths
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
            signature = Signature.from_json(stored) if stored is not None else None
            kernels = signature.kernels if signature is not None else ()
            current = list(run.kernels)
            # The failure's headline (`kernels per call: 4 -> 5 (launches too)`) above the page's lines too.
            headline = per_call_lines(signature, Signature.of(run)) if signature is not None else []
        except (KernelProfError, ValueError, KeyError, TypeError):
            continue
        # The path as the failure and the job summary name it: relative to the rootdir.
        path = relative_paths(str(note.path), item.config.rootpath)
        title = f"baseline {note.arch}/{note.name} ({path}) and this run"
        sections.append((title, baseline_table(kernels, current, headline)))
    return sections


def pages_for_failed_test(item: pytest.Item, profiles: Sequence[Any]) -> list[str]:
    """A page beside each trace the plugin saved for a failed test: one line per page."""
    from ..paths import trace_file_name
    from ..reports.summary import relative_paths
    from ..reports.timeline import page_path, write_page

    settings = item.config.stash[SETTINGS_KEY]
    if settings.trace_dir is None or settings.save == "none":
        return []
    baselines = _page_baselines(item, profiles)
    root = item.config.rootpath

    def shown(text: str) -> str:  # a trace's path as the failure and the job summary name it
        return relative_paths(text, root)

    lines = []
    for index, prof in enumerate(profiles):
        trace = settings.trace_dir / trace_file_name(item.nodeid, index)
        if not trace.exists():
            continue
        page = page_path(trace)
        try:
            # Its own words after the test id (it read `t.py::test_x profile 1`, a run-on).
            title = f"{item.nodeid}: " + (
                f"profile {index + 1} of {len(profiles)}" if len(profiles) > 1 else "its profile"
            )
            write_page(page, prof, title=title, trace=trace, baselines=baselines, shown=shown)
        except OSError as exc:
            lines.append(f"{page}: not written ({exc})")
        else:
            lines.append(f"{page}")
    return lines
