"""pytest hooks: options, the gpu marker, the header, skips and failure reports.

Each hook hands off: settings to settings.py, GPU per xdist worker to gpus.py, what a test
report gets to session.py, baseline bookkeeping to baseline.py.

pytest imports this module in every session of an environment where the plugin is
installed, so it imports only what every session needs; the profile model, the
baselines and torch are imported inside the hooks that meet a test that uses them, so
that a session that does not costs next to nothing over ``-p no:kernelprof``."""

from __future__ import annotations

import os
import sys
from collections.abc import Generator, Sequence
from typing import Any, NoReturn

import pytest

from .defaults import DEFAULT_CALLS, DEFAULT_MEMORY_TOLERANCE, DEFAULT_WARMUP, NAME_MODES
from .errors import GpuSpecError
from .fixtures import BASELINE_NOTES_KEY, FIXTURES, PROFILERS_KEY
from .fixtures import kernel_baseline as kernel_baseline  # re-exported so pytest finds the fixtures
from .fixtures import kernel_benchmark as kernel_benchmark
from .fixtures import kernelprof as kernelprof
from .gpus import assignment_line, choose_gpus, gpu_for_worker, gpus_needed, take_worker_gpu, visible_gpu_count
from .settings import (
    SAVE_CHOICES,
    SETTINGS_KEY,
    Settings,
    assertion_budget,
    ini_value,
    parse_count,
    parse_forbid,
    parse_kernels,
    parse_names,
    parse_percent,
    parse_save,
    run_was_narrowed,
    setting_name,
)

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
        from .baseline import BaselineSession

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
    group = parser.getgroup("kernelprof", "GPU kernel assertions (pytest-kernelprof)")
    group.addoption(
        "--kernelprof-require-gpu",
        action="store_true",
        dest="kernelprof_require_gpu",
        default=None,
        help="Fail gpu-marked tests instead of skipping them where CUDA is missing; default: off",
    )
    group.addoption(
        "--kernelprof-warmup",
        action="store",
        dest="kernelprof_warmup",
        default=None,
        metavar="N",
        help=f"Unprofiled warm-up calls before profiling (compile, autotune); default: {DEFAULT_WARMUP}",
    )
    group.addoption(
        "--kernelprof-calls",
        action="store",
        dest="kernelprof_calls",
        default=None,
        metavar="N",
        help=f"Profiled calls per kernelprof(fn) call, each compared with the first; default: {DEFAULT_CALLS}",
    )
    group.addoption(
        "--kernelprof-modules",
        action="store_true",
        dest="kernelprof_modules",
        default=None,
        help="Record which nn.Module launched each kernel (a range per module call) when the profiled "
        "callable is an nn.Module; default: off",
    )
    group.addoption(
        "--kernelprof-trace-dir",
        action="store",
        dest="kernelprof_trace_dir",
        default=None,
        metavar="DIR",
        help="Write a gzipped Chrome trace per profiled test into DIR (see --kernelprof-save); default: none",
    )
    group.addoption(
        "--kernelprof-save",
        action="store",
        dest="kernelprof_save",
        default=None,
        choices=SAVE_CHOICES,
        help="Which tests' traces to write: failed, all or none; default: failed once --kernelprof-trace-dir is set",
    )
    group.addoption(
        "--kernelprof-update",
        action="store_true",
        dest="kernelprof_update",
        default=False,
        help="Write or rewrite the kernel baselines of the tests that run, instead of comparing; default: off",
    )
    group.addoption(
        "--kernelprof-prune",
        action="store_true",
        dest="kernelprof_prune",
        default=False,
        help="Delete the unused baseline entries and files the run reports, when it ran the whole suite and "
        "passed; default: off",
    )
    group.addoption(
        "--kernelprof-baseline-names",
        action="store",
        dest="kernelprof_baseline_names",
        default=None,
        choices=NAME_MODES,
        help="Kernel names compared with baselines: stable (Inductor and user kernels), exact or loose; "
        "default: stable",
    )
    group.addoption(
        "--kernelprof-gpus",
        action="store",
        dest="kernelprof_gpus",
        default=None,
        metavar="SPEC",
        help="Under pytest -n, one GPU per worker: auto, a count N, or indices such as 0,2,5 into the "
        "visible GPUs; default: off",
    )
    group.addoption(
        "--kernelprof-stacks",
        action="store_true",
        dest="kernelprof_stacks",
        default=None,
        help="Record Python stacks in every profile, so that syncs and kernels name the user's code "
        "(costs host time); default: off",
    )
    group.addoption(
        "--kernelprof-memory-tolerance",
        action="store",
        dest="kernelprof_memory_tolerance",
        default=None,
        metavar="PERCENT",
        help="How far a baseline's peak_bytes may grow before it fails (and shrink before it counts as "
        # argparse %-formats help text: a literal percent sign must be doubled.
        f"improved); default: {DEFAULT_MEMORY_TOLERANCE:.0%}".replace("%", "%%"),
    )
    group.addoption(
        "--kernelprof-summary",
        action="store",
        dest="kernelprof_summary",
        default=None,
        metavar="PATH",
        help="Append a Markdown summary (failed profiles, baselines, undecoded kernels) to PATH at the end, "
        "or none; default: $GITHUB_STEP_SUMMARY where it is set",
    )
    group.addoption(
        "--kernelprof-annotations",
        action="store",
        dest="kernelprof_annotations",
        default="auto",
        choices=("auto", "on", "off"),
        help="Write GitHub '::error file=,line=::' annotations for rule breaks, baseline regressions and "
        "host syncs; default: auto (on where GITHUB_ACTIONS=true)",
    )
    group.addoption(
        "--kernelprof-strict-decode",
        action="store_true",
        dest="kernelprof_strict_decode",
        default=None,
        help="Fail a test whose kind or dtype question (count(kind=...), a kernelprof_forbid rule, a baseline) "
        "kernels of unknown kind or dtype could answer otherwise, instead of warning; default: off",
    )
    parser.addini("kernelprof_baseline_names", "Same as --kernelprof-baseline-names", default="stable")
    parser.addini("kernelprof_strict_decode", "Same as --kernelprof-strict-decode", type="bool", default=False)
    parser.addini(
        "kernelprof_kernels",
        "What kernels are, for names the decoder cannot place, one a line: 'GLOB: field=value ...' with kind, "
        "family, dtype, layout, part_of (docs: How kernels are decoded); default: none",
        type="linelist",
        default=[],
    )
    parser.addini("kernelprof_stacks", "Same as --kernelprof-stacks", type="bool", default=False)
    parser.addini(
        "kernelprof_memory_tolerance",
        "Same as --kernelprof-memory-tolerance",
        default=f"{DEFAULT_MEMORY_TOLERANCE:.0%}",
    )
    parser.addini("kernelprof_require_gpu", "Same as --kernelprof-require-gpu", type="bool", default=False)
    parser.addini("kernelprof_warmup", "Same as --kernelprof-warmup", default=str(DEFAULT_WARMUP))
    parser.addini("kernelprof_calls", "Same as --kernelprof-calls", default=str(DEFAULT_CALLS))
    parser.addini(
        "kernelprof_forbid",
        "Rules every profile of the suite must satisfy, one a line: 'NAME: CONDITION ... | REASON' "
        "(README: Suite-wide rules); default: none",
        type="linelist",
        default=[],
    )
    parser.addini("kernelprof_modules", "Same as --kernelprof-modules", type="bool", default=False)


def _setting(config: pytest.Config, name: str) -> Any:
    value = config.getoption(name)
    return ini_value(config, name) if value is None else value


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
    trace_dir = config.getoption("kernelprof_trace_dir")
    trace_path = None if trace_dir is None else config.invocation_params.dir / trace_dir
    decoder = parse_kernels(config.getini("kernelprof_kernels"))
    strict_decode = bool(_setting(config, "kernelprof_strict_decode"))
    if strict_decode:
        # Strict is the warning made an error, through pytest's own filters: the test fails at
        # the line that asked, with the warning's message.
        config.addinivalue_line("filterwarnings", f"error::{UNDECODED_WARNING}")
    config.stash[SETTINGS_KEY] = Settings(
        warmup=parse_count(setting_name(config, "kernelprof_warmup"), _setting(config, "kernelprof_warmup"), 0),
        calls=parse_count(setting_name(config, "kernelprof_calls"), _setting(config, "kernelprof_calls"), 1),
        require_gpu=bool(_setting(config, "kernelprof_require_gpu")),
        modules=bool(_setting(config, "kernelprof_modules")),
        trace_dir=trace_path,
        save=parse_save(config.getoption("kernelprof_save"), trace_path),
        update=bool(config.getoption("kernelprof_update")),
        names=parse_names(
            _setting(config, "kernelprof_baseline_names"), setting_name(config, "kernelprof_baseline_names")
        ),
        forbid=parse_forbid(config.getini("kernelprof_forbid"), decoder),
        decoder=decoder,
        strict_decode=strict_decode,
        stacks=bool(_setting(config, "kernelprof_stacks")),
        memory_tolerance=parse_percent(
            setting_name(config, "kernelprof_memory_tolerance"), _setting(config, "kernelprof_memory_tolerance")
        ),
    )
    config.pluginmanager.register(BaselineHooks(config), "kernelprof-baselines")
    config.pluginmanager.register(DeviceLines(config), "kernelprof-device-lines")
    config.pluginmanager.register(UnplacedKernels(config), "kernelprof-unplaced-kernels")
    if _reports_asked(config):
        from .ci import ReportHooks  # only here: a session that asks for no report does not import it

        config.pluginmanager.register(ReportHooks(config), "kernelprof-reports")


def _reports_asked(config: pytest.Config) -> bool:
    """Whether a CI output is asked for: a job summary, annotations, JUnit XML or timeline pages."""
    summary = config.getoption("kernelprof_summary")
    annotations = config.getoption("kernelprof_annotations")
    return bool(
        (summary != "none" and (summary or os.environ.get("GITHUB_STEP_SUMMARY")))
        or annotations == "on"
        or (annotations == "auto" and os.environ.get("GITHUB_ACTIONS") == "true")
        or getattr(config.option, "xmlpath", None)
        or config.getoption("kernelprof_trace_dir") is not None
    )


GPUS_KEY = pytest.StashKey[list[str]]()
WORKER_GPU = "kernelprof_gpu"
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
        return
    spec_text = config.getoption("kernelprof_gpus")
    if spec_text is None or not config.pluginmanager.hasplugin("xdist") or not config.getoption("numprocesses", None):
        return
    try:
        config.stash[GPUS_KEY] = choose_gpus(spec_text)
    except GpuSpecError as exc:
        raise pytest.UsageError(f"--kernelprof-gpus {spec_text}: {exc}") from None


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller: hand each worker its GPU through its workerinput."""
    chosen = node.config.stash.get(GPUS_KEY, None)
    if chosen:
        node.workerinput[WORKER_GPU] = gpu_for_worker(chosen, node.gateway.id)


def pytest_report_header(config: pytest.Config) -> list[str]:
    chosen = config.stash.get(GPUS_KEY, None)
    if not chosen:
        return []
    pairs = assignment_line(chosen, int(config.getoption("numprocesses")))
    # The controller never sees the tests (its workers collect them), so it says this for
    # whichever there are, here, before collection.
    outcome = "fail" if config.stash[SETTINGS_KEY].require_gpu else "skip"
    return [
        f"kernelprof GPUs per worker (CUDA_VISIBLE_DEVICES): {pairs}",
        f"kernelprof: each worker sees one GPU, so tests marked gpu(count=N) with N > 1 {outcome}: "
        f"run them {RUN_WITHOUT_WORKERS}",
    ]


def _uses_kernelprof(item: pytest.Item) -> bool:
    """Whether a test needs the GPU facts: it is gpu-marked or requests one of the fixtures."""
    return item.get_closest_marker(GPU_MARKER) is not None or not FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))


def device_line(config: pytest.Config) -> str:
    """``kernelprof: NVIDIA H200 (sm90), CUDA 12.8, torch ..., triton ...``: imports torch and
    asks CUDA, so it is made only for sessions that have tests that use the plugin."""
    from .capture import device_facts, package_versions

    versions = ", ".join(
        f"{dist} {version or 'not installed'}" for dist, version in package_versions("torch", "triton").items()
    )
    device, arch = device_facts()
    if device is None:
        mode = "fail (--kernelprof-require-gpu)" if config.stash[SETTINGS_KEY].require_gpu else "skip"
        return f"kernelprof: no CUDA GPU, gpu tests {mode}; {versions}"
    import torch

    return f"kernelprof: {device} ({arch}), CUDA {torch.version.cuda}, {versions}"


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
UNPLACED_SHOWN = 20


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
        from .names import KernelName
        from .report import display_name
        from .unknowns import how_to_teach

        names = sorted(self.seen)
        terminalreporter.write_sep("-", f"kernelprof: {len(names)} kernel name(s) no evidence could place")
        for name in names[:UNPLACED_SHOWN]:
            op, nodeid = self.seen[name]
            launched = f"launched by {op}; " if op else ""
            terminalreporter.write_line(f"{display_name(name, 100)}  ({launched}{nodeid})")
        if len(names) > UNPLACED_SHOWN:
            terminalreporter.write_line(f"... and {len(names) - UNPLACED_SHOWN} more")
        terminalreporter.write_line("Kind and dtype questions warn about them. Teach the decoder what they are (ini):")
        taught = [KernelName(name, "other", "unknown") for name in names[:UNPLACED_SHOWN]]
        for line in how_to_teach(taught):
            terminalreporter.write_line(f"  {line}")


def _unplaced(captures: Sequence[Any]) -> list[str]:
    """``name|op`` of each distinct kernel of the profiles that no evidence placed."""
    found: dict[str, str] = {}
    for capture in captures:
        prof = capture.profile
        if not prof.has_device_activity:
            continue
        for kernel in prof.kernels:
            if kernel.unplaced:
                found.setdefault(kernel.name, kernel.op or "")
    return [f"{name}|{op}" for name, op in found.items()]


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
        from .compile_watch import keep_trace_log_private

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
    found = visible_gpu_count()
    if found >= needed:
        return
    require = item.config.stash[SETTINGS_KEY].require_gpu
    if needed == 1:
        if require:
            pytest.fail("gpu test on a machine where CUDA is not available (--kernelprof-require-gpu)", pytrace=False)
        _skip("needs a CUDA GPU: torch.cuda.is_available() is False")
    worker_gpu = getattr(item.config, "workerinput", {}).get(WORKER_GPU)
    if worker_gpu is None:
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
            from .session import report_sections

            settings = item.config.stash[SETTINGS_KEY]
            report.user_properties.extend((UNPLACED_PROPERTY, value) for value in _unplaced(captures))
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
    from .baseline import KernelBaseline
    from .explain import explain

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
    from .bench import machine_info as gpu_machine_info

    machine_info["kernelprof"] = gpu_machine_info()
