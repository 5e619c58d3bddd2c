"""``kernelprof show -``: standard input is copied up to the trace size cap and no further,
and the copy is removed however the command ends, SIGTERM included."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pytest_kernelprof.traces.files import MAX_TRACE_MB_ENV

MB = 1 << 20


def _start(tmp_path: Path, *args: str, cap_mb: int = 4) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        MAX_TRACE_MB_ENV: str(cap_mb),
        "TMPDIR": str(tmp_path),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "pytest_kernelprof", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def _feed(process: subprocess.Popen[bytes], sent: list[int]) -> None:
    """Write spaces after a trace's first bytes until the reader stops reading."""
    assert process.stdin is not None
    chunk = b" " * MB
    try:
        process.stdin.write(b'{"traceEvents": [')
        while True:
            process.stdin.write(chunk)
            sent[0] += len(chunk)
    except (BrokenPipeError, OSError, ValueError):
        return


def _copies(tmp_path: Path) -> list[Path]:
    return sorted(tmp_path.glob("kernelprof-*"))


def test_endless_standard_input_stops_at_the_cap(tmp_path: Path) -> None:
    sent = [0]
    with _start(tmp_path, "show", "-") as process:
        feeder = threading.Thread(target=_feed, args=(process, sent), daemon=True)
        feeder.start()
        try:
            process.wait(timeout=120)
        finally:
            process.kill()
        feeder.join(timeout=60)
        assert process.stderr is not None
        err = process.stderr.read().decode()
    assert process.returncode == 2
    assert err == (
        f"kernelprof: error: <stdin>: larger than 4 MB, the most a trace is read to (set {MAX_TRACE_MB_ENV} "
        "to read a bigger one)\n"
    )
    assert sent[0] < 64 * MB  # what the pipe held when it stopped reading
    assert not _copies(tmp_path)


def _feed_text(process: subprocess.Popen[bytes], sent: list[int]) -> None:
    """Write lines of ``y`` (what ``yes`` writes) until the reader stops reading."""
    assert process.stdin is not None
    chunk = b"y\n" * (MB // 2)
    try:
        while True:
            process.stdin.write(chunk)
            sent[0] += len(chunk)
    except (BrokenPipeError, OSError, ValueError):
        return


def test_endless_standard_input_that_is_no_trace_stops_at_its_first_bytes(tmp_path: Path) -> None:
    # An adversarial review: `yes | kernelprof show -` copied the cap (4 GiB by default) to the
    # temporary folder before it looked at a byte, where `show /dev/stdin` stopped at once.
    sent = [0]
    with _start(tmp_path, "show", "-", cap_mb=4096) as process:
        feeder = threading.Thread(target=_feed_text, args=(process, sent), daemon=True)
        feeder.start()
        try:
            process.wait(timeout=60)
        finally:
            process.kill()
        feeder.join(timeout=60)
        assert process.stderr is not None
        err = process.stderr.read().decode()
    assert process.returncode == 2
    assert err == "kernelprof: error: <stdin>: not a Chrome trace: it starts with b'y\\ny\\ny\\ny\\n', not with '{'\n"
    assert sent[0] < 64 * MB  # what the pipe held when it stopped reading
    assert not _copies(tmp_path)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM")
def test_sigterm_removes_the_copy_of_standard_input(tmp_path: Path) -> None:
    with _start(tmp_path, "show", "-", cap_mb=4096) as process:
        assert process.stdin is not None
        process.stdin.write(b'{"traceEvents": [' + b" " * MB)
        process.stdin.flush()
        deadline = time.monotonic() + 60
        while not any(path.joinpath("stdin").exists() for path in _copies(tmp_path)):
            assert time.monotonic() < deadline, "no copy of standard input was made"
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    assert process.returncode == 128 + signal.SIGTERM
    assert not _copies(tmp_path)


def test_closed_standard_input_is_one_line_naming_it() -> None:
    # `kernelprof show - <&-` printed an AttributeError traceback.
    done = subprocess.run(
        ["sh", "-c", 'exec "$0" -m pytest_kernelprof show - <&-', sys.executable],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 2
    assert done.stderr.decode() == (
        "kernelprof: error: <stdin>: standard input is closed: pipe a trace in (kernelprof show - < trace.json)\n"
    )
