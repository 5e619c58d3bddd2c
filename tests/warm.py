"""Warm interpreters for the suite's pytester runs.

Each pytester run is a fresh ``python -m pytest``, and most of its cost is importing torch
(1.4 s of CPU of a 2.2 s run on the 2-core CI machine; three times that for an inner ``-n 2``).
A server, one per test process, imports torch and pytest once and forks a child per run. In a
pytester test ``sys.executable`` names a launcher (the suite's ``pytester`` fixture sets it),
which hands the server its arguments, environment, working directory and standard streams, and
exits as the child exits. The child first becomes what a fresh interpreter would be there: the
streams, ``sys.path`` from ``PYTHONPATH``, ``sys.argv``, a new ``__main__``. Inner xdist workers
start through the same launcher, since the child's ``sys.executable`` names it too.

What a child cannot reproduce runs the real interpreter instead (the launcher execs it): flags
other than ``-u`` and ``-B``, a script rather than ``-c`` or ``-m``, an environment variable read
at start-up (``PYTHON*``, ``TORCH*``, ``OMP_*``, ...) that differs from the server's, a
``PYTHONPATH`` entry holding its own torch or pytest. ``KERNELPROF_COLD_RUNS=1`` turns the
launcher off for a whole session (every run a fresh interpreter, as before).

Linux only (``os.pidfd_open``, ``socket.send_fds``); elsewhere runs are fresh interpreters.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import gc
import importlib
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PRELOAD = ("torch", "pytest")
# Read when an interpreter, torch or coverage starts: a child forked from a server that started
# with other values would not be what a fresh interpreter is. PYTHONPATH is the exception, as
# the child rebuilds sys.path from it.
STARTUP_PREFIXES = ("PYTHON", "TORCH_", "PYTORCH_", "OMP_", "MKL_", "KMP_", "GOMP_", "LD_", "MALLOC", "COVERAGE")
COLD = "KERNELPROF_COLD_RUNS"
LOG = "KERNELPROF_WARM_LOG"  # a file: the server's log and the cold runs' reasons are added to it at the end
PYTHON = sys.executable  # the real interpreter (a pytester test's sys.executable names the launcher)
HEADER = struct.Struct("!I")
STATUS = struct.Struct("!i")


def startup_environment(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(STARTUP_PREFIXES) and k != "PYTHONPATH"}


# The launcher runs as `python -IS`: isolated (no PYTHON* variables, no user site) and without
# site, so that it starts in 10 ms. It must not import the project or tests.
LAUNCHER = """#!{python} -IS
import os
import socket
import struct
import sys

REAL = {python!r}
SOCKET = {socket!r}
SERVER_ENVIRONMENT = {environment!r}
PREFIXES = {prefixes!r}
PRELOADED = {preloaded!r}


def cold(why):
    # Which runs could not be warm, and why: the server's folder, next to its log.
    with open(os.path.join(os.path.dirname(SOCKET), "cold.log"), "a") as log:
        log.write(f"{{why}}: {{sys.argv[1:]!r:.300}}\\n")
    os.execv(REAL, [REAL, *sys.argv[1:]])


def request():
    args = sys.argv[1:]
    flags = []
    while args and args[0] in ("-u", "-B"):
        flags.append(args.pop(0))
    if args and args[0] in ("-c", "-m") and len(args) > 1:
        mode, target, rest = args[0], args[1], args[2:]
    elif args and args[0][:2] in ("-c", "-m") and len(args[0]) > 2:
        mode, target, rest = args[0][:2], args[0][2:], args[1:]
    else:
        cold("not -c or -m")
    env = dict(os.environ)
    started = {{k: v for k, v in env.items() if k.startswith(PREFIXES) and k != "PYTHONPATH"}}
    if started != SERVER_ENVIRONMENT:
        cold(f"start-up environment {{sorted(set(started.items()) ^ set(SERVER_ENVIRONMENT.items()))}}")
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if any(os.path.exists(os.path.join(p, name)) for p in paths for name in PRELOADED):
        cold("PYTHONPATH has its own torch or pytest")
    return repr({{"flags": flags, "mode": mode, "target": target, "argv": rest, "env": env, "cwd": os.getcwd()}})


def main():
    spec = request()
    payload = spec.encode("utf-8", "surrogateescape")
    # Every descriptor a fresh interpreter would have inherited (pytester's three; the pipes
    # multiprocessing's spawn passes by number), listed before the socket is made.
    listed = [int(fd) for fd in os.listdir("/proc/self/fd")]
    fds = []
    for fd in listed:
        try:
            os.fstat(fd)
        except OSError:
            continue  # the listing's own
        fds.append(fd)
    if len(fds) > 200:
        cold("too many descriptors to pass")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.connect(SOCKET)
    except OSError as error:
        cold(f"no server: {{error}}")
    header = struct.pack("!II", len(payload), len(fds)) + struct.pack(f"!{{len(fds)}}I", *fds)
    socket.send_fds(server, [struct.pack("!I", len(header)) + header], fds)
    server.sendall(payload)
    got = b""
    while len(got) < 4:
        chunk = server.recv(4 - len(got))
        if not chunk:
            os._exit(1)  # the server went away
        got += chunk
    (code,) = struct.unpack("!i", got)
    if code < 0:  # killed by a signal: so is the launcher, for whoever waits on it
        import signal

        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)

main()
"""


@dataclass
class Server:
    """A warm server and the launcher that reaches it."""

    process: subprocess.Popen[bytes]
    launcher: Path
    folder: Path

    def stop(self) -> None:
        # Its standard input closing is its signal to end (it kills what still runs).
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if os.environ.get(LOG):
            with open(os.environ[LOG], "a") as log:
                for name in ("server.log", "cold.log"):
                    if (self.folder / name).exists():
                        log.write((self.folder / name).read_text())
        for path in self.folder.iterdir():
            path.unlink()
        self.folder.rmdir()


def available() -> bool:
    return (
        os.environ.get(COLD, "") in ("", "0")
        and hasattr(os, "pidfd_open")
        and hasattr(socket, "send_fds")
        and hasattr(os, "fork")
    )


def start() -> Server:
    """Starts a server; its launcher is usable as soon as this returns (it waits for the import)."""
    folder = Path(tempfile.mkdtemp(prefix="kp-warm-"))
    sock = folder / "s"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    launcher = folder / "python"
    launcher.write_text(
        LAUNCHER.format(
            python=PYTHON,
            socket=str(sock),
            environment=startup_environment(env),
            prefixes=STARTUP_PREFIXES,
            preloaded=PRELOAD + ("_pytest",),
        )
    )
    launcher.chmod(0o755)
    ready = folder / "ready"
    log = folder / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [PYTHON, __file__, str(sock), str(launcher), str(ready)],
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=out,
            env=env,
            cwd=folder,
        )
    while not ready.exists():
        if process.poll() is not None:
            raise RuntimeError(f"the warm server ended ({process.returncode}): {log.read_text()}")
        time.sleep(0.01)
    return Server(process, launcher, folder)


# ---- the server (run as a script: python warm.py SOCKET LAUNCHER READY) --------------------


@dataclass
class Spec:
    flags: list[str]
    mode: str
    target: str
    argv: list[str]
    env: dict[str, str]
    cwd: str
    fds: list[int]  # as received
    numbers: list[int]  # what they were in the launcher, and become in the child


def _exactly(conn: socket.socket, size: int) -> bytes:
    got = b""
    while len(got) < size:
        chunk = conn.recv(size - len(got))
        if not chunk:
            raise EOFError("the launcher went away mid-request")
        got += chunk
    return got


def _receive(conn: socket.socket) -> Spec:
    # The descriptors come with the first bytes; only the size is read with them, so that
    # nothing of what follows is read ahead.
    first, fds, _, _ = socket.recv_fds(conn, HEADER.size, 253)
    (size,) = HEADER.unpack(first + _exactly(conn, HEADER.size - len(first)))
    header = _exactly(conn, size)
    payload_size, count = struct.unpack("!II", header[:8])
    numbers = list(struct.unpack(f"!{count}I", header[8:]))
    if len(fds) != count:
        raise EOFError(f"{count} descriptors announced, {len(fds)} came")
    import ast

    fields: dict[str, Any] = ast.literal_eval(_exactly(conn, payload_size).decode("utf-8", "surrogateescape"))
    return Spec(fds=list(fds), numbers=numbers, **fields)


def serve(sock: str, ready: str) -> Spec:
    """Serves until standard input closes (then exits); returns only in a forked child."""
    gc.disable()  # until each fork: collections in the children then touch none of the server's objects
    for name in PRELOAD:
        importlib.import_module(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock)
    listener.listen(64)
    Path(ready).touch()
    # Children are reaped through their pidfds; the parent's end of a client is its connection.
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, ("accept",))
    selector.register(0, selectors.EVENT_READ, ("parent",))
    running: dict[int, tuple[socket.socket, int]] = {}
    while True:
        for key, _ in selector.select():
            kind = key.data[0]
            if kind == "accept":
                conn, _ = listener.accept()
                try:
                    spec = _receive(conn)
                except (OSError, EOFError, ValueError):
                    conn.close()
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                gc.freeze()
                pid = os.fork()
                if pid == 0:
                    gc.enable()
                    selector.close()
                    listener.close()
                    conn.close()
                    for other, pidfd in running.values():
                        other.close()
                        os.close(pidfd)
                    return spec
                for fd in spec.fds:
                    os.close(fd)
                with contextlib.suppress(OSError):  # the child did it first, or has already ended
                    os.setpgid(pid, pid)
                pidfd = os.pidfd_open(pid)
                running[pid] = (conn, pidfd)
                selector.register(pidfd, selectors.EVENT_READ, ("exited", pid))
                selector.register(conn, selectors.EVENT_READ, ("client", pid))
            elif kind == "exited":
                pid = key.data[1]
                conn, pidfd = running.pop(pid)
                _, status, usage = os.wait4(pid, 0)
                print(f"{pid}: exit {status}, cpu {usage.ru_utime + usage.ru_stime:.2f}s", file=sys.stderr, flush=True)
                selector.unregister(pidfd)
                os.close(pidfd)
                with contextlib.suppress(KeyError):  # unless its launcher went first
                    selector.unregister(conn)
                with contextlib.suppress(OSError):  # the launcher was killed
                    conn.sendall(STATUS.pack(os.waitstatus_to_exitcode(status)))
                conn.close()
            elif kind == "client":
                # Readable before the child ended: the launcher is gone (killed at a timeout).
                pid = key.data[1]
                selector.unregister(running[pid][0])
                _kill(pid)
            else:
                if not os.read(0, 1024):
                    for pid in running:
                        _kill(pid)
                    for pid in list(running):
                        os.waitpid(pid, 0)
                    sys.exit(0)


def _kill(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
            return
        except ProcessLookupError:
            continue


def become(spec: Spec, launcher: str, base_path: list[str]) -> None:
    """In the forked child: becomes a fresh ``python [-u] [-B] -c/-m ...`` and runs it."""
    for name in ("SIGCHLD", "SIGTERM", "SIGHUP"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with contextlib.suppress(OSError):  # the server did it first
        os.setpgid(0, 0)
    # The streams' Python objects stay (they are the server's, made as a fresh interpreter
    # makes them); the descriptors under them become the launcher's, each at its number. Moved
    # out of the way first: a received descriptor may sit at a number another one takes.
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 1024) for fd in spec.fds]
    for fd in spec.fds:
        os.close(fd)
    for fd, number in zip(moved, spec.numbers, strict=True):
        os.dup2(fd, number)
        os.close(fd)
    if "-u" in spec.flags:
        for stream in (sys.stdout, sys.stderr):
            stream.reconfigure(line_buffering=True, write_through=True)
    # The server's own (PYTHONDONTWRITEBYTECODE, the same here as there), or -B.
    sys.dont_write_bytecode = sys.dont_write_bytecode or "-B" in spec.flags
    os.chdir(spec.cwd)
    os.environ.clear()
    os.environ.update(spec.env)
    tempfile.tempdir = None  # gettempdir() caches TMPDIR as the server saw it
    sys.executable = launcher
    # As Python reads it: an empty entry ("lib:" with PYTHONPATH unset before) is the current folder.
    pythonpath = spec.env.get("PYTHONPATH", "")
    entries = pythonpath.split(os.pathsep) if pythonpath else []
    rest: list[str] = []
    for entry in [os.path.abspath(p) for p in entries] + base_path:
        if entry not in rest:
            rest.append(entry)
    try:
        if spec.mode == "-m":
            sys.path[:] = [spec.cwd, *rest]
            sys.argv = ["-m", *spec.argv]
            import runpy

            runpy.run_module(spec.target, run_name="__main__", alter_sys=True)
        else:
            sys.path[:] = ["", *rest]
            sys.argv = ["-c", *spec.argv]
            main = types.ModuleType("__main__")
            sys.modules["__main__"] = main
            exec(compile(spec.target, "<string>", "exec"), main.__dict__)
        code = 0
    except SystemExit as done:
        code = _exit_code(done)
    except KeyboardInterrupt:
        sys.excepthook(*sys.exc_info())
        code = -signal.SIGINT  # as an interpreter ends on one: by the signal
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    _finish(code)


def _exit_code(done: SystemExit) -> int:
    if done.code is None:
        return 0
    if isinstance(done.code, int):
        return done.code
    print(done.code, file=sys.stderr)
    return 1


def _finish(code: int) -> None:
    """Ends as an interpreter ends (threads joined, atexit handlers run, streams flushed), but
    without tearing down the modules: that touches every object torch made, each page of the
    server's memory copied into this child (0.65 s of CPU a child, the run itself 0.4 s)."""
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


if __name__ == "__main__":
    _sock, _launcher, _ready = sys.argv[1:4]
    sys.path[:] = _base = sys.path[1:]  # without this script's folder (tests/)
    # Ctrl-C reaches the whole process group: the server stays to kill the children whose
    # launchers it ended, and ends when the test process closes its standard input.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _spec = serve(_sock, _ready)
    del _sock, _ready
    become(_spec, _launcher, _base)
