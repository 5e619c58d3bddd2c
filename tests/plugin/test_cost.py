"""What the plugin costs where it is not used: a session that uses neither the fixtures nor the
gpu marker imports no torch and no profile model, says nothing, and imports the CI outputs only
where they are asked for. Where tests use the plugin, the GPU facts are told (below "collected",
or at the end under xdist): tests/plugin/test_gpu_skips.py and tests/plugin/test_gpus.py."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_kernelprof

LIGHT = {
    "pytest_kernelprof",
    "pytest_kernelprof.options",
    "pytest_kernelprof.errors",
    "pytest_kernelprof.plugin.fixtures",
    "pytest_kernelprof.plugin.gpus",
    "pytest_kernelprof.plugin",
    "pytest_kernelprof.plugin.assertions",
    "pytest_kernelprof.plugin.books",
    "pytest_kernelprof.plugin.hooks",
    "pytest_kernelprof.plugin.settings",
    "pytest_kernelprof.plugin.worker_gpus",
}


def test_loading_the_plugin_imports_neither_torch_nor_the_model() -> None:
    code = (
        "import sys, pytest_kernelprof.plugin\n"
        "print(sorted(m for m in sys.modules if m.startswith('pytest_kernelprof')))\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    modules, torch_loaded = out.splitlines()
    assert set(ast.literal_eval(modules)) == LIGHT
    assert torch_loaded == "False"


def test_the_package_exports_what_it_declares_for_type_checkers() -> None:
    source = Path(pytest_kernelprof.__file__).read_text(encoding="utf-8")
    checking = next(n for n in ast.parse(source).body if isinstance(n, ast.If))  # the TYPE_CHECKING block
    declared = {
        alias.name: node.module for node in checking.body if isinstance(node, ast.ImportFrom) for alias in node.names
    }
    assert set(declared) == set(pytest_kernelprof.__all__)
    assert declared == pytest_kernelprof._HOMES  # the run-time table names the same modules
    for name, module in declared.items():
        source_module = importlib.import_module(f"pytest_kernelprof.{module}")
        assert getattr(pytest_kernelprof, name) is getattr(source_module, name), name
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        pytest_kernelprof.nothing  # type: ignore[attr-defined]  # noqa: B018


def test_a_session_that_does_not_use_the_plugin_pays_for_no_torch(fresh_pytester: pytest.Pytester) -> None:
    pytester = fresh_pytester
    pytester.makepyfile(
        test_plain="""
        import sys

        def test_plain():
            assert "torch" not in sys.modules
            assert "pytest_kernelprof.model" not in sys.modules
            # The CI outputs (job summary, annotations, JUnit properties, timeline pages):
            # none asked for, none imported.
            reports = ("plugin.ci", "reports.summary", "reports.annotations", "reports.junit", "reports.records")
            assert not [m for m in reports if f"pytest_kernelprof.{m}" in sys.modules]

        def test_a_failing_assert_is_left_to_pytest():
            assert [1, 2] == [1, 3]
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.no_fnmatch_line("kernelprof*")
    result.stdout.fnmatch_lines(["E         At index 1 diff: 2 != 3"])


def test_the_ci_outputs_are_imported_where_asked_for(fresh_pytester: pytest.Pytester) -> None:
    pytester = fresh_pytester
    pytester.makepyfile(
        test_plain="""
        import sys

        def test_plain():
            assert "pytest_kernelprof.plugin.ci" in sys.modules
            assert "pytest_kernelprof.model" not in sys.modules
            assert "torch" not in sys.modules
        """
    )
    pytester.runpytest("--junitxml", "out.xml").assert_outcomes(passed=1)
    pytester.runpytest("--kernelprof-summary", "summary.md").assert_outcomes(passed=1)
    # Nothing to say, but the file the user named is written: a CI step finds it.
    assert (pytester.path / "summary.md").read_text().endswith("No profile failures: no test took a profile.\n")
