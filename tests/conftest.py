from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parent / "data"


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
    Actions job that runs the suite (tests/test_plugin_reports.py sets these where it needs them)."""
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)


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


class RecordedKinetoEvent:
    """Replays one ``_KinetoEvent`` that tools/record_traces.py dumped on the GPU machine.

    Only the methods that torch had there exist here: a method recorded as missing
    raises AttributeError, as it did live (torch 2.11 has no ``activity_type``).
    """

    def __init__(self, row: dict[str, str]) -> None:
        self._row = row

    def __getattr__(self, method: str) -> Any:
        value = self._row.get(method)
        if value is None or value.startswith("<AttributeError"):
            raise AttributeError(method)
        return lambda: _parse(value)


def _parse(value: str) -> Any:
    if value in ("True", "False"):
        return value == "True"
    try:
        return int(value)
    except ValueError:
        return value


def recorded_kineto_events(name: str) -> list[RecordedKinetoEvent]:
    rows = json.loads(gzip.decompress((DATA / f"h200_{name}.kineto.json.gz").read_bytes()))
    return [RecordedKinetoEvent(row) for row in rows]


class TypedKinetoEvent:
    """A ``_KinetoEvent`` of torch 2.12+ (``activity_type``) with the fields a host event is
    read for; ``name=None`` raises as a name cut inside a multi-byte character did live."""

    def __init__(self, name: str | None, start: int, activity: str = "python_function", correlation: int = 0) -> None:
        self._name, self._start, self._activity, self._correlation = name, start, activity, correlation

    def name(self) -> str:
        if self._name is None:
            raise UnicodeDecodeError("utf-8", b"\x94", 0, 1, "invalid start byte")
        return self._name

    def activity_type(self) -> str:
        return self._activity

    def start_ns(self) -> int:
        return self._start

    def duration_ns(self) -> int:
        return 10

    def start_thread_id(self) -> int:
        return 1

    def correlation_id(self) -> int:
        return self._correlation
