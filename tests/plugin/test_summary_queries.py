"""Every failure a profile query raises is in the job summary, whole, under a category its type
gives: ``one()`` bare and inside ``assert``, with the fixture and without; an op lookup; a dtype the
query does not know; a profile with no GPU activity; besides the comparisons on kernels, ops and a
profile's own numbers. The entries come worst category first, then by file and line.

The trial's run (a new user's, on the recorded H200 traces): GitHub Actions without workers, and
``CI=true`` with two xdist workers. Each run reads the same record, so the two summaries are equal.
"""

from __future__ import annotations

import re

import pytest

from tests.helpers import DATA

# What a failed query on a recorded profile of three calls says of its table's times.
MEDIANS = " (times: each kernel's median over the 3 calls)"

SUITE = f"""
from pathlib import Path

from pytest_kernelprof import load_trace


DATA = Path({str(DATA)!r})
COMPILED = DATA / "h200_geglu_compiled.json.gz"


def test_names_equal():
    assert load_trace(DATA / "h200_linear_eager.json.gz").kernels == ["nvjet_sm90_tst_foo"]


def test_one_bare():
    load_trace(COMPILED).kernels.one(kind="gemm")


def test_one_in_assert(kernelprof):
    assert kernelprof.load_trace(COMPILED).kernels.one(kind="gemm")


def test_one_named(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz")
    prof.kernels.one("triton_poi_fused_*gelu*mul*")


def test_op_missing():
    assert load_trace(COMPILED).ops["aten::gelu"].count == 1


def test_op_count():
    assert load_trace(DATA / "h200_geglu_eager.json.gz").ops["aten::gelu"].count == 2


def test_bad_dtype():
    assert load_trace(COMPILED).kernels.count(kind="gemm", dtype="float32") == 0


def test_no_gpu_activity():
    assert len(load_trace(DATA / "cpu_torch2.13.0_calls.json.gz").kernels) == 0


def test_launches():
    assert load_trace(DATA / "h200_decode_graphs.json.gz").launches == 0


def test_outputs_only():
    load_trace(COMPILED)
    assert [1, 2] == [2, 1]


def test_all_dtypes():
    prof = load_trace(DATA / "h200_bf16_mlp_fp32_linear.json.gz")
    assert all(k.dtype == "bf16" for k in prof.kernels.of_kind("gemm"))
"""


def _line(test: str) -> int:
    """The line of the test's statement that fails: the last of its body."""
    lines = SUITE.strip().splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith(f"def {test}("))
    body = [n for n in range(start + 1, len(lines)) if lines[n].startswith("    ")]
    return max(n for n in body if all(lines[m].startswith("    ") for m in range(start + 1, n + 1))) + 1


# (test, what the summary says it failed on), in the order the summary lists them.
EXPECTED = [
    ("test_no_gpu_activity", "failed (no GPU activity)"),
    ("test_names_equal", "failed (kernel assertion)"),
    ("test_one_bare", "failed (kernel assertion)"),
    ("test_one_in_assert", "failed (kernel assertion)"),
    ("test_one_named", "failed (kernel assertion)"),
    ("test_all_dtypes", "failed (kernel assertion)"),  # a part of the profile, read in a generator
    ("test_op_count", "failed (op assertion)"),
    ("test_op_missing", "failed (op lookup)"),
    ("test_launches", "failed (profile assertion)"),
    ("test_bad_dtype", "failed (invalid profile query)"),
]
HEADING = (
    "### 10 tests failed: no GPU activity (1), kernel assertion (5), op assertion (1), op lookup (1), "
    "profile assertion (1), invalid profile query (1)"
)


def _entries(summary: str) -> list[tuple[str, str, int, str]]:
    """(test, what it failed on, line, message) of each failure the summary lists, in order."""
    found = re.findall(
        r"<details><summary><code>test_q\.py::(\w+)</code> (.*?) at <code>test_q\.py:(\d+)</code></summary>\n\n"
        r"```text\n(.*?)\n```\n\n</details>",
        summary,
        re.S,
    )
    return [(test, what, int(line), message) for test, what, line, message in found]


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    for name in ("CI", "BUILD_NUMBER", "GITHUB_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    pytester.makepyfile(test_q=SUITE)
    return pytester


@pytest.mark.parametrize(("options", "ci"), [([], False), (["-n", "2"], True)], ids=["one process", "CI=true -n 2"])
def test_every_failure_of_a_profile_query_is_in_the_summary_by_its_type(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, options: list[str], ci: bool
) -> None:
    if options:
        pytest.importorskip("xdist")
    if ci:
        monkeypatch.setenv("CI", "true")
    summary_file = project.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    result = project.runpytest(*options)
    result.assert_outcomes(failed=len(EXPECTED) + 1)
    summary = summary_file.read_text()
    assert HEADING in summary.splitlines()
    entries = _entries(summary)
    assert [(test, what) for test, what, _, _ in entries] == EXPECTED
    assert all(line == _line(test) for test, _, line, _ in entries)
    messages = {test: message.splitlines() for test, _, _, message in entries}
    # one(): its whole message, the table with every kernel (the GEMMs marked) and no pytest frame.
    for test in ("test_one_bare", "test_one_in_assert"):
        assert (
            messages[test][0]
            == f"expected exactly one kernel with kind='gemm', matched 3 of 4 kernels: #0, #1, #3{MEDIANS}:"
        )
        assert sum(line.startswith("*") for line in messages[test]) == 3
        # The table's header and its four kernels, then the profile's section: which trace on
        # which card the table is of, and the call's figures (a trial could not tell).
        section = messages[test].index("kernelprof profile 1 of 1:")
        assert messages[test][section - 1] == ""
        assert section == 7
        assert messages[test][section + 1].startswith("KernelProfile from ")
        assert messages[test][section + 2] == "(its kernel table is shown above, with the failure)"
    assert messages["test_one_named"][0] == (
        "expected exactly one kernel with name matching 'triton_poi_fused_*gelu*mul*', "
        f"matched 0 of 5 kernels{MEDIANS}:"
    )
    assert messages["test_one_named"].index("kernelprof profile 1 of 1:") == 8  # the header, five kernels, a blank
    assert messages["test_op_missing"] == [
        "op 'aten::gelu' did not run in the 3 profiled calls; nearest: triton_poi_fused__unsafe_view_gelu_mul_0 "
        "(Inductor's range: a kernel's launch, not an op). torch.compile ran this code: the ops Inductor compiled "
        "are its kernels, not ops (a Triton kernel's name lists the ops fused into it); ask prof.kernels. "
        "To assert that it does not run: assert 'aten::gelu' not in prof.ops"
    ]
    assert messages["test_bad_dtype"][0].startswith("unknown dtype 'float32' (did you mean 'fp32'?)")
    assert "cpu_torch2.13.0_calls.json.gz recorded no GPU activity: it holds no" in messages["test_no_gpu_activity"][0]
    assert "test_outputs_only" not in summary  # it profiled, and failed on something else
