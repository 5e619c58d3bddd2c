from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests import fake_gpu
from tests.helpers import DATA

NO_CUDA_CONFTEST = """
import torch

_real = torch.cuda.is_available

def pytest_configure(config):
    torch.cuda.is_available = lambda: False

def pytest_unconfigure(config):
    torch.cuda.is_available = _real
"""


@pytest.fixture(autouse=True)
def _outside_github_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's pytester sessions write no job summary or annotations into a real GitHub
    Actions job that runs the suite (tests/plugin/test_reports.py sets these where it needs them)."""
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)


# Plugins an inner pytest run does without. Each pytester run is a fresh process that loads
# every installed plugin: hypothesis's alone took 0.9 s of a 3.1 s run on the 2-core VM, and
# no inner run tests these. A test that needs one names it again (``-p benchmark`` unblocks it).
INNER_RUN_OPTIONS = "-p no:hypothesispytest -p no:benchmark -p no:cov"


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's own pytester (it clears ``PYTEST_ADDOPTS``), with the plugins above left out."""
    monkeypatch.setenv("PYTEST_ADDOPTS", INNER_RUN_OPTIONS)
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
