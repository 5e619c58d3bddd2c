"""What installing the plugin costs a pytest run that never uses it (issue 13).

    python -m pytest benchmarks/test_bench_plugin_cost.py --benchmark-json=bench.json
    python benchmarks/check_budget.py bench.json

A one-test project that uses neither the fixtures nor the ``gpu`` marker, run by pytest in
a fresh process with the plugin and with ``-p no:kernelprof``, in turns (``interleave`` in
conftest.py): the budget is the median of the per-round ratios. Loading the plugin must not import torch nor
the profile model; what is left is the plugin's own modules and its options.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ONE_TEST = "def test_one():\n    assert 1 + 1 == 2\n"


def _env(project: Path) -> dict[str, str]:
    """As a user's pytest starts: with its bytecode cached. Where PYTHONDONTWRITEBYTECODE is set
    (as on the shared dev VM), every start compiles and assertion-rewrites the plugin's modules
    again, about 0.5 s there that users do not pay; the cache goes to the project's folder."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(project / "pycache")
    return env


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("one_test")
    (path / "pytest.ini").write_text("[pytest]\n")
    (path / "test_one.py").write_text(ONE_TEST)
    return path


def _pytest(project: Path, *args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=_env(project),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_pytest_run_cost(interleave: Any, project: Path) -> None:
    kinds: dict[str, Callable[[], Any]] = {
        "with the plugin": lambda: _pytest(project),
        "-p no:kernelprof": lambda: _pytest(project, "-p", "no:kernelprof"),
    }
    interleave(kinds, rounds=8, collect=False)
