"""pytest hooks: options, the gpu marker, the header, skips and failure reports.

Each hook hands off: options and settings to settings.py, GPU per xdist worker to gpus.py,
what a test report gets to report_sections.py, baseline bookkeeping to checks/baseline/.

pytest imports this module in every session of an environment where the plugin is
installed, so it imports only what every session needs; the profile model, the
baselines and torch are imported inside the hooks that meet a test that uses them, so
that a session that does not costs next to nothing over ``-p no:kernelprof``."""

from __future__ import annotations

import sys
from collections.abc import Generator, Sequence
from typing import Any, NoReturn

import pytest

from ..errors import GpuSpecError
from .fixtures import BASELINE_NOTES_KEY, FIXTURES, PROFILERS_KEY
from .gpus import (
    assignment_line,
    can_lend,
    choose_gpus,
    gpu_for_worker,
    gpu_turn,
    gpus_needed,
    new_lock_file,
    remove_lock_file,
    take_worker_gpu,
    visible_gpu_count,
)
from .settings import SETTINGS_KEY, add_options, assertion_budget, read_settings, reports_asked, run_was_narrowed

GPU_MARKER = "gpu"
ALLOW_MARKER = "kernelprof_allow"


class BaselineHooks:
    """The hooks that feed a BaselineSession, registered per config: ``pytest_runtest_logreport``
    is given no config to find the session by. Reports reach it in the xdist controller too.

    Reports are kept as the little the session needs (node ids, outcomes, the plugin's user
    properties); the baseline module is imported at the end only where a test used a
    baseline or a module that ran has a ``__kernelprof__`` folder."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.ran: set[str] = set()
        self.not_passed: set[str] = set()
        self.properties: dict[str, list[tuple[str, object]]] = {}
        self.deselected = False

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.ran.add(report.nodeid)
        if report.failed or report.skipped:
            self.not_passed.add(report.nodeid)
        ours = [(key, value) for key, value in report.user_properties if key.startswith("kernelprof_baseline")]
        if ours:
            self.properties.setdefault(report.nodeid, []).extend(ours)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected = self.deselected or bool(items)

    def _baseline_folders(self) -> bool:
        root = self.config.rootpath
        modules = {root / nodeid.split("::", 1)[0] for nodeid in self.ran}
        return any((module.parent / "__kernelprof__" / module.stem).is_dir() for module in modules)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter, exitstatus: int) -> None:
        if hasattr(self.config, "workerinput"):
            return  # an xdist worker saw part of the run; its controller reports the whole
        if not self.properties and not self._baseline_folders():
            return
        from ..checks.baseline import BaselineSession

        session = BaselineSession()
        for nodeid in self.ran:
            session.add_report(nodeid, self.properties.get(nodeid, ()), passed=nodeid not in self.not_passed)
        narrowed = run_was_narrowed(self.config, self.deselected)
        prune = bool(self.config.getoption("kernelprof_prune"))
        blocked = (
            "the run was narrowed (-k, -m, --lf or node ids): run the whole suite to prune"
            if narrowed
            else f"the run did not pass (exit status {int(exitstatus)})"
            if exitstatus != pytest.ExitCode.OK
            else ""
        )
        for lines in session.summary(self.config.rootpath, narrowed=narrowed, prune=prune, blocked=blocked):
            terminalreporter.write_sep("-", lines[0])
            for line in lines[1:]:
                terminalreporter.write_line(line)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    _configure_gpus(config)
    config.addinivalue_line(
        "markers",
        f"{GPU_MARKER}: the test needs a CUDA GPU ({GPU_MARKER}(count=N): N of them); it skips where fewer are "
        "visible, or fails under --kernelprof-require-gpu",
    )
    config.addinivalue_line(
        "markers",
        f"{ALLOW_MARKER}(name, ...): exempt the test from these kernelprof_forbid rules of the ini file",
    )
    settings = read_settings(config)
    if settings.strict_decode:
        # Strict is the warning made an error, through pytest's own filters: the test fails at
        # the line that asked, with the warning's message.
        config.addinivalue_line("filterwarnings", f"error::{UNDECODED_WARNING}")
    config.stash[SETTINGS_KEY] = settings
    config.pluginmanager.register(BaselineHooks(config), "kernelprof-baselines")
    config.pluginmanager.register(DeviceLines(config), "kernelprof-device-lines")
    config.pluginmanager.register(UnplacedKernels(config), "kernelprof-unplaced-kernels")
    if reports_asked(config):
        from .ci import ReportHooks  # only here: a session that asks for no report does not import it

        config.pluginmanager.register(ReportHooks(config), "kernelprof-reports")


GPUS_KEY = pytest.StashKey[list[str]]()
GPU_LOCK_KEY = pytest.StashKey[str]()
WORKER_GPU = "kernelprof_gpu"
CHOSEN_GPUS = "kernelprof_gpus"  # workerinput: every GPU the controller chose, comma-joined
GPU_LOCK = "kernelprof_gpu_lock"  # workerinput: the lock file of the workers' GPU tests
RUN_WITHOUT_WORKERS = "without -n (-n 0)"


def _configure_gpus(config: pytest.Config) -> None:
    """Controller: choose the GPUs. Worker: take its GPU before anything initialises CUDA."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        gpu = workerinput.get(WORKER_GPU)
        try:
            if gpu is not None:
                take_worker_gpu(gpu)
        except GpuSpecError as exc:
            raise pytest.UsageError(f"--kernelprof-gpus: {exc}") from None
        if gpu is not None and workerinput.get(GPU_LOCK):
            chosen = workerinput[CHOSEN_GPUS].split(",")
            config.pluginmanager.register(GpuLending(workerinput[GPU_LOCK], chosen), "kernelprof-gpu-lending")
        return
    spec_text = config.getoption("kernelprof_gpus")
    if spec_text is None or not config.pluginmanager.hasplugin("xdist") or not config.getoption("numprocesses", None):
        return
    try:
        config.stash[GPUS_KEY] = choose_gpus(spec_text)
    except GpuSpecError as exc:
        raise pytest.UsageError(f"--kernelprof-gpus {spec_text}: {exc}") from None
    if can_lend():
        path = config.stash[GPU_LOCK_KEY] = new_lock_file()
        config.add_cleanup(lambda: remove_lock_file(path))


class GpuLending:
    """In an xdist worker with a GPU of its own: each GPU test runs in its turn (gpus.gpu_turn),
    setup and teardown included, so a module-scoped fixture that starts ranks holds the GPUs too."""

    def __init__(self, lock_path: str, chosen: list[str]) -> None:
        self.lock_path = lock_path
        self.chosen = chosen

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, object, object]:
        try:
            needed = gpus_needed([(mark.args, mark.kwargs) for mark in item.iter_markers(GPU_MARKER)])
        except GpuSpecError:
            needed = 0  # setup reports the bad marker
        with gpu_turn(self.lock_path, self.chosen, needed):
            return (yield)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller: hand each worker its GPU, the chosen ones and the lock through its workerinput."""
    chosen = node.config.stash.get(GPUS_KEY, None)
    if chosen:
        node.workerinput[WORKER_GPU] = gpu_for_worker(chosen, node.gateway.id)
        node.workerinput[CHOSEN_GPUS] = ",".join(chosen)
        node.workerinput[GPU_LOCK] = node.config.stash.get(GPU_LOCK_KEY, "")


def pytest_report_header(config: pytest.Config) -> list[str]:
    chosen = config.stash.get(GPUS_KEY, None)
    if not chosen:
        return []
    pairs = assignment_line(chosen, int(config.getoption("numprocesses")))
    # The controller never sees the tests (its workers collect them), so it says this for
    # whichever there are, here, before collection.
    if config.stash.get(GPU_LOCK_KEY, None):
        many = (
            f"kernelprof: a test marked gpu(count=N), N <= {len(chosen)}, is lent every chosen GPU in turn "
            "(the other workers' GPU tests wait; the processes it starts see them all)"
        )
    else:
        outcome = "fail" if config.stash[SETTINGS_KEY].require_gpu else "skip"
        many = (
            f"kernelprof: each worker sees one GPU, so tests marked gpu(count=N) with N > 1 {outcome}: "
            f"run them {RUN_WITHOUT_WORKERS}"
        )
    return [f"kernelprof GPUs per worker (CUDA_VISIBLE_DEVICES): {pairs}", many]


def _uses_kernelprof(item: pytest.Item) -> bool:
    """Whether a test needs the GPU facts: it is gpu-marked or requests one of the fixtures."""
    return item.get_closest_marker(GPU_MARKER) is not None or not FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))


def device_line(config: pytest.Config) -> str:
    """The GPU facts line (imports torch and asks CUDA: only for sessions whose tests use the plugin)."""
    from .report_sections import device_line as line

    return line(config.stash[SETTINGS_KEY].require_gpu)


def pytest_report_collectionfinish(config: pytest.Config, items: Sequence[pytest.Item]) -> list[str]:
    """The GPU facts, below "collected N items", where a collected test uses the plugin (the
    header comes before collection, when that is not known yet). xdist workers send theirs
    in a report instead (see DeviceLines)."""
    if hasattr(config, "workerinput") or not any(_uses_kernelprof(item) for item in items):
        return []
    return [device_line(config)]


DEVICE_PROPERTY = "kernelprof_device"  # a worker's device line, carried to the xdist controller
DEVICE_SENT = pytest.StashKey[bool]()


# The warning that --kernelprof-strict-decode makes an error (named, not imported: loading the
# plugin imports no more than it must).
UNDECODED_WARNING = "pytest_kernelprof.errors.UndecodedKernelWarning"
# A kernel name no evidence placed, seen by a test: "name|launching op".
UNPLACED_PROPERTY = "kernelprof_unplaced"


class UnplacedKernels:
    """The kernel names no evidence could place, gathered from every test's report (so the
    xdist controller has them too), listed at the end of the run with how to teach them."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.seen: dict[str, tuple[str, str]] = {}  # name -> (launching op, first node id)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for key, value in report.user_properties:
            if key == UNPLACED_PROPERTY:
                name, _, op = str(value).rpartition("|")
                self.seen.setdefault(name, (op, report.nodeid))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if hasattr(self.config, "workerinput") or not self.seen:
            return
        from ..model.unknowns import unplaced_summary

        title, *lines = unplaced_summary(self.seen)
        terminalreporter.write_sep("-", title)
        for line in lines:
            terminalreporter.write_line(line)


class DeviceLines:
    """In the xdist controller: the device lines of the workers whose tests used the plugin,
    told at the end of the run (the controller never sees the tests, nor imports torch)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.workers: dict[str, list[str]] = {}  # device line -> the workers that sent it

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for key, value in report.user_properties:
            if key == DEVICE_PROPERTY:
                line, _, worker = str(value).rpartition("|")
                self.workers.setdefault(line, []).append(worker)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if hasattr(self.config, "workerinput"):
            return
        for line, workers in self.workers.items():
            terminalreporter.write_line(f"{line} ({', '.join(sorted(workers))})")


def _keep_trace_log_private() -> None:
    """pytest attaches its log capture anew for each phase of a test, in hook wrappers
    outside these hooks; the log it must not capture exists only once torch is imported."""
    if "torch._logging._internal" in sys.modules:
        from ..capture.compile_watch import keep_trace_log_private

        keep_trace_log_private()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _keep_trace_log_private()
    _check_allow_marker(item)
    try:
        needed = gpus_needed([(mark.args, mark.kwargs) for mark in item.iter_markers(GPU_MARKER)])
    except GpuSpecError as exc:
        pytest.fail(f"@pytest.mark.{GPU_MARKER}: {exc}", pytrace=False)
    if not needed:
        return
    workerinput = getattr(item.config, "workerinput", {})
    worker_gpu = workerinput.get(WORKER_GPU)
    lent = workerinput.get(CHOSEN_GPUS, "").split(",") if workerinput.get(GPU_LOCK) else []
    found = len(lent) if needed > 1 and lent else visible_gpu_count()
    if found >= needed:
        return
    require = item.config.stash[SETTINGS_KEY].require_gpu
    if needed == 1:
        if require:
            pytest.fail("gpu test on a machine where CUDA is not available (--kernelprof-require-gpu)", pytrace=False)
        _skip("needs a CUDA GPU: torch.cuda.is_available() is False")
    if lent:
        reason = f"needs {needed} CUDA GPUs, and --kernelprof-gpus chose {found} ({','.join(lent)})"
    elif worker_gpu is None:
        reason = f"needs {needed} CUDA GPUs, found {found}"
    else:
        reason = (
            f"needs {needed} CUDA GPUs, and --kernelprof-gpus gives each xdist worker one (GPU {worker_gpu} here): "
            f"run it {RUN_WITHOUT_WORKERS}"
        )
    if require:
        pytest.fail(f"{reason} (--kernelprof-require-gpu)", pytrace=False)
    _skip(reason)


def _skip(reason: str) -> NoReturn:
    """Skip at the test's location, as pytest's own skip marks do: ``-rs`` names the test
    (where the skip was raised would be this hook, the same line for every GPU test)."""
    skip = pytest.skip.Exception(reason)
    skip._use_item_location = True
    raise skip


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    _keep_trace_log_private()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    _keep_trace_log_private()


def _check_allow_marker(item: pytest.Item) -> None:
    """A ``kernelprof_allow`` marker must name rules that exist: a typo would exempt nothing."""
    marks = list(item.iter_markers(ALLOW_MARKER))
    if not marks:
        return
    names = [name for mark in marks for name in mark.args]
    rules = item.config.stash[SETTINGS_KEY].forbid
    known = {rule.name for rule in rules}
    unknown = [repr(name) for name in names if name not in known]
    if names and not unknown:
        return
    listed = ", ".join(rule.name for rule in rules) or "none (kernelprof_forbid is empty)"
    what = f"names no kernelprof_forbid rule: {', '.join(unknown)}" if unknown else "names no rule"
    pytest.fail(f"@pytest.mark.{ALLOW_MARKER} {what}; the rules are: {listed}", pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    workerinput = getattr(item.config, "workerinput", None)
    if (
        report.when == "setup"
        and workerinput is not None
        and not item.config.stash.get(DEVICE_SENT, False)
        and _uses_kernelprof(item)
    ):
        item.config.stash[DEVICE_SENT] = True
        worker = workerinput.get("workerid", "")
        report.user_properties.append((DEVICE_PROPERTY, f"{device_line(item.config)}|{worker}"))
    pending = item.config.stash.get(ASSERTION_SECTIONS_KEY, [])
    if pending:
        if report.failed:
            report.sections.extend(("kernelprof assertion", text) for text in pending)
        pending.clear()
    if report.when == "call":
        captures = [c for p in item.stash.get(PROFILERS_KEY, []) for c in p.captures]
        if captures:
            from .report_sections import report_sections, unplaced_kernels

            settings = item.config.stash[SETTINGS_KEY]
            report.user_properties.extend((UNPLACED_PROPERTY, value) for value in unplaced_kernels(captures))
            report.sections.extend(
                report_sections(
                    item.nodeid, captures, failed=report.failed, trace_dir=settings.trace_dir, save=settings.save
                )
            )
        report.user_properties.extend(note for note in item.stash.get(BASELINE_NOTES_KEY, []))
    if report.when == "teardown" and PROFILERS_KEY in item.stash:
        # The torch profilers hold every event of their sessions: let them go with the test.
        del item.stash[PROFILERS_KEY]
    return report


# The explanations too long for pytest to show whole, for the report of the test that failed.
ASSERTION_SECTIONS_KEY = pytest.StashKey[list[str]]()


def pytest_assertrepr_compare(config: pytest.Config, op: str, left: object, right: object) -> list[str] | None:
    if "pytest_kernelprof.model" not in sys.modules:
        return None  # no profile value can exist: leave the comparison to pytest, without importing one
    from ..checks.baseline import KernelBaseline
    from ..model.explain import explain

    explanation = None
    for side in (left, right):
        if isinstance(side, KernelBaseline) and op == "==":
            explanation = side.explanation()
    if explanation is None:
        explanation = explain(op, left, right)
    if explanation is None:
        return None
    shown, section = explanation.shown(*assertion_budget(config))
    if section:
        config.stash.setdefault(ASSERTION_SECTIONS_KEY, []).append("\n".join(section))
    return shown


@pytest.hookimpl(optionalhook=True)
def pytest_benchmark_update_machine_info(config: pytest.Config, machine_info: dict[str, Any]) -> None:
    """GPU, driver, CUDA, cuBLAS, torch and Triton versions in pytest-benchmark's machine info."""
    from .benchmark import machine_info as gpu_machine_info

    machine_info["kernelprof"] = gpu_machine_info()
