"""One number is one kernel in a whole report: a failed count on a selection of a call's kernels
names and numbers them as the profile's table, and a broken rule's table, do. A trial's report
numbered an MLP's GEMMs 0/1/2 in the failure and 0/3/6 in the profile's table right below it,
where #2 is an fp32 copy; the terminal and the ``--kernelprof-summary`` file both said so."""

from __future__ import annotations

import re

import pytest

from tests.helpers import DATA

MLP = DATA / "h200_bf16_mlp_fp32_linear.json.gz"

SUITE = f"""
import pytest

MLP = {str(MLP)!r}


def test_rule(kernelprof):
    kernelprof.load_trace(MLP)


@pytest.mark.kernelprof_allow("fp32-gemm")
def test_gemms(kernelprof):
    gemms = kernelprof.load_trace(MLP).kernels.of_kind("gemm")
    assert gemms.count(dtype="bf16") == len(gemms)
"""

RULES = """[pytest]
kernelprof_forbid =
    fp32-gemm: kind=gemm dtype=fp32 | bf16 models must not run fp32 GEMMs
"""

# A kernel table's row, as a failure (``E   ``), the summary (indented) or a section shows it:
# its number, its kind, then its dtype among the cells that follow.
ROW = re.compile(r"^(?:E)?\s*\*?(\d+)\s+(gemm|pointwise|reduction)\s.*?\s(bf16|fp32)\s")


def _rows(text: str) -> dict[int, set[tuple[str, str]]]:
    """Each number's (kind, dtype) in every table of ``text``."""
    rows: dict[int, set[tuple[str, str]]] = {}
    for line in text.splitlines():
        found = ROW.match(line)
        if found:
            rows.setdefault(int(found[1]), set()).add((found[2], found[3]))
    return rows


def test_a_kernels_number_is_the_same_in_every_table_of_a_report(cpu_pytester: pytest.Pytester) -> None:
    cpu_pytester.makeini(RULES)
    cpu_pytester.makepyfile(test_n=SUITE)
    summary = cpu_pytester.path / "summary.md"
    result = cpu_pytester.runpytest("-p", "no:randomly", f"--kernelprof-summary={summary}")
    result.assert_outcomes(failed=2)
    matched = "kernels.count(dtype='bf16') matched 2 of 3 kernels: #0, #6 (times: *"
    result.stdout.fnmatch_lines(
        [
            "E       3  gemm  cutlass  fp32 *",  # the rule's table
            f"E         {matched}",
            "E          #  kind  family *",
            "E         [*]0  gemm  nvjet    bf16 *",
            "E          3  gemm  cutlass  fp32 *",
            "E         [*]6  gemm  nvjet    bf16 *",
            "*- kernelprof profile 1 of 1 -*",
        ]
    )
    written = summary.read_text()
    assert f"  {matched[:-4]}" in written
    expected = {0: {("gemm", "bf16")}, 2: {("pointwise", "fp32")}, 3: {("gemm", "fp32")}, 6: {("gemm", "bf16")}}
    for text in (result.stdout.str(), written):
        rows = _rows(text)
        assert {n: rows[n] for n in expected} == expected  # one kernel a number, in every table
        assert all(len(kernels) == 1 for kernels in rows.values())
