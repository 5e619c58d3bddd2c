"""The suite's warm launcher (tests/warm.py): a run it starts is what a fresh interpreter would
be (arguments, paths, environment, streams, descriptors, exit status) but for torch being
imported already; what it cannot start warm it hands to the real interpreter; a run whose
launcher is killed is killed too."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests import warm

PROBE = (
    "import json, os, sys\n"
    "print(json.dumps({'argv': sys.argv, 'path': sys.path, 'cwd': os.getcwd(), 'probe': os.environ.get('KP_PROBE'),"
    " 'main': __name__, 'torch': 'torch' in sys.modules, 'stdin': sys.stdin.read(),"
    " 'no_bytecode': sys.dont_write_bytecode}))\n"
)


@pytest.fixture
def launcher(warm_launcher: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    if warm_launcher is None:
        pytest.skip("warm runs are off (KERNELPROF_COLD_RUNS) or not possible here")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KP_PROBE", "seen")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path / "lib"), os.environ.get("PYTHONPATH", "")]))
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "probe.py").write_text(PROBE)
    return warm_launcher


def _run(python: str, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([python, *args], capture_output=True, text=True, timeout=60, check=False, **kwargs)  # type: ignore[call-overload]


@pytest.mark.parametrize("args", [["-c", PROBE, "a", "b"], ["-m", "probe", "a"], ["-u", "-B", "-mprobe"]])
def test_a_warm_run_sees_what_a_fresh_one_sees(launcher: str, args: list[str]) -> None:
    runs = [_run(python, *args, input="from stdin") for python in (launcher, warm.PYTHON)]
    assert [run.returncode for run in runs] == [0, 0], [run.stderr for run in runs]
    seen_warm, seen_fresh = (json.loads(run.stdout) for run in runs)
    assert (seen_warm.pop("torch"), seen_fresh.pop("torch")) == (True, False)
    assert seen_warm == seen_fresh
    assert seen_warm["probe"] == "seen"
    assert seen_warm["stdin"] == "from stdin"


@pytest.mark.parametrize(
    ("code", "status", "stderr"),
    [
        ("import sys; sys.exit(3)", 3, ""),
        ("import sys; sys.exit('said why')", 1, "said why\n"),
        ("raise ValueError('broken')", 1, "ValueError: broken\n"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", -signal.SIGTERM, ""),
        ("import atexit; atexit.register(print, 'at exit')", 0, ""),
    ],
)
def test_the_exit_status_and_error_output_are_a_fresh_runs(launcher: str, code: str, status: int, stderr: str) -> None:
    for python in (launcher, warm.PYTHON):
        run = _run(python, "-c", code)
        assert run.returncode == status, python
        assert run.stderr.endswith(stderr), (python, run.stderr)
    assert _run(launcher, "-c", "import atexit; atexit.register(print, 'at exit')").stdout == "at exit\n"
    # A thread still running when the program ends is waited for.
    late = "import threading, time; threading.Thread(target=lambda: (time.sleep(0.5), print('late'))).start()"
    assert _run(launcher, "-c", late).stdout == "late\n"


def test_descriptors_passed_by_number_arrive_at_that_number(launcher: str) -> None:
    """As multiprocessing's spawn passes its pipes."""
    read, write = os.pipe()
    try:
        code = "import os, sys; os.write(int(sys.argv[1]), b'through the pipe')"
        run = subprocess.run([launcher, "-c", code, str(write)], pass_fds=[write], timeout=60, check=False)
        assert run.returncode == 0
        assert os.read(read, 100) == b"through the pipe"
    finally:
        os.close(read)
        os.close(write)


def test_what_a_child_cannot_be_runs_the_real_interpreter(launcher: str, monkeypatch: pytest.MonkeyPatch) -> None:
    probe = "import sys; print('torch' in sys.modules)"
    assert _run(launcher, "-c", probe).stdout == "True\n"
    assert _run(launcher, "-W", "error", "-c", probe).stdout == "False\n"  # a flag it does not take
    assert _run(launcher, "lib/probe.py").returncode == 0  # a script
    monkeypatch.setenv("PYTHONHASHSEED", "0")  # read at start-up: the server started without it
    assert _run(launcher, "-c", "import sys; print(sys.flags.hash_randomization, 'torch' in sys.modules)").stdout == (
        "0 False\n"
    )


def test_a_run_whose_launcher_is_killed_is_killed(launcher: str, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    code = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(120)"
    started = subprocess.Popen([launcher, "-c", code])
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, "the run did not start"
            time.sleep(0.05)
        child = int(pid_file.read_text())
        assert child != started.pid  # the run is the server's child, not the launcher itself
    finally:
        started.kill()
        started.wait()
    deadline = time.monotonic() + 30
    while _alive(child):
        assert time.monotonic() < deadline, f"run {child} outlived its launcher"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0]
    except FileNotFoundError:
        return False
    return state != "Z"
