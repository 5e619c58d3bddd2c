"""The outputs CI reads: a Markdown job summary, GitHub annotations, JUnit properties and a
timeline page next to each failing test's trace.

``hooks.py`` imports this module, and registers :class:`ReportHooks`, only where one of
them is asked for (``reports_asked``): a session that asks for none pays nothing.

Each test's facts are worked out where the test ran (an xdist worker, or the one process)
and travel on its report as the attribute ``kernelprof_ci``, a dict of plain values: xdist
serialises a report's attributes, so they reach the controller, which alone writes the
summary and the annotations. They are not user properties, so they stay out of the JUnit
XML and the terminal. The JUnit figures are the item's user properties, as ``record_property``
adds them (reports/junit.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any

import pytest

from ..errors import ForbiddenError, KernelProfError
from .fixtures import PROFILERS_KEY
from .settings import run_was_narrowed

ATTRIBUTE = "kernelprof_ci"

# What a failure was about, worst first (the summary's order).
CATEGORIES = ("rule", "baseline", "syncs", "kernels")
MESSAGE_LINES = 40  # of a failure's message, kept for the summary
NAMES_PER_TEST = 50  # undecoded kernel names sent per test
_SYNC_WORDS = re.compile(r"\bsyncs?\b|Synchronize|dtoh", re.IGNORECASE)
_SYNC_RULE = re.compile(r"\((?:syncs|dtoh_copies)(?:[<>=!]=?)")  # "(syncs>0)" in a rule break's message
# What a failed assertion on a profile value says (pytest's message names the values).
_PROFILE_WORDS = re.compile(r"kernel|Kernel|launch|CopyList|OpTable|graph.break|recompile|_bytes|\bops?\b")
_BASELINE_WORDS = ("kernel_baseline", "kernel baseline", "the baseline ")


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


def unplaced(kernel: Any) -> bool:
    """A kernel whose name the decoder could not place (``Kernel.unplaced`` where it exists)."""
    return bool(getattr(kernel, "unplaced", kernel.kind == "other"))


def category(error: BaseException, profiled: bool) -> str | None:
    """What a test's failure was about, or None where it was not about a profile."""
    if isinstance(error, ForbiddenError):
        return "rule"
    text = str(error)
    if isinstance(error, AssertionError) and any(word in text for word in _BASELINE_WORDS):
        return "baseline"
    if not profiled and not isinstance(error, KernelProfError):
        return None
    if _SYNC_WORDS.search(text):
        return "syncs"
    if isinstance(error, KernelProfError) or _PROFILE_WORDS.search(text):
        return "kernels"
    return None  # a profiled test that failed on something else (its numbers, say)


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


def _syncs(profiles: Sequence[Any]) -> list[dict[str, Any]]:
    seen: dict[tuple[str, int], dict[str, Any]] = {}
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
            found = seen.setdefault(
                (file, line),
                {"file": file, "line": line, "function": function, "call": sync.call, "op": sync.op, "count": 0},
            )
            found["count"] += 1
    return list(seen.values())


def _unplaced_names(profiles: Sequence[Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for prof in profiles:
        try:
            kernels = list(prof.kernels)
        except KernelProfError:
            continue
        for kernel in kernels:
            if unplaced(kernel):
                counts[kernel.name] = counts.get(kernel.name, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1])[:NAMES_PER_TEST])


class ReportHooks:
    """Registered per config where an output is asked for; see the module's docstring."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.summary = summary_path(config)
        self.annotations = annotations_on(config)
        self.junit = bool(getattr(config.option, "xmlpath", None))
        self.pages = config.getoption("kernelprof_trace_dir", None) is not None
        self.facts: dict[str, dict[str, Any]] = {}  # node id -> what its reports carried
        self.ran: set[str] = set()
        self.not_passed: set[str] = set()
        self.baseline_properties: dict[str, list[tuple[str, object]]] = {}
        self.deselected = False

    # -- where the test runs -------------------------------------------------------------

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        # tryfirst: the outermost wrapper, so this runs after the plugin's own wrapper has
        # saved the test's traces and added its baseline notes to the report.
        report = yield
        if report.when != "call":
            return report
        try:
            self._add_facts(item, call, report)
        except Exception as exc:  # a report must never break the run it reports on
            report.sections.append(("kernelprof CI outputs", f"not gathered for this test: {exc!r}"))
        return report

    def _add_facts(self, item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
        profilers = item.stash.get(PROFILERS_KEY, [])
        profiles = [capture.profile for profiler in profilers for capture in profiler.captures]
        if self.junit and profiles:
            from ..reports.junit import properties

            # As record_property does: junitxml writes the properties of the teardown report,
            # which pytest makes from the item's.
            item.user_properties.extend(properties(profiles))
        if self.summary is None and not self.annotations and not self.pages:
            return
        facts: dict[str, Any] = {}
        if report.failed and call.excinfo is not None:
            what = category(call.excinfo.value, bool(profiles))
            if what is not None:
                path = Path(str(item.path))
                lines = str(call.excinfo.value).splitlines()
                facts["failure"] = {
                    "category": what,
                    "message": "\n".join(lines[:MESSAGE_LINES]),
                    "more_lines": max(0, len(lines) - MESSAGE_LINES),
                    "file": str(path),
                    "line": test_line(call.excinfo, path),
                }
                # The syncs to point at: those of a failed assertion on syncs, or of a rule on
                # syncs or DtoH copies (not those of a profile that broke a rule on kernels).
                if what == "syncs" or (what == "rule" and _SYNC_RULE.search(str(call.excinfo.value))):
                    facts["syncs"] = _syncs(profiles)
            if self.pages and profiles:
                written = pages_for_failed_test(item, report, profiles)
                if written:
                    report.sections.append(("kernelprof timeline pages", "\n".join(written)))
        if self.summary is not None and profiles:
            names = _unplaced_names(profiles)
            if names:
                facts["unplaced"] = names
        if facts:
            setattr(report, ATTRIBUTE, facts)

    # -- where the reports arrive (the controller under xdist) ---------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.ran.add(report.nodeid)
        if report.failed or report.skipped:
            self.not_passed.add(report.nodeid)
        facts = getattr(report, ATTRIBUTE, None)
        if isinstance(facts, dict):
            self.facts.setdefault(report.nodeid, {}).update(facts)
        ours = [(key, value) for key, value in report.user_properties if str(key).startswith("kernelprof_baseline")]
        if ours:
            self.baseline_properties.setdefault(report.nodeid, []).extend(ours)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected = self.deselected or bool(items)

    def _controller(self) -> bool:
        return not hasattr(self.config, "workerinput")

    def _baseline_sections(self) -> list[list[str]]:
        if not self.baseline_properties:
            return []
        from ..checks.baseline import BaselineSession

        session = BaselineSession()
        for nodeid in self.ran:
            session.add_report(nodeid, self.baseline_properties.get(nodeid, ()), passed=nodeid not in self.not_passed)
        narrowed = run_was_narrowed(self.config, self.deselected)
        return session.summary(self.config.rootpath, narrowed=narrowed)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.summary is None or not self._controller():
            return
        from ..reports.summary import render_summary

        text = render_summary(self.facts, self._baseline_sections(), rootpath=self.config.rootpath)
        if not text:
            return
        try:
            self.summary.parent.mkdir(parents=True, exist_ok=True)
            with open(self.summary, "a", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            reporter = self.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(f"kernelprof: the job summary was not written to {self.summary}: {exc}")

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.annotations or not self._controller():
            return
        from ..reports.annotations import workflow_commands

        for line in workflow_commands(self.facts, workspace=_workspace(self.config)):
            terminalreporter.write_line(line)


def _workspace(config: pytest.Config) -> Path:
    """The folder annotation paths are relative to: $GITHUB_WORKSPACE (the checkout), else rootdir."""
    env = os.environ.get("GITHUB_WORKSPACE")
    return Path(env) if env else config.rootpath


def _page_baselines(
    item: Any, user_properties: Sequence[tuple[str, object]], profiles: Sequence[Any]
) -> list[tuple[str, str]]:
    """Side-by-side tables of the baselines a failed test checked ("path|arch|name" notes)."""
    checked = [str(v) for k, v in user_properties if k == "kernelprof_baseline"]
    if not checked or not profiles:
        return []
    from ..checks.baseline import Signature, read_baseline
    from ..reports.timeline import baseline_table

    sections = []
    for note in dict.fromkeys(checked):
        path, arch, name = note.split("|", 2)
        run = next((p for p in reversed(profiles) if (p.arch or "unknown_arch") == arch), None)
        if run is None:
            continue
        try:
            stored = read_baseline(Path(path)).get("archs", {}).get(arch, {}).get(name)
            kernels = Signature.from_json(stored).kernels if stored is not None else ()
            current = list(run.kernels)
        except (KernelProfError, ValueError, KeyError, TypeError):
            continue
        sections.append((f"baseline {arch}/{name} ({path}) and this run", baseline_table(kernels, current)))
    return sections


def pages_for_failed_test(item: Any, report: Any, profiles: Sequence[Any]) -> list[str]:
    """A page beside each trace the plugin saved for a failed test: one line per page."""
    from ..paths import trace_file_name
    from ..reports.timeline import page_path, write_page
    from .settings import SETTINGS_KEY

    settings = item.config.stash[SETTINGS_KEY]
    if settings.trace_dir is None or settings.save == "none":
        return []
    baselines = _page_baselines(item, report.user_properties, profiles)
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
