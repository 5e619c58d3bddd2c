"""``kernelprof show -``: standard input is copied up to the trace size cap and no further,
and the copy is removed however the command ends, SIGTERM, SIGHUP and SIGINT included. A named
pipe or a process substitution is copied too: the timeline page reads the trace again."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_kernelprof.cli import main
from pytest_kernelprof.traces.trace_bytes import MAX_TRACE_MB_ENV
from tests.helpers import DATA

MB = 1 << 20


def _default_signals() -> None:
    # As a command started from a terminal: a test run may have been started ignoring SIGINT or SIGHUP.
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


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
        preexec_fn=None if sys.platform == "win32" else _default_signals,
    )


def _feed(process: subprocess.Popen[bytes], sent: list[int], head: bytes, chunk: bytes) -> None:
    """Write ``head``, then ``chunk`` after ``chunk`` until the reader stops reading."""
    assert process.stdin is not None
    try:
        process.stdin.write(head)
        while True:
            process.stdin.write(chunk)
            sent[0] += len(chunk)
    except (BrokenPipeError, OSError, ValueError):
        return


def _endless(tmp_path: Path, head: bytes, chunk: bytes, cap_mb: int = 4) -> tuple[int, str, int]:
    """``kernelprof show -`` fed without end: (its exit status, its standard error, bytes sent)."""
    sent = [0]
    with _start(tmp_path, "show", "-", cap_mb=cap_mb) as process:
        feeder = threading.Thread(target=_feed, args=(process, sent, head, chunk), daemon=True)
        feeder.start()
        try:
            process.wait(timeout=120)
        finally:
            process.kill()
        feeder.join(timeout=60)
        assert process.stderr is not None
        err = process.stderr.read().decode()
    return process.returncode, err, sent[0]


def _copies(tmp_path: Path) -> list[Path]:
    return sorted(tmp_path.glob("kernelprof-*"))


def test_endless_standard_input_stops_at_the_cap(tmp_path: Path) -> None:
    returncode, err, sent = _endless(tmp_path, b'{"traceEvents": [', b" " * MB)
    assert returncode == 2
    assert err == (
        f"kernelprof: error: <stdin>: larger than 4 MB, the most a trace is read to (set {MAX_TRACE_MB_ENV} "
        "to read a bigger one)\n"
    )
    assert sent < 64 * MB  # what the pipe held when it stopped reading
    assert not _copies(tmp_path)


def test_endless_standard_input_that_is_no_trace_stops_at_its_first_bytes(tmp_path: Path) -> None:
    # An adversarial review: `yes | kernelprof show -` copied the cap (4 GiB by default) to the
    # temporary folder before it looked at a byte, where `show /dev/stdin` stopped at once.
    returncode, err, sent = _endless(tmp_path, b"", b"y\n" * (MB // 2), cap_mb=4096)
    assert returncode == 2
    assert err == "kernelprof: error: <stdin>: not a Chrome trace: it starts with b'y\\ny\\ny\\ny\\n', not with '{'\n"
    assert sent < 64 * MB  # what the pipe held when it stopped reading
    assert not _copies(tmp_path)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_that_ends_the_command_removes_the_copy_of_standard_input(tmp_path: Path, name: str) -> None:
    # SIGHUP (a closed terminal) left the copy, up to the 4 GiB cap; SIGINT ended it with a traceback.
    signum = getattr(signal, name)
    with _start(tmp_path, "show", "-", cap_mb=4096) as process:
        assert process.stdin is not None
        process.stdin.write(b'{"traceEvents": [' + b" " * MB)
        process.stdin.flush()
        deadline = time.monotonic() + 60
        while not any(path.joinpath("stdin").exists() for path in _copies(tmp_path)):
            assert time.monotonic() < deadline, "no copy of standard input was made"
            time.sleep(0.05)
        process.send_signal(signum)
        process.wait(timeout=60)
        assert process.stderr is not None
        assert process.stderr.read() == b""
    assert process.returncode == 128 + signum
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


@contextlib.contextmanager
def _piped(fifo: Path, data: bytes) -> Iterator[None]:
    """A named pipe at ``fifo`` that gives ``data`` to the reader that opens it in the block."""
    os.mkfifo(fifo)
    # A reader of our own, so that the writer's end opens at once; it reads nothing, and keeps
    # the pipe (and what was written to it) until the block's reader has opened it.
    held = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    sent = os.open(fifo, os.O_WRONLY)

    def write() -> None:
        with open(sent, "wb") as pipe:
            pipe.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        yield
    finally:
        writer.join(60)
        os.close(held)


def _host(page: Path) -> list[str]:
    return re.findall(r'"host":(?:true|false)|"launches":\[\[[^]]*\]', page.read_text())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_trace_from_a_named_pipe_gets_its_launches_and_copies_on_the_page(tmp_path: Path) -> None:
    # `kernelprof show <(cat t.json.gz) --html p.html`: the page read the drained pipe again and
    # drew no launch or copy ("host": false), where the same file by its path drew them.
    trace = DATA / "h200_copy_dtoh_pinned_nonblocking.json.gz"
    assert main(["show", str(trace), "--html", str(tmp_path / "file.html")]) == 0
    fifo = tmp_path / "fifo"
    with _piped(fifo, trace.read_bytes()):
        assert main(["show", str(fifo), "--html", str(tmp_path / "pipe.html")]) == 0
    expected = _host(tmp_path / "file.html")
    assert '"host":true' in expected
    assert _host(tmp_path / "pipe.html") == expected
    assert not _copies(tmp_path)


def test_an_empty_html_name_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # `--html ""` wrote no page and said nothing.
    assert main(["show", str(DATA / "h200_linear_eager.json.gz"), "--html", ""]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "kernelprof: error: --html '': an empty file name; name the page's file (--html timeline.html)\n"
    )
