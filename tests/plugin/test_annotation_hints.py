"""A failed kernel query's annotation keeps the hints below its head (the nearest names, the
kernels of unknown kind or dtype that could be it), as a baseline's keeps its update command:
they say what to do, and the annotation is what a pull request's reader sees (a user's trial)."""

from __future__ import annotations

from urllib.parse import unquote

import pytest

from tests.helpers import DATA

SUITE = f"""
from pathlib import Path

DATA = Path({str(DATA)!r})


def test_a_name(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_geglu_compiled.json.gz")
    assert prof.kernels.count("triton_poi_fused_gelu*", dtype="bf16") == 1


def test_a_dtype(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_geglu_compiled.json.gz")
    assert prof.kernels.count(kind="pointwise", dtype="bf16") == 1
"""


def test_a_failed_counts_annotation_keeps_its_hints(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(cpu_pytester.path / "summary.md"))
    cpu_pytester.makepyfile(test_s=SUITE)
    result = cpu_pytester.runpytest("-W", "ignore::UserWarning")
    result.assert_outcomes(failed=2)
    errors = [unquote(line.split("::", 2)[2]).splitlines() for line in result.outlines if line.startswith("::error ")]
    assert [lines[0] for lines in errors] == ["test_s.py::test_a_name", "test_s.py::test_a_dtype"]
    name, dtype = errors
    assert name[3:] == ["  nearest names: 'triton_poi_fused__unsafe_view_gelu_mul_0'", "(+5 lines in the job log)"]
    # Inductor's kernel, from a trace recorded without its dtype: no dtype taught by name (it would pin it).
    assert dtype[3:] == [
        "  1 kernel of unknown dtype (#2) could be it: record the trace with the plugin",
        "(+5 lines in the job log)",
    ]
