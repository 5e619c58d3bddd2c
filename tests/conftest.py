from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tests import fake_gpu, warm
from tests.helpers import DATA

# Property tests run 100 examples each (hypothesis's default; 300 for the trace fuzzers took
# 4.5 s of CPU a run); `pytest --hypothesis-profile=thorough` runs 1000.
settings.register_profile("suite", max_examples=100)
settings.register_profile("thorough", max_examples=1000)
settings.load_profile("suite")

NO_CUDA_CONFTEST = """
import torch

_real = torch.cuda.is_available

def pytest_configure(config):
    torch.cuda.is_available = lambda: False

def pytest_unconfigure(config):
    torch.cuda.is_available = _real
"""


@pytest.fixture(autouse=True)
def _outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's pytester sessions write no job summary or annotations into a real GitHub
    Actions job that runs the suite, and see pytest's local output wherever the suite runs: on
    CI ($CI or $BUILD_NUMBER set) pytest prints each failure's whole message in its short summary
    and cuts no assertion explanation, which changes what inner runs print. Tests that are about
    CI set these where they need them (tests/plugin/test_reports.py, test_truncation.py)."""
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "CI", "BUILD_NUMBER"):
        monkeypatch.delenv(name, raising=False)


# Plugins an inner pytest run does without. Each pytester run is a fresh process that loads
# every installed plugin: hypothesis's alone took 0.9 s of a 3.1 s run on the 2-core VM, and
# no inner run tests these. A test that needs one names it again (``-p benchmark`` unblocks it).
INNER_RUN_OPTIONS = "-p no:hypothesispytest -p no:benchmark -p no:cov"


@pytest.fixture(scope="session")
def warm_launcher() -> Iterator[str | None]:
    """The launcher of this process's warm server (tests/warm.py), started at the first pytester
    test; None where warm runs are off (``KERNELPROF_COLD_RUNS=1``) or not possible."""
    if not warm.available():
        yield None
        return
    server = warm.start()
    yield str(server.launcher)
    server.stop()


@pytest.fixture
def warm_subprocesses(warm_launcher: str | None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The Python processes this test starts (``sys.executable``, multiprocessing's spawn) start
    from the warm server: torch imported already."""
    if warm_launcher is None:
        yield
        return
    monkeypatch.setattr(sys, "executable", warm_launcher)
    multiprocessing.set_executable(warm_launcher)
    yield
    multiprocessing.set_executable(warm.PYTHON)


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, warm_subprocesses: None) -> pytest.Pytester:
    """pytest's own pytester (it clears ``PYTEST_ADDOPTS``), with the plugins above left out, its
    runs started by the warm launcher (torch imported already; tests/warm.py)."""
    monkeypatch.setenv("PYTEST_ADDOPTS", INNER_RUN_OPTIONS)
    return pytester


@pytest.fixture
def fresh_pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A pytester whose runs are fresh interpreters, for tests of what a run imports (a warm
    run starts with torch imported)."""
    monkeypatch.setattr(sys, "executable", warm.PYTHON)
    return pytester


@pytest.fixture
def cpu_pytester(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester project where CUDA reads as unavailable, whatever this machine has."""
    pytester.makeconftest(NO_CUDA_CONFTEST)
    return pytester


@pytest.fixture
def trace() -> Any:
    """``trace("linear_eager")`` -> path of the trace recorded on an H200 (tools/record_traces.py)."""

    def path(name: str) -> Path:
        found = DATA / f"h200_{name}.json.gz"
        assert found.exists(), f"no recorded trace {found}"
        return found

    return path


@pytest.fixture
def fake_gpu_sessions(monkeypatch: pytest.MonkeyPatch) -> type[fake_gpu.Counts]:
    """Capture's sessions in this test play recorded GPU sessions (tests/fake_gpu.py): the n-th
    plays ``fake_gpu.RECORDED[n - 1]``, and loses its GPU events to a later one."""
    from pytest_kernelprof.capture import profiler

    monkeypatch.setattr(fake_gpu.Counts, "started", 0)
    monkeypatch.setattr(fake_gpu.Counts, "exports", 0)
    monkeypatch.setattr(profiler, "_new_session", fake_gpu.fake_sessions(profiler._new_session))
    return fake_gpu.Counts
