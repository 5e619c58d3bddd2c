"""A profile's trace after later profiles (``capture/session_traces.py``): kept as its session
ends where asked, else refused once a later session started, never written without its kernels.

The GPU behaviour comes from ``tests/fake_gpu.py``'s sessions (a later session takes the earlier
one's GPU events); what the CPU records, and what is exported when, from torch's own sessions.
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof.capture import KinetoSession, session_traces
from pytest_kernelprof.capture import profiler as capture_profiler
from pytest_kernelprof.running import close_test, open_test
from tests import fake_gpu, warm

if sys.platform != "win32":
    import fcntl

posix = pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM, and the locks of POSIX")


def _work() -> torch.Tensor:
    return torch.ones(4).sum()


def _expected(index: int) -> int:
    return fake_gpu.KERNELS[fake_gpu.RECORDED[index]]


def test_the_fake_session_loses_its_gpu_events_to_a_later_one(
    fake_gpu_sessions: type[fake_gpu.Counts], tmp_path: Path
) -> None:
    # What the fix is about, as the fake plays it: torch's own exports.
    first, second = (fake_gpu.FakeGpuSession(contextlib.nullcontext(), "linear_eager", fake_gpu.DATA) for _ in "12")
    for session in (first, second):
        with session:
            pass
    second.export_chrome_trace(str(tmp_path / "newest.json"))
    first.export_chrome_trace(str(tmp_path / "late.json"))
    assert fake_gpu.kernels_in(tmp_path / "newest.json") == fake_gpu.CALLS
    assert fake_gpu.kernels_in(tmp_path / "late.json") == 0
    with pytest.raises(RuntimeError, match="already saved"):
        second.export_chrome_trace(str(tmp_path / "again.json"))
    assert fake_gpu_sessions.exports == 3


@pytest.mark.usefixtures("fake_gpu_sessions")
def test_an_export_after_a_later_profile_raises_rather_than_write_no_kernels(tmp_path: Path) -> None:
    profiler = kp.Profiler()
    first = profiler(_work)
    assert len(first.kernels) == _expected(0)
    profiler(_work)
    with pytest.raises(kp.TraceNotKeptError, match=r"1 later torch profiler session started.*keep_traces=True"):
        profiler.captures[0].export_trace(tmp_path / "first.json.gz")
    assert not list(tmp_path.iterdir())
    with pytest.raises(kp.TraceNotKeptError):  # its torch session, exported directly, likewise
        profiler.captures[0].torch_profiler.export_chrome_trace(str(tmp_path / "raw.json"))
    # The newest profile's trace is whole, and stays whole once exported (its copy is kept).
    profiler.captures[1].export_trace(tmp_path / "second.json.gz")
    profiler(_work)
    profiler.captures[1].export_trace(tmp_path / "again.json")
    assert fake_gpu.kernels_in(tmp_path / "second.json.gz") == fake_gpu.kernels_in(tmp_path / "again.json")
    assert len(kp.load_trace(tmp_path / "again.json").kernels) == _expected(1)


@pytest.mark.parametrize("how", ["profiler", "attribute", "call"])
@pytest.mark.usefixtures("fake_gpu_sessions")
def test_kept_traces_export_whole_after_later_profiles(tmp_path: Path, how: str) -> None:
    profiler = kp.Profiler(keep_traces=how == "profiler")
    if how == "attribute":
        profiler.keep_traces = True
    for _ in range(3):
        profiler.profile(_work, keep_traces=True if how == "call" else None)
    for index, capture in enumerate(profiler.captures):
        path = tmp_path / f"{index}.json.gz"
        capture.export_trace(path)
        assert len(kp.load_trace(path).kernels) == _expected(index)


@pytest.mark.usefixtures("fake_gpu_sessions")
def test_a_block_keeps_its_trace_too(tmp_path: Path) -> None:
    profiler = kp.Profiler(keep_traces=True)
    with profiler.record() as rec:
        for _ in range(2):
            _work()
            rec.step()
        _work()
    profiler(_work)
    profiler.captures[0].export_trace(tmp_path / "block.json.gz")
    assert fake_gpu.kernels_in(tmp_path / "block.json.gz") == fake_gpu.CALLS * _expected(0)


@pytest.mark.usefixtures("fake_gpu_sessions")
def test_a_test_whose_traces_will_be_saved_keeps_every_profiles_trace(tmp_path: Path) -> None:
    before = open_test([], keep_traces=True)
    try:
        profilers = [kp.Profiler(), kp.Profiler()]
        for profiler in (*profilers, profilers[0]):
            profiler(_work)
    finally:
        close_test(before)
    captures = [*profilers[0].captures, *profilers[1].captures]  # in the order the plugin saves them
    for index, capture in zip((0, 2, 1), captures, strict=True):
        capture.export_trace(tmp_path / "trace.json")
        assert len(kp.load_trace(tmp_path / "trace.json").kernels) == _expected(index)


@pytest.fixture
def exports(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The exports torch is asked for (on a session of either kind), in this test."""
    asked: list[str] = []
    for cls in (KinetoSession, torch.profiler.profile):
        real = cls.export_chrome_trace

        def counted(self: Any, path: str, real: Any = real) -> None:
            asked.append(path)
            real(self, path)

        monkeypatch.setattr(cls, "export_chrome_trace", counted)
    return asked


@pytest.mark.parametrize("direct", [True, False])
def test_nothing_is_exported_unless_a_trace_is_to_be_kept(
    monkeypatch: pytest.MonkeyPatch, exports: list[str], direct: bool
) -> None:
    monkeypatch.setattr(capture_profiler, "_direct_session_is_equivalent", lambda _torch: direct)
    plain = kp.Profiler()
    for _ in range(3):
        plain(_work)
    assert exports == []
    kept = kp.Profiler(keep_traces=True)
    for _ in range(3):
        kept(_work)
    assert len(exports) == 3


def test_on_the_cpu_too_a_late_export_raises(tmp_path: Path) -> None:
    # A CPU session's trace would still hold its CPU events; the rule is the GPU's all the same,
    # so that CPU CI fails where the GPU runner would save traces without kernels.
    profiler = kp.Profiler()
    profiler(torch.relu, torch.randn(4))
    profiler(torch.sigmoid, torch.randn(4))
    with pytest.raises(kp.TraceNotKeptError):
        profiler.captures[0].export_trace(tmp_path / "relu.json")
    profiler.captures[1].export_trace(tmp_path / "sigmoid.json")
    assert "aten::sigmoid" in kp.load_trace(tmp_path / "sigmoid.json").ops


def _kept_files() -> set[str]:
    folder = session_traces._folder
    kept = set(os.listdir(folder)) if folder is not None and os.path.isdir(folder) else set()
    return {name for name in kept if name != session_traces._LOCK_NAME}


@pytest.mark.parametrize("direct", [True, False])
def test_a_kept_trace_goes_with_its_profile(monkeypatch: pytest.MonkeyPatch, direct: bool) -> None:
    monkeypatch.setattr(capture_profiler, "_direct_session_is_equivalent", lambda _torch: direct)
    before = _kept_files()
    outer = open_test([])  # a list of ours, dropped below: the running test's would hold the profiler
    try:
        profiler = kp.Profiler(keep_traces=True)
    finally:
        close_test(outer)
    profiler(_work)
    assert len(_kept_files() - before) == 1
    del profiler
    if not direct:  # torch.profiler.profile is in reference cycles of its own
        gc.collect()
    # The kept trace adds no cycle: the file goes with the session, not at a later collection.
    assert _kept_files() - before == set()


def test_a_trace_that_cannot_be_kept_leaves_the_profile_whole_and_its_export_says_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(session_traces, "_kept_folder", lambda: str(tmp_path / "missing"))
    profiler = kp.Profiler(keep_traces=True)
    prof = profiler(torch.relu, torch.randn(4))
    assert prof.ops["aten::relu"].count == 1
    profiler(torch.relu, torch.randn(4))
    with pytest.raises(kp.TraceNotKeptError, match=r"keeping it as its session ended failed: torch.profiler wrote no"):
        profiler.captures[0].export_trace(tmp_path / "relu.json")


# -- a process killed before its exit (an adversarial review: SIGTERM left the kept traces) --

KEEPS_THEN_WAITS = """
import signal, sys, time, torch
import pytest_kernelprof as kp
signal.signal(signal.SIGHUP, signal.SIG_DFL)  # as a terminal's process has it (not nohup's ignore)
from pytest_kernelprof.capture import session_traces
profiler = kp.Profiler(keep_traces=True)
profiler(torch.relu, torch.randn(4))
print(session_traces._folder, flush=True)
# Short sleeps, as a running test's Python code is: a signal the kernel hands to one of torch's
# threads interrupts no sleep of the main thread, whose handler would then wait out one long sleep.
for _ in range(1200):
    time.sleep(0.1)
"""


def _keeping_process(tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(
        [warm.PYTHON, "-c", KEEPS_THEN_WAITS], stdout=subprocess.PIPE, text=True, env=env, cwd=tmp_path
    )
    assert process.stdout is not None
    folder = Path(process.stdout.readline().strip())
    assert folder.parent == tmp_path, folder
    assert [p.name for p in folder.glob("session-*.json")], "no trace kept"
    return process, folder


@posix
@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_sigterm_removes_the_kept_traces_and_still_ends_the_process(tmp_path: Path, name: str) -> None:
    # `pytest --kernelprof-trace-dir=tr --kernelprof-save=all` killed by a CI timeout's SIGTERM
    # (or a closed terminal's SIGHUP) left $TMPDIR/kernelprof-kept-*/session-PID-N.json, hundreds
    # of MB for a big model.
    number = getattr(signal, name)
    process, folder = _keeping_process(tmp_path)
    with process:
        process.send_signal(number)
        assert process.wait(timeout=60) == -number  # killed by it, as without the plugin
    assert not folder.exists()
    assert list(tmp_path.glob("kernelprof-kept-*")) == []


@posix
def test_a_folder_a_killed_process_left_is_removed_by_the_next_that_keeps_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    process, left = _keeping_process(tmp_path)
    with process:
        process.kill()  # SIGKILL: no handler runs
        process.wait(timeout=60)
    assert left.exists()
    held = tmp_path / f"kernelprof-kept-{process.pid}-abcdefgh"  # a dead PID here; alive where its lock is held
    held.mkdir()
    lock = os.open(held / session_traces._LOCK_NAME, os.O_CREAT | os.O_WRONLY)
    fcntl.flock(lock, fcntl.LOCK_EX)
    other = [tmp_path / f"kernelprof-kept-{os.getppid()}-abcdefgh", tmp_path / "kernelprof-kept-x1b2c3d4"]
    for folder in other:  # a live process's; a name this package no longer makes
        folder.mkdir()
        (folder / "session-1-1.json").write_text("{}")
    monkeypatch.setattr(session_traces.tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(session_traces, "_folder", None)
    monkeypatch.setattr(session_traces, "_lock", None)
    try:
        mine = session_traces._kept_folder()
    finally:
        os.close(lock)
    assert not left.exists()
    assert held.exists()
    assert all(folder.exists() for folder in other)
    assert Path(mine).parent == tmp_path
    assert Path(mine).name.startswith(f"kernelprof-kept-{os.getpid()}-")
    shutil.rmtree(mine)


@posix
@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_a_sigterm_handler_of_the_users_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    def users(signum: int, frame: object) -> None:
        raise SystemExit(0)

    number = getattr(signal, name)
    previous = signal.signal(number, users)
    try:
        monkeypatch.setattr(session_traces.tempfile, "tempdir", str(tmp_path))
        monkeypatch.setattr(session_traces, "_folder", None)
        monkeypatch.setattr(session_traces, "_lock", None)
        session_traces._kept_folder()
        assert signal.getsignal(number) is users
    finally:
        signal.signal(number, previous)
