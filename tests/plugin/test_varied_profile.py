"""A failing test on a profile whose calls launched different kernel sequences: the question
about its kernels fails with the calls' counts (no answer for call 0 alone), and the report
still shows the profile, saying the calls differ."""

from __future__ import annotations

import pytest

from tests.helpers import Stream, write

SUITE = """
def test_gemm_count(kernelprof):
    prof = kernelprof.load_trace("trace.json", allow_variation=True)
    assert prof.kernels.count(kind="gemm") == 0

def test_every_call(kernelprof):
    prof = kernelprof.load_trace("trace.json", allow_variation=True)
    assert [c.kernels.count(kind="gemm") for c in prof.calls] == [0, 1, 1]
"""


def test_a_varied_profile_fails_a_kernel_question_and_still_shows_its_table(pytester: pytest.Pytester) -> None:
    s = Stream()
    for i, count in enumerate((0, 1, 1)):
        t = 100.0 * i
        s.step(i, t, 60)
        mm = s.op("aten::mm", t + 1, 50)
        for n in range(count):
            s.launch(mm, "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_NNT", t + 2 + 5 * n)
    write(pytester.path, s)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*VariedProfileError: prof.kernels has no one answer: the profiled calls launched different kernel "
            "sequences (call 0: 0 kernels, call 1: 1 kernel, call 2: 1 kernel; *",
            "*kernelprof profile 1 of 1*",
            "*3 calls, calls launched different kernel sequences*",
        ]
    )
    result.stdout.no_fnmatch_line("*INTERNALERROR*")
