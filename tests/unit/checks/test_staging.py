"""An export's staging folder (checks/staging.py) goes however the export ends: SIGTERM in the
middle of it (a CI job's timeout), and a process killed outright (the next export removes it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pytest_kernelprof import load_sweep
from pytest_kernelprof.checks.staging import PREFIX
from tests.helpers import DATA

GEGLU = DATA / "h100_sweep_geglu"

# An export whose first case's trace blocks until told to go on: it says it started (a file), then
# waits for a file no one writes. The test sends SIGTERM once the export is in there, no sooner.
EXPORT = """
import signal, sys, time
from dataclasses import replace
from pathlib import Path
from pytest_kernelprof import load_sweep
from pytest_kernelprof.checks.sweep import ProfileSweep

folder, started, keep = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
if keep == "handler":  # a program's own handler that lets the process live on
    signal.signal(signal.SIGTERM, lambda signum, frame: print("handled", flush=True))

def blocks(path):
    Path(path).write_bytes(b"part of a trace")
    started.write_text("in")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.01)
    raise SystemExit("never told")

sweep = load_sweep(sys.argv[4])
ProfileSweep([replace(sweep[0], export=blocks), *sweep.cases[1:]]).export(folder)
"""


def _export_then_sigterm(tmp_path: Path, keep: str) -> subprocess.CompletedProcess[str]:
    folder, started = tmp_path / "out", tmp_path / "started"
    script = tmp_path / "export.py"
    script.write_text(textwrap.dedent(EXPORT))
    process = subprocess.Popen(
        [sys.executable, str(script), str(folder), str(started), keep, str(GEGLU)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert started.exists(), process.communicate()
        assert [p.name for p in folder.iterdir() if p.name.startswith(PREFIX)]  # the staging folder, mid-export
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or sys.platform == "win32", reason="POSIX signals")
def test_sigterm_mid_export_removes_the_staging_folder_and_ends_the_process_as_sigterm(tmp_path: Path) -> None:
    result = _export_then_sigterm(tmp_path, "default")
    assert result.returncode == -signal.SIGTERM, result.stderr
    assert list((tmp_path / "out").iterdir()) == []  # no .export.* left, no case half moved in


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or sys.platform == "win32", reason="POSIX signals")
def test_sigterm_that_the_program_handles_ends_the_export_with_an_error_and_no_staging_folder(
    tmp_path: Path,
) -> None:
    result = _export_then_sigterm(tmp_path, "handler")
    assert result.returncode == 1
    assert "handled" in result.stdout  # the program's handler was handed the signal
    assert "InterruptedError: the export into" in result.stderr
    assert list((tmp_path / "out").iterdir()) == []


def test_a_staging_folder_whose_process_is_gone_is_removed_by_the_next_export(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = folder / f"{PREFIX}{int(dead.stdout)}-abcd1234"  # a SIGKILLed export's
    live = folder / f"{PREFIX}{os.getppid()}-abcd1234"  # a running process's: its export goes on
    other = folder / ".export.abcd1234"  # no process's id in it: not known to be stale
    for path in (stale, live, other):
        path.mkdir()
        (path / "case-00.json.gz").write_bytes(b"part")
    load_sweep(GEGLU).export(folder)
    left = sorted(p.name for p in folder.iterdir() if p.name.startswith(".export."))
    assert left == sorted([live.name, other.name])
    assert (folder / "sweep.json").is_file()
