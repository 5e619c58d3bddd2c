"""Torch profiler sessions that act as CUDA sessions do with Kineto's buffers, for CPU CI.

On CUDA, Kineto's buffers belong to the profiler, not to a session: the next session's start
takes them, and a session's trace exported after that has lost its GPU activity (measured on an
H100, torch 2.11.0+cu130: of three profiles of one test, the traces exported at the test's end
held 0, 0 and 1 kernels). CPU CI has no GPU, so these sessions play recorded H200 sessions:
session ``n`` of the process is ``RECORDED[(n - 1) % 3]``'s trace, whose export drops the GPU
events (``GPU_CATEGORIES``) once a later session has started, and which torch, as 2.11 does,
writes once ("Trace is already saved" after).

Each wraps a real (CPU) session, so that torch's profiler runs as it does (a running session,
``record_function``), and gives the recorded session's Kineto events (``RecordedKinetoEvent``,
what tools/record_traces.py dumped beside the trace) for capture to build the profile from.
``install()`` puts them in place of the sessions capture starts; a pytester project gets this
module beside its ``conftest()``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
RECORDED = ("linear_eager", "geglu_liger", "train_compiled")  # each with its Kineto events
CALLS = 3  # the profiled calls of each recorded trace
KERNELS = {"linear_eager": 1, "geglu_liger": 4, "train_compiled": 19}  # of each call
GPU_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"})


def conftest() -> str:
    """A pytester project's conftest.py that starts these sessions (this module beside it); CUDA
    reads as unavailable there, whatever the machine has: the recorded sessions are the GPU."""
    return (
        "import fake_gpu, torch\n\n"
        "def pytest_configure(config):\n"
        "    torch.cuda.is_available = lambda: False\n"
        f"    fake_gpu.install(fake_gpu.Path({str(DATA)!r}))\n"
    )


class Counts:
    """The process's fake sessions: how many started, how many exports torch was asked for."""

    started = 0
    exports = 0


class FakeGpuSession:
    """A finished or running session that plays the recorded trace ``name``."""

    def __init__(self, real: Any, name: str, data: Path) -> None:
        self.real = real
        self.recorded = data / f"h200_{name}.json.gz"
        events = recorded_kineto_events(name, data)
        self.profiler = SimpleNamespace(kineto_results=SimpleNamespace(events=lambda: events))
        self.number = 0
        self.saved = False

    def __enter__(self) -> FakeGpuSession:
        Counts.started += 1  # Kineto's buffers are this session's from here on
        self.number = Counts.started
        self.real.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.real.__exit__(*exc)

    def export_chrome_trace(self, path: str) -> None:
        Counts.exports += 1
        if self.saved:
            raise RuntimeError("Trace is already saved.")
        self.saved = True
        trace = json.loads(gzip.decompress(self.recorded.read_bytes()))
        if Counts.started > self.number:  # a later session took the buffers
            trace["traceEvents"] = [e for e in trace["traceEvents"] if e.get("cat") not in GPU_CATEGORIES]
        data = json.dumps(trace).encode()
        Path(path).write_bytes(gzip.compress(data) if path.endswith(".gz") else data)


def fake_sessions(real_new_session: Any, data: Path = DATA) -> Any:
    """What starts the sessions in place of capture's ``profiler._new_session``: fake GPU sessions
    around the real ones it starts."""

    def new_session(torch: Any, stacks: bool) -> FakeGpuSession:
        name = RECORDED[Counts.started % len(RECORDED)]
        return FakeGpuSession(real_new_session(torch, stacks), name, data)

    return new_session


def install(data: Path = DATA) -> None:
    """Make every session capture starts from now on in this process a fake GPU session."""
    from pytest_kernelprof.capture import profiler

    profiler._new_session = fake_sessions(profiler._new_session, data)


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


def recorded_kineto_events(name: str, data: Path = DATA) -> list[RecordedKinetoEvent]:
    rows = json.loads(gzip.decompress((data / f"h200_{name}.kineto.json.gz").read_bytes()))
    return [RecordedKinetoEvent(row) for row in rows]


def kernels_in(path: Path) -> int:
    """The kernel events of a saved trace (gzipped or not)."""
    raw = path.read_bytes()
    trace = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    return sum(1 for e in trace["traceEvents"] if e.get("cat") == "kernel")
