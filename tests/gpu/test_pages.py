"""The test files the README and the docs show, run on a real GPU: on a CPU machine their GPU tests
skip (tests/plugin/test_docs.py runs them there), so only here do the quick start's claims (one
GEMM with the bias fused, one fused gelu*mul kernel, no fp32 kernel) meet a GPU. None may skip."""

from __future__ import annotations

import re

import pytest

from tests.plugin.test_docs import TEST_FILES

pytestmark = pytest.mark.gpu


def test_the_pages_test_files_pass_on_the_gpu(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pytest_benchmark")  # docs/benchmark.md's test needs it; the GPU machine has it
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # or pytest-benchmark switches off
    files = {
        "test_page_" + re.sub(r"\W", "_", block.id.removesuffix(".md").replace(".md:", "_")): block.code
        for block in TEST_FILES
    }
    assert any(name.startswith("test_page_README") for name in files)
    pytester.makepyfile(**files)
    # pytest-benchmark named again: the suite's inner runs leave it out (tests/conftest.py).
    args = ("-p", "no:cacheprovider", "-p", "no:randomly", "-p", "benchmark", "-rfEs", "--kernelprof-require-gpu")
    # As a user starts: the baselines the pages check are recorded first (their first run fails
    # with BaselineMissingError and the command below), then checked.
    pytester.runpytest_subprocess(*args, "--kernelprof-update")
    result = pytester.runpytest_subprocess(*args)
    outcomes = result.parseoutcomes()
    bad = {key: outcomes[key] for key in ("failed", "error", "errors", "skipped") if outcomes.get(key)}
    assert not bad, result.stdout.str()
    assert outcomes.get("passed", 0) >= len(files), result.stdout.str()
