"""``assert a.kernels.names == b.kernels.names`` explains itself: the names as the kernel table
shows them, where the lists part, what each has that the other has not; whole, so that neither
the log nor the job summary (which no -v reaches) points at -v."""

from __future__ import annotations

import re

import pytest

from tests.helpers import DATA, github_step_summary

SUITE = f"""
from pathlib import Path
from pytest_kernelprof import load_trace

DATA = Path({str(DATA)!r})


def test_names(kernelprof):
    a = kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz")
    b = kernelprof.load_trace(DATA / "h200_geglu_compiled.json.gz")
    assert a.kernels.names == b.kernels.names
"""

EXPLAINED = [
    "*assert [[]5 kernel names[]] == [[]4 kernel names[]]",
    "*the kernel names differ from #1: 5 on the left, 4 on the right (- left, + right)",
    "*  nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
    "*- at::native::vectorized_elementwise_kernel<8, GeluCUDAKernelImpl(...), array<char[*], 2ul> >",
    "*  nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
    "*- at::native::vectorized_elementwise_kernel<8, BinaryFunctor<*MulFunctor<...> >, array<..., 3ul> >",
    "*+ triton_poi_fused__unsafe_view_gelu_mul_0",
    "*  nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT",
]


@pytest.mark.parametrize("options", [[], ["-vv"]], ids=["default", "-vv"])
def test_a_comparison_of_kernel_names_is_explained_by_the_plugin(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, options: list[str]
) -> None:
    summary = github_step_summary(cpu_pytester.path, monkeypatch)
    cpu_pytester.makepyfile(test_s=SUITE)
    result = cpu_pytester.runpytest(*options)
    result.assert_outcomes(failed=1)
    log = result.stdout.str()
    assert "Use -v" not in log
    assert "void at::native" not in log
    result.stdout.fnmatch_lines(EXPLAINED[:2])
    text = summary.read_text()
    assert "-v" not in re.sub(r"kernelprof profile.*", "", text, flags=re.S)
    assert "void at::native" not in text
    assert "failed (kernel assertion)" in text
    pytest.LineMatcher(text.splitlines()).fnmatch_lines(EXPLAINED, consecutive=True)
