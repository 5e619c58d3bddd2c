"""A failing assert on a profile's values prints their one-line reprs in its "where" lines, while
``print()`` in the test gives their tables: ``__str__`` is the table, ``__repr__`` stays one line."""

from __future__ import annotations

import pytest

from tests.helpers import DATA, failure_sections

INNER = f"""
import pytest_kernelprof as kp


def test_count():
    prof = kp.load_trace({str(DATA / "h200_linear_eager.json.gz")!r})
    print(prof.kernels)
    assert len(prof.kernels) == 3


def test_cpu_count():
    prof = kp.load_trace({str(DATA / "cpu_torch2.13.0_calls.json.gz")!r})
    print(prof.calls[0].kernels)
    assert len(prof.ops) == 3
"""


def test_a_failed_asserts_where_lines_are_reprs_and_print_gives_the_table(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_printed=INNER)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    sections = failure_sections(result)
    result.stdout.fnmatch_lines(
        [
            "E       *assert 1 == 3",
            "E        +  where 1 = len(KernelList(1 kernel))",
            "E        +    where KernelList(1 kernel) = KernelProfile('*h200_linear_eager.json.gz' "
            "on NVIDIA H200 (sm90): 1 kernel per call, 3 calls).kernels",
            "*- Captured stdout call -*",
            "#  kind *  name",
            "0  gemm *nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT",
        ]
    )
    cpu = sections["test_cpu_count"].lines
    assert "E        +  where 17 = len(OpTable(17 ops))" in cpu
    assert [line for line in cpu if line.startswith("E        +    where OpTable(17 ops) = KernelProfile(")] == [
        "E        +    where OpTable(17 ops) = KernelProfile('"
        f"{DATA / 'cpu_torch2.13.0_calls.json.gz'}', CPU only (no GPU activity recorded), 3 calls).ops"
    ]
    # print() of an unmeasured list says so, and does not raise.
    assert "KernelList(unmeasured: no GPU activity recorded)" in cpu
    # No repr spills an escaped newline into a line of the failures.
    assert not [line for line in result.outlines if line.startswith("E ") and "\\n" in line]
