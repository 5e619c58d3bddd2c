#!/usr/bin/env python3
"""The README's commands: `python3 dev.py examples`, `python3 dev.py tests` and
`python3 dev.py compat`.

`examples` and `tests` create (or reuse) a virtual environment in `.venv`, install what the
project needs into it, and run pytest there; arguments after the command go to pytest. Needs
only Python 3.10+ with `venv` and `pip`.

torch is chosen as a newcomer's machine needs it: a torch already in the environment is kept
(a CUDA build stays a CUDA build); otherwise a machine with an NVIDIA GPU gets PyPI's default
build and one without gets the CPU build, because a plain `torch` requirement would pull a
multi-GB CUDA build onto a machine that cannot use it. `KERNELPROF_TORCH` (a pip requirement
such as `torch==2.11.0`) overrides the choice; `KERNELPROF_VENV` names another environment
directory; `--system` uses the running interpreter and installs nothing. Before pytest starts,
it names the `pytest_kernelprof` the interpreter imports, with a warning where that is not this
checkout's `src/` (another checkout's editable install would run silently otherwise).

`python3 dev.py compat [VERSIONS...] [--python X.Y] [-- pytest arguments...]` runs the tests
and the examples (`pytest tests examples -n auto`) once per torch version, each in its own
environment under `.venvs/` (`.venvs/py3.11-torch2.6.0`: made on first use, then reused; the
project, installed editable with its `test` extra, installed again when `pyproject.toml`
changes or the checkout moves). Without versions: the floor of `pyproject.toml`'s `torch>=X.Y`
(its first release), then the newest release of every minor version above it, as `pip index
versions torch` lists them for that Python, asked on every run, so a new release joins the day
it is published. `2.8` is the newest 2.8.x, `2.8.0` that release (a local build such as
`2.13.0+cpu` too), `floor` and `newest` what they say. `--python 3.10` (repeatable: a version
on `PATH` or among pyenv's, or an interpreter's path; by default the one running dev.py) picks
the interpreter, and arguments after `--` go to pytest. torch comes from pip's configured
index, pinned while the project installs, so that pip never swaps it for another: on Linux,
PyPI's CUDA build (5 to 7 GB installed), also on a machine without a GPU, where the suite runs
on the CPU and its GPU tests skip. Before it makes any environment, `compat` adds up the disk
the missing ones need (7 GB kept for each CUDA build, 1 GB for a CPU build, and room for the
last install: 9 GB free to install a CUDA build) and refuses the run, naming the figure and
the free disk, where `.venvs/` cannot hold them; each install checks again before pip starts.
It prints a Markdown table row per version as each finishes (torch, Python, passed, failed,
skipped, wall time, or why it did not run), then the whole table, and exits non-zero if any
version failed or did not run; each run's output is in `.venvs/<name>.pytest.log`, pip's in
`.venvs/<name>.log`.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import venv
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CPU_TORCH = "torch==2.13.0+cpu"
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
COMMANDS = {
    # testpaths in pyproject.toml: tests/; on every core (pytest-xdist is in the test extra).
    # worksteal: the pytester tests are few and long, the unit tests many and short, and xdist's
    # default hands them out in blocks, so one worker ran every pytester test while the other
    # sat idle (119 s against 89 s for the suite on a 2-core machine).
    "examples": ["examples", "-rs"],
    "tests": ["-n", "auto", "--dist", "worksteal"],
}


def _say(message: str) -> None:
    print(f"dev.py: {message}", flush=True)


# How often a long step says it is still going: pip -q prints nothing while it downloads torch
# (minutes on a first run), and a silent terminal reads as a hang.
TICK_SECONDS = 20.0


@contextlib.contextmanager
def _still(doing: str) -> Iterator[None]:
    """Every TICK_SECONDS while the block runs, a line that it is still ``doing`` so."""
    done = threading.Event()
    started = time.monotonic()

    def tick() -> None:
        while not done.wait(TICK_SECONDS):
            _say(f"still {doing} ({time.monotonic() - started:.0f} s)")

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def _run(*command: str | Path) -> int:
    return subprocess.call([str(part) for part in command], cwd=ROOT)


def _check(*command: str | Path) -> None:
    code = _run(*command)
    if code:
        _say(f"failed ({code}): {' '.join(str(part) for part in command)}")
        sys.exit(code)


def _python_of(env: Path) -> Path:
    scripts = env / ("Scripts" if os.name == "nt" else "bin")
    return scripts / ("python.exe" if os.name == "nt" else "python")


def _has_gpu() -> bool:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    try:
        listing = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return listing.returncode == 0 and "GPU" in listing.stdout


def imported_package(python: Path) -> Path | None:
    """The folder of the ``pytest_kernelprof`` that ``python`` imports, run as pytest will be
    (from the checkout, with this environment), or None where it imports none. Found without
    importing it: the package imports torch."""
    probe = (
        "import importlib.util as u; s = u.find_spec('pytest_kernelprof'); print(s.origin if s and s.origin else '')"
    )
    done = subprocess.run([str(python), "-c", probe], cwd=ROOT, capture_output=True, text=True)
    found = done.stdout.strip()
    return Path(found).parent if done.returncode == 0 and found else None


def say_which_package(python: Path) -> None:
    """One line naming the pytest_kernelprof the run tests, and a warning where it is not this
    checkout's: with --system, an editable install of another checkout runs silently otherwise."""
    package = imported_package(python)
    own = ROOT / "src" / "pytest_kernelprof"
    if package is None:
        print(
            f"dev.py: warning: {python} imports no pytest_kernelprof, so pytest runs without the plugin: "
            "`pip install -e .` into it, or leave out --system",
            file=sys.stderr,
            flush=True,
        )
        return
    _say(f"testing pytest_kernelprof from {package}")
    if package.resolve() != own.resolve():
        print(
            f"dev.py: warning: that is not this checkout's ({own}): this run tests that copy, not this "
            "checkout: an install of another checkout, or PYTHONPATH, comes first. To test this checkout, "
            "`pip install -e .` into this interpreter",
            file=sys.stderr,
            flush=True,
        )


def _has_torch(python: Path) -> bool:
    # Quietly: where torch is missing, its ModuleNotFoundError traceback reads as a failure to
    # someone running this for the first time, and the line after says what happens instead.
    probe = [str(python), "-c", "import torch"]
    return subprocess.call(probe, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0


def _install_torch(python: Path) -> None:
    pip = (python, "-m", "pip", "install", "-q")
    wanted = os.environ.get("KERNELPROF_TORCH")
    if wanted:
        _say(f"installing {wanted} (KERNELPROF_TORCH)")
        with _still(f"installing {wanted}"):
            _check(*pip, wanted)
    elif _has_gpu():
        _say("NVIDIA GPU found: installing PyPI's torch (a CUDA build, a few GB: minutes)")
        with _still("installing torch"):
            _check(*pip, "torch")
    else:
        # Where pip's own sources hold the CPU build (a local wheel cache, a mirror), take it
        # from there; otherwise from PyTorch's CPU index.
        _say(f"no GPU: installing the CPU build of torch ({CPU_TORCH}, about 200 MB: a minute or two)")
        with _still("installing torch"):
            if _run(*pip, CPU_TORCH) != 0:
                _check(*pip, CPU_TORCH, "--extra-index-url", CPU_TORCH_INDEX)


def _project_stamp() -> str:
    # The checkout too: an environment installed (editable) from another checkout runs its code.
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + str(ROOT).encode()).hexdigest()


def _environment() -> Path:
    env = Path(os.environ.get("KERNELPROF_VENV", ROOT / ".venv"))
    python = _python_of(env)
    if not python.exists():
        _say(f"first run: setting up {env}, a virtual environment with torch and this project (once; a few minutes)")
        _say(f"creating {env}")
        with _still(f"creating {env}"):
            venv.create(env, with_pip=True)
    stamp = env / ".kernelprof-installed"
    if stamp.exists() and stamp.read_text() == _project_stamp():
        return python  # installed, and pyproject.toml has not changed since
    if not _has_torch(python):
        _install_torch(python)
    _say("installing the project with its test extra (pytest, pytest-xdist, ...)")
    with _still("installing the project"):
        _check(python, "-m", "pip", "install", "-q", "-e", ".[test]")
    stamp.write_text(_project_stamp())
    _say(f"{env} is ready: running pytest")
    return python


# ---- compat: the suite on other torch versions --------------------------------------------

VENVS = ROOT / ".venvs"
TORCH_READY = ".torch-ok"  # in an environment whose torch is installed
COMPAT_PYTEST = ["tests", "examples", "-n", "auto", "--dist", "worksteal", "-q", "-p", "no:randomly"]
_RELEASE = re.compile(r"^\d+\.\d+\.\d+$")  # no local builds (+cpu), no pre-releases


def _floor() -> str:
    """The torch floor ``pyproject.toml`` requires, as ``2.6``."""
    found = re.search(r'"torch>=(\d+\.\d+)', (ROOT / "pyproject.toml").read_text())
    if found is None:
        raise SystemExit("dev.py: pyproject.toml requires no torch>=X.Y")
    return found.group(1)


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def _interpreter(wanted: str | None) -> Path:
    """The Python of ``--python``: a path, or a version found on PATH or among pyenv's."""
    if wanted is None:
        return Path(sys.executable)
    if os.sep in wanted:
        return Path(wanted)
    candidates = [shutil.which(f"python{wanted}")]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += [str(p) for p in sorted(pyenv.glob(f"{wanted}*/bin/python{wanted}"), reverse=True)]
    for candidate in filter(None, candidates):
        probe = subprocess.run([candidate, "-c", "import venv"], capture_output=True)
        if probe.returncode == 0:  # a pyenv shim of a version not selected fails here
            return Path(candidate)
    raise SystemExit(f"dev.py: no Python {wanted} found (on PATH or in {pyenv}); give its path to --python")


def _python_version(python: Path) -> str:
    out = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True)
    return out.stdout.decode().strip()


def _index_versions(python: Path) -> list[str]:
    """The torch releases pip's index lists for ``python`` (wheels for its version), newest first."""
    listing = subprocess.run(
        [python, "-m", "pip", "index", "versions", "torch"], capture_output=True, text=True, cwd=ROOT
    )
    found = re.search(r"^Available versions: (.+)$", listing.stdout, re.MULTILINE)
    if found is None:
        raise SystemExit(f"dev.py: pip lists no torch versions ({listing.stderr.strip()[-300:]}): name them")
    return [v for v in (part.strip() for part in found.group(1).split(",")) if _RELEASE.match(v)]


def compat_versions(asked: list[str], available: list[str], floor: str) -> list[str]:
    """The releases to run. By default the floor's first release (what ``torch>=X.Y`` admits
    first), then the newest release of every minor version above it. Asked: ``2.8.0`` as given
    (a local build too, ``2.13.0+cpu``), ``2.8`` its newest release, ``floor``, ``newest``."""
    by_minor: dict[tuple[int, int], list[str]] = {}
    for version in available:  # newest first
        by_minor.setdefault(_minor(version), []).append(version)
    if _minor(floor) not in by_minor:
        raise SystemExit(f"dev.py: pip's index has no torch {floor}.x for this Python")
    first = by_minor[_minor(floor)][-1]
    if not asked:
        return [first] + [releases[0] for key, releases in sorted(by_minor.items()) if key > _minor(floor)]
    chosen = []
    for version in asked:
        if version in ("floor", "newest"):
            version = first if version == "floor" else available[0]
        elif re.fullmatch(r"\d+\.\d+", version):
            if _minor(version) not in by_minor:
                raise SystemExit(f"dev.py: pip's index has no torch {version}.x for this Python")
            version = by_minor[_minor(version)][0]
        if version not in chosen:
            chosen.append(version)
    return chosen


def venv_name(python_version: str, torch_version: str) -> str:
    return f"py{python_version}-torch{torch_version}"


def _pip(python: Path, *args: str, log: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([python, "-m", "pip", *args], capture_output=True, text=True, cwd=ROOT)
    with log.open("a") as out:
        out.write(f"$ pip {' '.join(args)}\n{done.stdout}{done.stderr}\n")
    return done


def why_pip_failed(output: str) -> str:
    """pip's reason in a line: the project's own torch requirement, a constraint of pip's
    configuration (a machine's pip.conf may cap torch), or no wheel for this Python."""
    found = re.search(r"(\S+ \S+ depends on torch\S*)", output)
    if found is not None:
        return f"pip refuses: {found.group(1)}"
    found = re.search(r"The user requested \(constraint\) (torch\S*)", output)
    if found is not None:
        return f"pip refuses: its configured constraints allow only {found.group(1)}"
    if "No matching distribution" in output:
        return "pip finds no wheel of it for this Python"
    lines = [line for line in output.splitlines() if line.startswith("ERROR")]
    return lines[-1] if lines else "pip failed"


# A CUDA build of torch with its nvidia libraries is 5 to 7 GB installed (2.6.0 to 2.14.1); pip
# unpacks beside what it downloads, so installing one needs more free than it keeps. Below this a
# run would die mid-install with ENOSPC, after minutes, and leave a half-made environment.
CUDA_TORCH_FREE_BYTES = 9 * 2**30
CUDA_TORCH_KEPT_BYTES = 7 * 2**30
CPU_TORCH_FREE_BYTES = 2 * 2**30
CPU_TORCH_KEPT_BYTES = 1 * 2**30


def _torch_bytes(torch_version: str) -> tuple[int, int]:
    """(free disk installing it needs, disk its environment keeps) of one torch build."""
    if "+cpu" in torch_version:
        return CPU_TORCH_FREE_BYTES, CPU_TORCH_KEPT_BYTES
    return CUDA_TORCH_FREE_BYTES, CUDA_TORCH_KEPT_BYTES


def _gb(size: int) -> str:
    return f"{size / 2**30:.1f} GB"


def _disk_short_of(torch_version: str) -> str:
    """Why ``.venvs/`` has too little free disk for this torch, or ""."""
    needed = _torch_bytes(torch_version)[0]
    free = shutil.disk_usage(VENVS).free
    if free >= needed:
        return ""
    return (
        f"needs {needed / 2**30:.0f} GB free disk for torch {torch_version}, {free / 2**30:.1f} GB free:"
        f" remove environments of {VENVS.name}/ that are no longer needed"
    )


def disk_short_of_run(environments: list[tuple[str, str]]) -> str:
    """Why the disk cannot hold the environments of a whole run, or "": ``environments`` are
    (python version, torch version) pairs; those already made cost nothing. Each one made keeps
    its torch, and the last one made needs its install's room on top, so the run needs what they
    all keep plus the largest room an install takes beyond what it keeps."""
    missing = [(py, torch) for py, torch in environments if not (VENVS / venv_name(py, torch) / TORCH_READY).exists()]
    if not missing:
        return ""
    sizes = [_torch_bytes(torch) for _, torch in missing]
    needed = sum(kept for _, kept in sizes) + max(free - kept for free, kept in sizes)
    free = shutil.disk_usage(VENVS).free
    if free >= needed:
        return ""
    cuda = sum("+cpu" not in torch for _, torch in missing)
    made = ", ".join(venv_name(py, torch) for py, torch in missing)
    return (
        f"dev.py: compat needs about {_gb(needed)} of free disk for the {len(missing)} environments it would make"
        f" ({made}; {cuda} of them a CUDA build of torch, 5 to 7 GB each installed, which pip's index gives"
        f" also to a machine without a GPU), and {VENVS}/ has {_gb(free)} free. Run fewer versions"
        " (python3 dev.py compat floor, or compat 2.8 newest), or free disk: remove environments of"
        f" {VENVS.name}/ that are no longer needed."
    )


def compat_environment(python: Path, torch_version: str) -> tuple[Path | None, str]:
    """The environment of one torch for ``python``: made, torch in it, the project installed
    (again when pyproject.toml or the checkout changed). (its python, "") or (None, why not)."""
    env = VENVS / venv_name(_python_version(python), torch_version)
    log = env.with_name(env.name + ".log")
    env_python = _python_of(env)
    if not env_python.exists():
        _say(f"creating {env}")
        subprocess.run([python, "-m", "venv", env], check=True)
    if not (env / TORCH_READY).exists():
        short = _disk_short_of(torch_version)
        if short:
            shutil.rmtree(env)
            return None, short
        _say(f"installing torch=={torch_version} into {env.name} (pip's index; log: {log.name})")
        # No wheel cache: it would hold a second copy of the GBs the environment already holds
        done = _pip(env_python, "install", "--no-cache-dir", f"torch=={torch_version}", log=log)
        if done.returncode:
            shutil.rmtree(env)  # an environment without its torch is of no use; the log stays
            return None, why_pip_failed(done.stdout + done.stderr)
        (env / TORCH_READY).touch()
    stamp = env / ".kernelprof-installed"
    if not (stamp.exists() and stamp.read_text() == _project_stamp()):
        pin = env / "torch-pin.txt"  # installing the project must never swap the torch under test
        probe = "import importlib.metadata as m; print(m.version('torch'))"  # as pip knows it: no +cu124
        installed = subprocess.run([env_python, "-c", probe], capture_output=True)
        pin.write_text(f"torch=={installed.stdout.decode().strip()}\n")
        done = _pip(env_python, "install", "-c", str(pin), "-e", ".[test]", log=log)
        if done.returncode:
            return None, why_pip_failed(done.stdout + done.stderr)
        stamp.write_text(_project_stamp())
    return env_python, ""


def junit_counts(path: Path) -> tuple[int, int, int]:
    """(passed, failed, skipped) of a JUnit XML file; errors count as failed."""
    suites = ET.parse(path).getroot()
    totals = [0, 0, 0, 0]
    for suite in suites.iter("testsuite"):
        for i, key in enumerate(("tests", "failures", "errors", "skipped")):
            totals[i] += int(suite.get(key, 0))
    tests, failures, errors, skipped = totals
    return tests - failures - errors - skipped, failures + errors, skipped


def report_line(torch_version: str, python: str, counts: tuple[int, int, int] | None, seconds: float, note: str) -> str:
    """One row of the matrix, a Markdown table row (docs/versions.md holds the last table)."""
    if counts is None:
        return f"| {torch_version} | {python} | - | - | - | - | {note} |"
    minutes, rest = divmod(round(seconds), 60)
    return f"| {torch_version} | {python} | {counts[0]} | {counts[1]} | {counts[2]} | {minutes}m{rest:02d}s | {note} |"


REPORT_HEAD = "| torch | python | passed | failed | skipped | time | note |\n|---|---|---|---|---|---|---|"


def _refusal(log: str) -> str:
    lines = [line.removeprefix("ERROR: ") for line in log.splitlines() if line.startswith("ERROR: ")]
    return lines[-1] if lines else "the run wrote no results"


def compat_run(env_python: Path, pytest_args: list[str], log: Path) -> tuple[tuple[int, int, int] | None, float, str]:
    """The suite in one environment, PYTHONPATH cleared (the environment's own install runs)."""
    xml = log.with_suffix(".xml")
    xml.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    start = time.perf_counter()
    with log.open("w") as out:
        command = [env_python, "-m", "pytest", *COMPAT_PYTEST, f"--junitxml={xml}", *pytest_args]
        subprocess.run(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - start
    if not xml.exists():
        return None, seconds, _refusal(log.read_text())
    return junit_counts(xml), seconds, ""


def compat(argv: list[str]) -> int:
    args, pytest_args = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    pythons: list[str | None] = []
    asked: list[str] = []
    it = iter(args)
    for arg in it:
        if arg == "--python":
            pythons.append(next(it, None) or "")
        elif arg.startswith("--python="):
            pythons.append(arg.split("=", 1)[1])
        else:
            asked.append(arg)
    if any(p == "" for p in pythons):
        raise SystemExit("dev.py: --python takes a version (3.10) or an interpreter's path")
    runs = []
    for wanted in pythons or [None]:
        python = _interpreter(wanted)
        python_version = _python_version(python)
        available = _index_versions(python)
        runs += [(python, python_version, version) for version in compat_versions(asked, available, _floor())]
    VENVS.mkdir(exist_ok=True)
    short = disk_short_of_run([(python_version, version) for _, python_version, version in runs])
    if short:  # before anything is made: not after hours, with half the matrix installed
        print(short, file=sys.stderr)
        return 2
    rows = []
    failed = False
    for python, python_version, version in runs:
        env_python, why = compat_environment(python, version)
        if env_python is None:
            rows.append(report_line(version, python_version, None, 0, why))
            failed = True
        else:
            log = VENVS / f"{venv_name(python_version, version)}.pytest.log"
            _say(f"torch {version}, Python {python_version}: the suite (log: {log})")
            counts, seconds, note = compat_run(env_python, pytest_args, log)
            rows.append(report_line(version, python_version, counts, seconds, note))
            failed = failed or counts is None or counts[1] > 0
        print(rows[-1], flush=True)
    print(f"\n{REPORT_HEAD}\n" + "\n".join(rows))
    return 1 if failed else 0


USAGE = (
    f"usage: python3 dev.py {{{','.join(COMMANDS)}}} [--system] [pytest arguments...]\n"
    "       python3 dev.py compat [VERSIONS...] [--python X.Y] [-- pytest arguments...]"
)


def main(argv: list[str]) -> int:
    if argv[:1] == ["compat"]:
        return compat(argv[1:])
    system = "--system" in argv
    args = [a for a in argv if a != "--system"]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        print(USAGE)
        return 0 if args else 2
    if args[0] not in COMMANDS:
        known = ", ".join([*COMMANDS, "compat"])
        print(f"dev.py: unknown command {args[0]!r} (the commands: {known})\n{USAGE}", file=sys.stderr)
        return 2
    command, extra = args[0], args[1:]
    if system and importlib.util.find_spec("torch") is None:
        # The suite's conftest and the examples import torch: say so, not a ModuleNotFoundError from pytest.
        print(
            f"dev.py: --system runs the {command} with this interpreter ({sys.executable}), which has no torch: "
            "install the project's test requirements into it, or leave out --system to use the project's .venv",
            file=sys.stderr,
        )
        return 2
    python = Path(sys.executable) if system else _environment()
    say_which_package(python)
    # Timed without the environment's setup: issue 31's bound (90 s on a 2-core machine) is the suite's.
    start = time.perf_counter()
    code = _run(python, "-m", "pytest", *COMMANDS[command], *extra)
    _say(f"{command}: {time.perf_counter() - start:.1f} s wall, {os.cpu_count()} CPU cores")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
