"""What installing the plugin costs a pytest run that never uses it (issue 13).

    python -m pytest benchmarks/test_bench_plugin_cost.py --benchmark-json=bench.json
    python benchmarks/check_budget.py bench.json

A one-test project that uses neither the fixtures nor the ``gpu`` marker, run by pytest in
a fresh process with the plugin and with ``-p no:kernelprof``, in the same benchmark run:
the budget is a ratio of the two medians. Loading the plugin must not import torch nor
the profile model; what is left is the plugin's own modules and its options.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ONE_TEST = "def test_one():\n    assert 1 + 1 == 2\n"


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
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("plugin", ["with_plugin", "without_plugin"])
def test_pytest_run(benchmark: Any, project: Path, plugin: str) -> None:
    args = () if plugin == "with_plugin" else ("-p", "no:kernelprof")
    benchmark.pedantic(_pytest, args=(project, *args), rounds=7, warmup_rounds=1, iterations=1)
