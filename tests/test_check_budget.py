"""benchmarks/check_budget.py: a budget is met by the ratio, never because ours was faster."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parent.parent / "benchmarks" / "check_budget.py"


def _check(
    tmp_path: Path, medians: dict[str, float], *, gpu: bool, device: str | None = None
) -> subprocess.CompletedProcess[str]:
    extra = {"device": device} if device else {}
    report = {
        "machine_info": {"kernelprof": {"gpu": "NVIDIA H200" if gpu else None}},
        "benchmarks": [
            {"name": name, "stats": {"median": median}, "extra_info": extra} for name, median in medians.items()
        ],
    }
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    return subprocess.run([sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True, check=False)


def test_a_faster_build_short_of_its_ratio_is_missed(tmp_path: Path) -> None:
    # 6x faster than prof.events(), against a 15x target: missed, though ours is the faster.
    result = _check(tmp_path, {"test_build[1k]": 0.002, "test_prof_events[1k]": 0.012}, gpu=True)
    assert result.returncode == 1, result.stdout
    assert "MISSED   build vs prof.events(), 1k events: 6.00 (budget >= 15.00)" in result.stdout
    result = _check(tmp_path, {"test_build[1k]": 0.0007, "test_prof_events[1k]": 0.012}, gpu=True)
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize(("with_plugin", "met"), [(0.55, True), (0.65, False)])
def test_an_absolute_allowance_applies_only_where_a_budget_has_one(
    tmp_path: Path, with_plugin: float, met: bool
) -> None:
    # The plugin-unused budget: at most 1.1x, or at most 0.1 s slower.
    medians = {"test_pytest_run[with_plugin]": with_plugin, "test_pytest_run[without_plugin]": 0.46}
    result = _check(tmp_path, medians, gpu=True)
    assert result.returncode == (0 if met else 1), result.stdout


@pytest.mark.parametrize(("device", "returncode"), [("cuda", 1), ("cpu", 0)])
def test_a_gpu_run_gets_the_gpu_budgets_without_the_plugins_machine_info(
    tmp_path: Path, device: str, returncode: int
) -> None:
    # 10x faster than prof.events(): missed against the GPU's 15x, met against CPU-only 8x.
    medians = {"test_build[1k]": 0.001, "test_prof_events[1k]": 0.010}
    result = _check(tmp_path, medians, gpu=False, device=device)
    assert result.returncode == returncode, result.stdout


def test_a_file_without_budgeted_benchmarks_exits_2(tmp_path: Path) -> None:
    assert _check(tmp_path, {"test_other": 1.0}, gpu=False).returncode == 2


def test_budgets_name_benchmarks_that_exist() -> None:
    budgets = runpy.run_path(str(SCRIPT))["BUDGETS"]
    bench = "".join(p.read_text(encoding="utf-8") for p in SCRIPT.parent.glob("test_bench_*.py"))
    for budget in budgets:
        for name in (budget.ours, budget.theirs):
            assert f"def {name.split('[')[0]}(" in bench, name


def test_every_relaxed_cpu_budget_names_a_budget() -> None:
    # A misspelt key would leave its budget at the GPU target on CI, or relax nothing.
    script = runpy.run_path(str(SCRIPT))
    names = {budget.what for budget in script["BUDGETS"]}
    assert set(script["CPU_ONLY_RELAXED"]) <= names
