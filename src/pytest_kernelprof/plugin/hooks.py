"""pytest hooks: options, the gpu marker, the header, skips and failure reports.

Each hook hands off: options and settings to settings.py, GPU per xdist worker to worker_gpus.py,
what a test report gets to report_sections.py, the run's books (which tests ran, what their
reports carried, what the run's end says of them) to books.py, the CI outputs to ci.py.

pytest imports this module in every session of an environment where the plugin is
installed, so it imports only what every session needs; the profile model, the
baselines and torch are imported inside the hooks that meet a test that uses them, so
that a session that does not costs next to nothing over ``-p no:kernelprof``."""

from __future__ import annotations

import os
import sys
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import pytest

from ..errors import GpuSpecError, MissingTorchError
from .assertions import ASSERTION_SECTIONS_KEY, COMPARING_KEY, EXPLAINING_KEY, TABLING_KEY, DecodeStrictness
from .books import COMPARED_KEY, DEVICE_KEY, EXPLAINED_KEY, PHASES_KEY, Books, PhaseBooks
from .fixtures import FIXTURES
from .gpus import assignment_line, cuda_missing_cause, gpus_needed, visible_gpu_count
from .settings import SETTINGS_KEY, add_options, read_settings, reports_asked, setting_name
from .worker_gpus import (
    CHOSEN_GPUS,
    GPU_LOCK,
    GPU_LOCK_KEY,
    GPU_MARKER,
    GPUS_KEY,
    RUN_WITHOUT_WORKERS,
    WORKER_GPU,
    configure_gpus,
    hand_out_gpu,
)

ALLOW_MARKER = "kernelprof_allow"


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    configure_gpus(config)
    config.addinivalue_line(
        "markers",
        f"{GPU_MARKER}: the test needs a CUDA GPU ({GPU_MARKER}(count=N): N of them); it skips where fewer are "
        "visible, or errors in setup under --kernelprof-require-gpu",
    )
    config.addinivalue_line(
        "markers",
        f"{ALLOW_MARKER}(name, ...): exempt the test from these kernelprof_forbid rules of the ini file",
    )
    settings = config.stash[SETTINGS_KEY] = read_settings(config)
    config.pluginmanager.register(DecodeStrictness(settings.strict_decode), "kernelprof-strict-decode")
    books = Books(config)
    config.pluginmanager.register(books, "kernelprof-books")
    if reports_asked(config):
        from .ci import ReportHooks  # only here: a session that asks for no report does not import it

        books.outputs = ReportHooks(config, books)
        config.pluginmanager.register(books.outputs, "kernelprof-reports")


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """The plugin's own hooks, for conftest files and other plugins (hookspec.py)."""
    from . import hookspec

    pluginmanager.add_hookspecs(hookspec)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller: hand each worker its GPU, the chosen ones and the lock through its workerinput."""
    hand_out_gpu(node)


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [*_trace_dir_line(config), *_gpu_lines(config)]


def _trace_dir_line(config: pytest.Config) -> list[str]:
    """Once, before any test: a --kernelprof-trace-dir no trace can be written to (the report
    of a failing test says so again; a passing test's, under --kernelprof-save all, is not shown)."""
    settings = config.stash.get(SETTINGS_KEY, None)
    if settings is None or settings.trace_dir is None or settings.save == "none":
        return []
    problem = unwritable_folder(settings.trace_dir)
    if problem is None:
        return []
    return [f"kernelprof: no trace will be written to --kernelprof-trace-dir {settings.trace_dir}: {problem}"]


def unwritable_folder(path: Path) -> str | None:
    """Why no file can be made under the folder ``path`` (made where missing), or None."""
    existing = path
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"this user cannot write to {existing}"
    return None


def _gpu_lines(config: pytest.Config) -> list[str]:
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
    refusal = _torch_refusal()
    if refusal is not None:
        return f"kernelprof: {refusal}"  # an xdist worker's, whose tests fail with it at setup
    from .report_sections import device_line as line

    try:
        return line(config.stash[SETTINGS_KEY].require_gpu)
    except MissingTorchError:
        # A trace-only install (docs/versions.md): the session runs, and says here what fails.
        return (
            "kernelprof: torch cannot be imported: saved traces load (load_trace); "
            'tests that profile or are marked gpu fail (-m "not gpu" leaves the gpu ones out)'
        )


def _torch_refusal() -> str | None:
    """The one line that refuses this environment's torch, where it is older than the plugin supports."""
    from ..capture.profiler import torch_version, unsupported_torch

    return unsupported_torch(torch_version())


@pytest.hookimpl(tryfirst=True)  # before the terminal's line of GPU facts, which imports torch
def pytest_collection_finish(session: pytest.Session) -> None:
    """Stop at start, in one line, where a collected test uses the plugin and torch is too old
    (a session that does not use it runs). An xdist worker cannot stop its session so: its
    tests that use the plugin fail at setup with the same line instead."""
    config = session.config
    if hasattr(config, "workerinput") or not any(_uses_kernelprof(item) for item in session.items):
        return
    refusal = _torch_refusal()
    if refusal is not None:
        raise pytest.UsageError(refusal)


def pytest_report_collectionfinish(config: pytest.Config, items: Sequence[pytest.Item]) -> list[str]:
    """The GPU facts, below "collected N items", where a collected test uses the plugin (the
    header comes before collection, when that is not known yet). xdist workers send theirs
    in a report instead (books.py)."""
    if hasattr(config, "workerinput") or not any(_uses_kernelprof(item) for item in items):
        return []
    return [device_line(config)]


DEVICE_SENT = pytest.StashKey[bool]()


def _keep_trace_log_private() -> None:
    """pytest attaches its log capture anew for each phase of a test, in hook wrappers
    outside these hooks; the log it must not capture exists only once torch is imported."""
    if "torch._logging._internal" in sys.modules:
        from ..capture.compile_watch import keep_trace_log_private

        keep_trace_log_private()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _keep_trace_log_private()
    if hasattr(item.config, "workerinput") and _uses_kernelprof(item):
        refusal = _torch_refusal()
        if refusal is not None:
            pytest.fail(refusal, pytrace=False)
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
    try:
        found = len(lent) if needed > 1 and lent else visible_gpu_count()
    except MissingTorchError as exc:
        raise pytest.fail.Exception(f"@pytest.mark.{GPU_MARKER}: {exc}", pytrace=False) from None
    if found >= needed:
        return
    require = item.config.stash[SETTINGS_KEY].require_gpu
    if needed == 1:
        if require:
            _no_cuda(item, "gpu test without CUDA")
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
        if found == 0 and not lent and worker_gpu is None:
            _no_cuda(item, reason)
        pytest.fail(f"{reason} (--kernelprof-require-gpu)", pytrace=False)
    _skip(reason)


def _no_cuda(item: pytest.Item, failure: str) -> NoReturn:
    """Fail a gpu test that --kernelprof-require-gpu keeps from skipping, saying why this machine
    has no CUDA GPU and what to do: a CPU build of torch and a missing driver are fixed apart."""
    why, fix = cuda_missing_cause()
    given = setting_name(item.config, "kernelprof_require_gpu")
    drop = "drop --kernelprof-require-gpu" if given.startswith("--") else "set kernelprof_require_gpu = false"
    pytest.fail(
        f"{failure}: {why} (--kernelprof-require-gpu)\nto fix: {fix}, or {drop} to let gpu tests skip",
        pytrace=False,
    )


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
    odd = [repr(name) for name in names if not isinstance(name, str)]
    unknown = [repr(name) for name in names if isinstance(name, str) and name not in known]
    if names and not unknown and not odd:
        return
    listed = ", ".join(rule.name for rule in rules) or "none (kernelprof_forbid is empty)"
    if odd:  # kernelprof_allow(["a", "b"]): the names go one by one
        what = f'takes rule names one by one, as kernelprof_allow("a", "b"), got {", ".join(odd)}'
    elif unknown:
        what = f"names no kernelprof_forbid rule: {', '.join(unknown)}"
    else:
        what = "names no rule"
    pytest.fail(f"@pytest.mark.{ALLOW_MARKER} {what}; the rules are: {listed}", pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if call.excinfo is not None and call.excinfo.errisinstance(MissingTorchError):
        report.longrepr = _at_users_line(item, call.excinfo)
    workerinput = getattr(item.config, "workerinput", None)
    if (
        report.when == "setup"
        and workerinput is not None
        and not item.config.stash.get(DEVICE_SENT, False)
        and _uses_kernelprof(item)
    ):
        item.config.stash[DEVICE_SENT] = True
        item.stash[DEVICE_KEY] = (device_line(item.config), str(workerinput.get("workerid", "")))
    pending = item.config.stash.get(ASSERTION_SECTIONS_KEY, [])
    if pending:
        if report.failed:
            # Part of the failure itself where it can be (its longrepr's sections, as pytest's
            # own "Captured" ones are): the terminal shows it there all the same, and JUnit XML,
            # which writes the failure and not the report's sections, keeps it too.
            addsection = getattr(report.longrepr, "addsection", None)
            for text in pending:
                if addsection is not None:
                    addsection("kernelprof assertion", text)
                else:
                    report.sections.append(("kernelprof assertion", text))
        pending.clear()
    compared = item.config.stash.get(COMPARING_KEY, [])
    explained = item.config.stash.get(EXPLAINING_KEY, [])
    tabled = item.config.stash.get(TABLING_KEY, [])
    if report.when == "call":
        item.stash[COMPARED_KEY], item.stash[EXPLAINED_KEY] = list(compared), list(explained)
    phases = item.stash.get(PHASES_KEY, None)
    if phases is not None:
        phases.failed = phases.failed or report.failed
    if phases is not None and phases.captures(item):
        _add_sections(item, report, phases, call.excinfo, tabled, explained)
    compared.clear()
    explained.clear()
    tabled.clear()
    return report


def _at_users_line(item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:
    """A test that needs torch where it cannot be imported (a trace-only install) fails at its own
    line with the one line that says so, not below the plugin's frames that found torch missing."""
    from ..paths import is_own_file

    entries = excinfo.traceback
    own = next((i for i, entry in enumerate(entries) if is_own_file(entry.path)), len(entries))
    users = entries[:own].filter(lambda entry: Path(entry.path).is_relative_to(item.config.rootpath))
    if not users:  # called from outside the rootdir: pytest's own filter
        return item.repr_failure(excinfo)
    short = item.config.getoption("tbstyle", "auto") == "short"
    return excinfo.getrepr(funcargs=True, style="short" if short else "long", tbfilter=lambda _: users)


def _add_sections(
    item: pytest.Item,
    report: pytest.TestReport,
    phases: PhaseBooks,
    excinfo: pytest.ExceptionInfo[BaseException] | None,
    tabled: list[tuple[tuple[str, ...], object]],
    explained: list[tuple[tuple[str, ...], tuple[str, ...]]],
) -> None:
    """The sections of the report of the phase that profiled or failed: a fixture's setup or
    teardown fails with the test's profiles so far, and saves their traces, as a call does."""
    from .ci_facts import ops_named, records_named
    from .report_sections import advice_shown, report_sections, tables_shown

    settings = item.config.stash[SETTINGS_KEY]
    captures = phases.captures(item)
    error = excinfo.value if excinfo is not None else None
    records, ops = None, []
    if report.failed and excinfo is not None:
        profiles = [capture.profile for capture in captures]
        records = records_named(item, excinfo, report, profiles)
        ops = ops_named(item, excinfo, report, profiles)
    save = settings.trace_dir is not None and (settings.save == "all" or (settings.save == "failed" and phases.failed))
    save_from = phases.saved if save and phases.saved < len(captures) else None
    if save_from is not None:
        phases.saved = len(captures)
    report.sections.extend(
        report_sections(
            item.nodeid,
            captures,
            failed=report.failed,
            trace_dir=settings.trace_dir,
            save_from=save_from,
            shown=tables_shown(error, tabled) if report.failed else (),
            advised=advice_shown(error, explained) if report.failed else frozenset(),
            rootpath=item.config.rootpath,
            here=item.config.invocation_params.dir,
            records=records,
            ops=ops,
        )
    )


@pytest.hookimpl(optionalhook=True)
def pytest_benchmark_update_machine_info(config: pytest.Config, machine_info: dict[str, Any]) -> None:
    """GPU, driver, CUDA, cuBLAS, torch and Triton versions in pytest-benchmark's machine info."""
    from .benchmark import machine_info as gpu_machine_info

    try:
        machine_info["kernelprof"] = gpu_machine_info()
    except MissingTorchError:  # a trace-only install benchmarks nothing that needs the versions
        machine_info["kernelprof"] = {"torch": None}
