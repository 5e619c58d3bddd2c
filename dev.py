#!/usr/bin/env python3
"""The README's two commands: ``python3 dev.py examples`` and ``python3 dev.py tests``.

Each creates (or reuses) a virtual environment in ``.venv``, installs what the project needs
into it, and runs pytest there; arguments after the command go to pytest. Needs only Python
3.10+ with ``venv`` and ``pip``.

torch is chosen as a newcomer's machine needs it: a torch already in the environment is kept
(a CUDA build stays a CUDA build); otherwise a machine with an NVIDIA GPU gets PyPI's default
build and one without gets the CPU build, because a plain ``torch`` requirement would pull a
multi-GB CUDA build onto a machine that cannot use it. ``KERNELPROF_TORCH`` (a pip requirement
such as ``torch==2.11.0``) overrides the choice; ``KERNELPROF_VENV`` names another environment
directory; ``--system`` uses the running interpreter and installs nothing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CPU_TORCH = "torch==2.13.0+cpu"
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
COMMANDS = {
    # testpaths in pyproject.toml: tests/; on every core (pytest-xdist is in the test extra).
    # worksteal: the pytester tests are few and long, the unit tests many and short, and xdist's
    # default hands them out in blocks, so one worker ran every pytester test while the other
    # sat idle (119 s against 89 s for the suite on a 2-core machine).
    "tests": ["-n", "auto", "--dist", "worksteal"],
    "examples": ["examples", "-rs"],
}


def _say(message: str) -> None:
    print(f"dev.py: {message}", flush=True)


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
        _check(*pip, wanted)
    elif _has_gpu():
        _say("NVIDIA GPU found: installing PyPI's torch (a CUDA build)")
        _check(*pip, "torch")
    else:
        # Where pip's own sources hold the CPU build (a local wheel cache, a mirror), take it
        # from there; otherwise from PyTorch's CPU index.
        _say(f"no GPU: installing the CPU build of torch ({CPU_TORCH})")
        if _run(*pip, CPU_TORCH) != 0:
            _check(*pip, CPU_TORCH, "--extra-index-url", CPU_TORCH_INDEX)


def _project_stamp() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def _environment() -> Path:
    env = Path(os.environ.get("KERNELPROF_VENV", ROOT / ".venv"))
    python = _python_of(env)
    if not python.exists():
        _say(f"creating {env}")
        venv.create(env, with_pip=True)
    stamp = env / ".kernelprof-installed"
    if stamp.exists() and stamp.read_text() == _project_stamp():
        return python  # installed, and pyproject.toml has not changed since
    if not _has_torch(python):
        _install_torch(python)
    _say("installing the project with its test extra")
    _check(python, "-m", "pip", "install", "-q", "-e", ".[test]")
    stamp.write_text(_project_stamp())
    return python


def main(argv: list[str]) -> int:
    system = "--system" in argv
    args = [a for a in argv if a != "--system"]
    if not args or args[0] not in COMMANDS:
        print(__doc__)
        print(f"usage: python3 dev.py {{{','.join(COMMANDS)}}} [--system] [pytest arguments...]")
        return 2
    command, extra = args[0], args[1:]
    python = Path(sys.executable) if system else _environment()
    return _run(python, "-m", "pytest", *COMMANDS[command], *extra)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
