"""The run's books, kept by one hook class (:class:`Books`): which tests ran, which did not pass,
and what each test's reports carried (a ``ReportRecord`` of ``reports/records.py``: baseline
notes, kernels no evidence placed, a profile failure and its syncs, a worker's device line).

Where a test runs (an xdist worker, or the one process) it writes the record onto each report
of the test, setup, call and teardown alike, with what that phase added (``PhaseBooks``): a
fixture checks baselines and profiles in setup and teardown as a test does in its call. Where
reports arrive (the controller, or the one process) it reads them back. Every
end-of-run output reads from here: the baselines' summary (``checks/baseline``), the unplaced
kernel names, the workers' device lines, and the CI outputs (``ci.py``).

Registered for every session: a report that carries no record costs a set insertion, and the
record module (which imports the profile model) is imported only where a report has one.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from .fixtures import BASELINE_NOTES_KEY, PROFILERS_KEY, active_rules, from_here
from .settings import SETTINGS_KEY, Settings, run_was_narrowed

if TYPE_CHECKING:
    from ..api.captures import Capture
    from ..checks.baseline import BaselineNote, BaselineSession
    from ..reports.records import Failure, ReportRecord, SyncSite
    from .ci import ReportHooks

# The report attribute that holds the record, as JSON text: xdist sends a report's attributes to
# the controller, and an attribute, unlike a user property, stays out of the JUnit XML.
RECORD_ATTRIBUTE = "kernelprof_record"
# The workeroutput key of the node ids a worker collected but did not run (Books.not_run).
NOT_RUN_OUTPUT = "kernelprof_not_run"

# A worker's device line, (line, worker id), set on the item whose setup report carries it.
DEVICE_KEY = pytest.StashKey[tuple[str, str]]()
# What a test's failed comparisons in its call phase were about ("syncs", "kernels", "baseline"),
# as pytest_assertrepr_compare saw them (hooks.py); ci.py's category() reads it.
COMPARED_KEY = pytest.StashKey[list[str]]()
# What the explanations of those comparisons said, (the lines pytest was given, the whole), for
# the CI outputs: pytest's message holds only what the terminal shows (hooks.py, ci.py).
EXPLAINED_KEY = pytest.StashKey[list[tuple[tuple[str, ...], tuple[str, ...]]]]()


class PhaseBooks:
    """What a test's reports have told so far of its profiles and baseline notes, so that each
    phase's report tells what that phase added: a profile made in a fixture's setup and one made
    in its teardown each go into the books once, with the report of the phase that made them."""

    def __init__(self) -> None:
        self.notes = 0  # how many of the test's baseline notes a record told of
        self.next_run()

    def next_run(self) -> None:
        """Forget the profiles: a rerun of the test (pytest-rerunfailures runs its phases again
        in one protocol) starts with none, as a test does. Its baseline notes stay in one list."""
        self.seen: list[Capture] = []  # the test's profiles, in the order its phases first saw them
        self._ids: set[int] = set()  # of those in ``seen``, which keeps them alive
        self.saved = 0  # how many of ``seen`` have their traces saved
        self.recorded = 0  # how many of ``seen`` a report's record told of
        self.failed = False  # a phase of the test failed: its later traces are saved too

    def captures(self, item: pytest.Item) -> list[Capture]:
        """Every profile of the test so far: those a later phase (or a profiler that profiled
        again) added come after, so each keeps the index its trace's name was given."""
        for holder in item.stash.get(PROFILERS_KEY, []):
            for capture in holder.captures:
                if id(capture) not in self._ids:
                    self._ids.add(id(capture))
                    self.seen.append(capture)
        return self.seen


# The running test's PhaseBooks, from the start of its protocol to its end.
PHASES_KEY = pytest.StashKey[PhaseBooks]()


class Books:
    """The hooks that keep the books, registered per config (``pytest_runtest_logreport`` is
    given no config to find them by); see the module's docstring."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.ran: set[str] = set()
        self.not_passed: set[str] = set()  # node ids with a failed or skipped phase
        self.records: list[tuple[str, ReportRecord]] = []  # in the order the reports arrived
        # Node ids collected but left out of the run: deselected, or dropped by a conftest's or
        # plugin's pytest_collection_modifyitems without pytest_deselected. Their baselines are
        # neither unused nor pruned (checks/baseline/session.py); under xdist the workers' reach
        # the controller through their workeroutput.
        self.not_run: set[str] = set()
        # The CI outputs, where one is asked for: they add a failed test's facts to its record.
        self.outputs: ReportHooks | None = None

    # -- where the test runs -------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, object, object]:
        """Open the test's list of profilers (``running.py``) for all of its protocol, so that a
        profile made in any phase is the test's, as the ``kernelprof`` fixture's are: one taken
        with ``pytest_kernelprof.profile``, ``Profiler()`` or ``load_trace``, in a fixture of any
        scope too (a session- or module-scoped fixture's belongs to the test whose setup made it,
        the first that uses it, and its teardown's to the test it tears down after, the last).
        Also say whether the test's traces will be saved, so that each profile keeps its trace
        as its session ends, and which suite rules hold the test, so that ``load_trace`` warns
        that it checks none of them. ``running`` is a leaf: no profile model is imported here."""
        from ..running import close_test, open_test

        settings = self.config.stash.get(SETTINGS_KEY, Settings())
        saved = settings.trace_dir is not None and settings.save != "none"
        rules = tuple(rule.name for rule in active_rules(item, settings))
        item.stash[PHASES_KEY] = PhaseBooks()
        before = open_test(item.stash.setdefault(PROFILERS_KEY, []), keep_traces=saved, rules=rules)
        try:
            return (yield)
        finally:
            close_test(before)
            if PROFILERS_KEY in item.stash:
                del item.stash[PROFILERS_KEY]
            if PHASES_KEY in item.stash:
                del item.stash[PHASES_KEY]

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        # tryfirst: the outermost wrapper, so this runs after the plugin's own (hooks.py) has
        # saved the test's traces and set what the record takes from the item.
        report = yield
        record = self._record(item, call, report)
        if record:
            setattr(report, RECORD_ATTRIBUTE, record.to_json())
        phases = item.stash.get(PHASES_KEY, None)
        if report.when == "teardown" and phases is not None:
            # The torch profilers hold every event of their sessions: let them go with the run.
            item.stash.get(PROFILERS_KEY, []).clear()
            phases.next_run()
        return report

    def _record(self, item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> ReportRecord | None:
        """What this phase's report tells the books: the baseline notes and the profiles'
        unplaced kernels that the phase added, and, for the call, the CI outputs' facts."""
        device = item.stash.get(DEVICE_KEY, None) if report.when == "setup" else None
        phases = item.stash.get(PHASES_KEY, None)
        from_here: list[Capture] = []
        notes: list[BaselineNote] = []
        if phases is not None:
            captures = phases.captures(item)
            from_here, phases.recorded = captures[phases.recorded :], len(captures)
            everyone = item.stash.get(BASELINE_NOTES_KEY, [])
            notes, phases.notes = everyone[phases.notes :], len(everyone)
        failure: Failure | None = None
        syncs: tuple[SyncSite, ...] = ()
        if self.outputs is not None and report.when == "call":
            profiles = [c.profile for c in phases.seen] if phases is not None else []
            try:
                failure, syncs = self.outputs.add_facts(item, call, report, profiles)
            except Exception as exc:  # a report must never break the run it reports on
                report.sections.append(("kernelprof CI outputs", f"not gathered for this test: {exc!r}"))
        if not from_here and not notes and failure is None and device is None:
            return None  # a phase that used nothing of the plugin
        from ..reports.records import ReportRecord
        from .report_sections import unplaced_kernels

        record = ReportRecord(tuple(notes), tuple(unplaced_kernels(from_here)), failure, syncs, profiles=len(from_here))
        if device is not None:
            record = record.merged(ReportRecord(device=device[0], worker=device[1]))
        return record

    # -- where the reports arrive (the controller under xdist) ---------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.ran.add(report.nodeid)
        if report.failed or report.skipped:
            self.not_passed.add(report.nodeid)
        text = getattr(report, RECORD_ATTRIBUTE, None)
        if isinstance(text, str):
            from ..reports.records import ReportRecord

            self.records.append((report.nodeid, ReportRecord.from_json(text)))

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> Generator[None, None, None]:
        # The outermost wrapper: every other implementation has run when this one resumes.
        before = [item.nodeid for item in items]
        result = yield
        after = {item.nodeid for item in items}
        self.not_run.update(nodeid for nodeid in before if nodeid not in after)
        return result

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.not_run.update(item.nodeid for item in items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        output = getattr(self.config, "workeroutput", None)
        if output is not None:
            output[NOT_RUN_OUTPUT] = sorted(self.not_run)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """xdist controller: a worker's tests that it collected but did not run."""
        self.not_run.update(getattr(node, "workeroutput", {}).get(NOT_RUN_OUTPUT, ()))

    def controller(self) -> bool:
        """Whether this process tells the run's end (an xdist worker saw part of the run)."""
        return not hasattr(self.config, "workerinput")

    def by_test(self) -> dict[str, ReportRecord]:
        """Each test's records merged into one, in the order the tests first reported."""
        from ..reports.records import by_test

        return by_test(self.records)

    def narrowed(self) -> bool:
        return run_was_narrowed(self.config)

    def baseline_session(self) -> BaselineSession | None:
        """What the run did with baselines; None where no test used one and no module that ran
        has a ``__kernelprof__`` folder (then the baseline module is not even imported)."""
        tests = self.by_test() if self.records else {}
        if not any(record.baselines for record in tests.values()) and not self._baseline_folders():
            return None
        from ..checks.baseline import BaselineSession

        rootpath, here = self.config.rootpath, self.config.invocation_params.dir
        # Each command names its test as a failure's does: from the folder pytest was started in.
        session = BaselineSession(command_id=lambda nodeid: from_here(rootpath, nodeid, here))
        for nodeid in self.ran:
            notes = tests[nodeid].baselines if nodeid in tests else ()
            session.add_report(nodeid, notes, passed=nodeid not in self.not_passed)
        session.add_not_run(self.not_run - self.ran)
        return session

    def _baseline_folders(self) -> bool:
        root = self.config.rootpath
        modules = {root / nodeid.split("::", 1)[0] for nodeid in self.ran | self.not_run}
        return any((module.parent / "__kernelprof__" / module.stem).is_dir() for module in modules)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter, exitstatus: int) -> None:
        if not self.controller():
            return
        unplaced, devices = self._unplaced_section(), self._device_lines()
        baselines = self._baseline_sections(int(exitstatus))
        if not unplaced and not devices and not baselines:
            return
        from ..tables import printable

        # Every line through printable(): the names in them come from traces and test ids, and
        # none may start a new line or a GitHub Actions workflow command.
        for title, *lines in unplaced:
            terminalreporter.write_sep("-", printable(title))
            for line in lines:
                terminalreporter.write_line(printable(line))
        for line in devices:
            terminalreporter.write_line(printable(line))
        for title, *lines in baselines:
            terminalreporter.write_sep("-", printable(title))
            for line in lines:
                terminalreporter.write_line(printable(line))

    def _unplaced_section(self) -> list[list[str]]:
        seen: dict[str, tuple[str, str]] = {}  # name -> (launching op, first node id)
        for nodeid, record in self.records:
            for kernel in record.unplaced:
                seen.setdefault(kernel.name, (kernel.op, nodeid))
        if not seen:
            return []
        from ..model.unknowns import unplaced_summary

        return [unplaced_summary(seen)]

    def _device_lines(self) -> list[str]:
        """The device lines of the workers whose tests used the plugin (the controller never
        sees the tests, nor imports torch)."""
        workers: dict[str, list[str]] = {}  # device line -> the workers that sent it
        for _, record in self.records:
            if record.device:
                workers.setdefault(record.device, []).append(record.worker)
        return [f"{line} ({', '.join(sorted(names))})" for line, names in workers.items()]

    def _baseline_sections(self, exitstatus: int) -> list[list[str]]:
        session = self.baseline_session()
        if session is None:
            return []
        narrowed = self.narrowed()
        blocked = (
            "the run was narrowed to node ids or --lf: run without them to prune"
            if narrowed
            else f"the run did not pass (exit status {exitstatus})"
            if exitstatus != pytest.ExitCode.OK
            else ""
        )
        prune = bool(self.config.getoption("kernelprof_prune"))
        from ..reports.summary import relative_paths

        root = self.config.rootpath
        return session.summary(
            root, narrowed=narrowed, prune=prune, blocked=blocked, shown=lambda path: relative_paths(path, root)
        )
