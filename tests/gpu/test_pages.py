"""The test files the README and the docs show, run on a real GPU: on a CPU machine their GPU tests
skip (tests/plugin/test_docs.py runs them there), so only here do the quick start's claims (one
GEMM with the bias fused, one fused gelu*mul kernel, no fp32 kernel) meet a GPU. None may skip."""

from __future__ import annotations

import re

import pytest

from tests.plugin.test_docs import TEST_FILES

pytestmark = pytest.mark.gpu


def test_the_pages_test_files_pass_on_the_gpu(pytester: pytest.Pytester) -> None:
    files = {
        "test_page_" + re.sub(r"\W", "_", block.id.removesuffix(".md").replace(".md:", "_")): block.code
        for block in TEST_FILES
    }
    assert any(name.startswith("test_page_README") for name in files)
    pytester.makepyfile(**files)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:randomly", "-rfEs", "--kernelprof-require-gpu"
    )
    outcomes = result.parseoutcomes()
    bad = {key: outcomes[key] for key in ("failed", "error", "errors", "skipped") if outcomes.get(key)}
    assert not bad, result.stdout.str()
    assert outcomes.get("passed", 0) >= len(files), result.stdout.str()
