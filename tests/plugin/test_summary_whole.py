"""The job summary carries a failure whole: the assertion's head and the whole kernel table or
diff, folded in the failure's ``<details>``, whatever the terminal shows of it. The terminal cuts a
long explanation short (below -vv and off CI: the head, and the rest in a report section that the
summary has not); the summary and the annotations read the explanation the plugin recorded.

Each run is what a GitHub Actions job runs (``GITHUB_ACTIONS=true``, ``GITHUB_STEP_SUMMARY``), with
and without ``CI=true``, -v, -vv and xdist, on recorded H200 traces.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.baseline import baseline_paths, record
from pytest_kernelprof.plugin.ci_facts import MESSAGE_LINES
from tests.helpers import DATA

# What a failed query on a recorded profile of three calls says of its table's times.
MEDIANS = " (times: each kernel's median over the 3 calls)"

SUITE = f"""
from pathlib import Path


DATA = Path({str(DATA)!r})


def test_two_gemms(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz")
    assert prof.kernels.count(kind="gemm") == 2


def test_like_compiled(kernelprof, kernel_baseline):
    assert kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz") == kernel_baseline


def test_resnet_gemms(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_resnet50_forward_cl_modules.json.gz")
    assert prof.kernels.count(kind="gemm") == 0
"""

# test_two_gemms's explanation: its head, then the kernel table with the gemms marked.
GEMMS = [
    "assert 3 == 2",
    f"  kernels.count(kind='gemm') matched 3 of 5 kernels: #0, #2, #4{MEDIANS}",
    "   #  kind       family  dtype  layout  fused ops  median us  launched by  name",
    "  [*]0  gemm       nvjet   bf16   tn      -               56.0  aten::mm     "
    "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
    "   1  pointwise  aten    bf16   -       gelu            32.0  aten::gelu   *GeluCUDAKernelImpl*",
    "  [*]2  gemm       nvjet   bf16   tn      -               56.5  aten::mm     "
    "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
    "   3  pointwise  aten    bf16   -       mul             36.5  aten::mul    *BinaryFunctor*",
    "  [*]4  gemm       nvjet   bf16   tn      -               51.7  aten::mm     "
    "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT",
]
# test_like_compiled's: the baseline's summary, its diff and how to update it.
BASELINE = [
    "assert KernelProfile == kernel_baseline failed:",
    "  kernel signature differs from the baseline sm90/default in *",
    "  kernels per call: 4 -> 5 (launches too)",
    "  count changes: pointwise: 1 -> 2",
    "  --- baseline",
    "  +++ this run",
    "  = gemm/nvjet bf16 tn  nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
    "  - pointwise/inductor ? [[]gelu,mul[]]  triton_poi_fused__unsafe_view_gelu_mul_0",
    "  = gemm/nvjet bf16 tn  nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT",
    "  split: triton_poi_fused__unsafe_view_gelu_mul_0 -> gelu (aten pointwise) + mul (aten pointwise)",
    "  note: pointwise kernels of unknown dtype (?): 1 in the baseline, 0 in this run; left out of the dtype *",
    "  if the change is intended: pytest --kernelprof-update 'test_s.py::test_like_compiled'",
]
BASELINE_LINE = (
    SUITE.strip()
    .splitlines()
    .index('    assert kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz") == kernel_baseline')
    + 1
)
# The line of each statement of SUITE (1-based, as the file is written).
LINES = {line.strip(): number for number, line in enumerate(SUITE.strip().splitlines(), 1)}
POINTER = "section below"  # the terminal's pointer to the rest of a cut explanation


@pytest.fixture
def project(cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    for name in ("CI", "BUILD_NUMBER", "GITHUB_WORKSPACE"):  # pytest never cuts on CI: a run here may be on one
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    module = cpu_pytester.makepyfile(test_s=SUITE)
    path, _ = baseline_paths(module, "test_s.py::test_like_compiled")
    record(path, "sm90", "default", load_trace(DATA / "h200_geglu_compiled.json.gz"))
    return cpu_pytester


def _failure(summary: str, test: str) -> pytest.LineMatcher:
    """The lines of a failed test's ``<details>`` block of the summary, between its fences."""
    found = re.search(
        rf"<details><summary><code>test_s\.py::{test}</code>[^\n]*</summary>\n\n```text\n(.*?)\n```\n\n</details>\n",
        summary,
        re.S,
    )
    assert found, summary
    return pytest.LineMatcher(found[1].splitlines())


@pytest.mark.parametrize(
    ("options", "env"),
    [
        ([], {}),
        (["-v"], {}),
        (["-vv"], {}),
        (["-n", "2"], {}),
        (["-n", "2", "-vv"], {}),
        ([], {"CI": "true"}),
        (["--kernelprof-summary", "out/summary.md"], {}),
    ],
    ids=["default", "-v", "-vv", "-n 2", "-n 2 -vv", "CI=true", "--kernelprof-summary"],
)
def test_the_summary_holds_the_whole_failure_whatever_the_terminal_shows(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, options: list[str], env: dict[str, str]
) -> None:
    if "-n" in options:
        pytest.importorskip("xdist")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    given = "--kernelprof-summary" in options
    summary = project.path / ("out/summary.md" if given else "step_summary.md")
    if not given:
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = project.runpytest(*options)
    result.assert_outcomes(failed=3)
    # The terminal as it was: below -vv and off CI the head, and the rest in a section below it.
    if "-vv" in options or env:
        assert POINTER not in result.stdout.str()
        result.stdout.fnmatch_lines([f"E  *{line.strip()}" for line in GEMMS[2:]], consecutive=True)
    else:
        result.stdout.fnmatch_lines(
            [
                f"E   *kernels.count(kind='gemm') matched 3 of 5 kernels: #0, #2, #4{MEDIANS}",
                f"E   *(the rest, 6 lines, is*{POINTER}*",
            ]
        )
        result.stdout.fnmatch_lines(["*- kernelprof assertion -*", "*" + GEMMS[2].strip()])
    # The summary: each failure whole in its fold, and no pointer to a section it has not.
    text = summary.read_text()
    assert POINTER not in text
    assert "-vv" not in text
    _failure(text, "test_two_gemms").fnmatch_lines(GEMMS, consecutive=True)
    _failure(text, "test_like_compiled").fnmatch_lines(BASELINE)
    # A table longer than the summary keeps of a message: its first lines, and a count of the rest.
    resnet = _failure(text, "test_resnet_gemms")
    assert len(resnet.lines) == MESSAGE_LINES + 1
    resnet.fnmatch_lines(
        [
            "assert * == 0",
            "  kernels.count(kind='gemm') matched * of 282 kernels: *",
            "  *#  kind *",
            "     0  pointwise *nhwcAddPaddingKernel*",
        ]
    )
    # 282 rows, the assertion, the count's line, the header, and the key of the table's (op) marks;
    # then the profile's section: its title, head, the line for the table shown above, memory ops, figures.
    assert resnet.lines[-1] == f"... {282 + 4 + 5 - MESSAGE_LINES} more lines in the job log"
    # The annotations read the same record: the baseline's, at the test's line, has no pointer
    # either, and keeps its update command where its diff is cut; each kernel count is annotated
    # at its line with the assertion's head.
    errors = [line for line in result.outlines if line.startswith("::error ")]
    assert len(errors) == 3, errors
    assert errors[0].startswith(f"::error file=test_s.py,line={BASELINE_LINE},title=kernelprof%3A kernel baseline::")
    assert POINTER not in errors[0]
    # What changed goes ahead of what did not: the unchanged GEMMs in one line, the split: line kept.
    assert "%0A  (3 unchanged kernels: their = lines are in the job log)%0A  + pointwise/aten" in errors[0]
    assert not re.search("%0A  = ", errors[0])
    assert errors[0].endswith(
        "%0A  split: triton_poi_fused__unsafe_view_gelu_mul_0 -> gelu (aten pointwise) + mul (aten pointwise)"
        "%0A(+1 line in the job log)%0A  if the change is intended: pytest --kernelprof-update "
        "'test_s.py::test_like_compiled'"
    )
    kernels = "title=kernelprof%3A kernel assertion::"
    two, zero = (LINES[f'assert prof.kernels.count(kind="gemm") == {n}'] for n in (2, 0))
    # (by line, as the summary lists them: test_two_gemms, then test_resnet_gemms)
    assert errors[1] == (
        f"::error file=test_s.py,line={two},{kernels}"
        f"test_s.py::test_two_gemms%0A{GEMMS[0]}%0A{GEMMS[1]}%0A(+6 lines in the job log)"
    )
    assert errors[2].startswith(f"::error file=test_s.py,line={zero},{kernels}test_s.py::test_resnet_gemms%0A")
    assert errors[2].endswith(f"%0A(+{282 + 4 + 5 - 2} lines in the job log)")  # as the summary counts them


def test_the_summary_of_a_long_table_stays_far_from_githubs_limit() -> None:
    """GitHub takes 1 MiB of a step's summary: ten failures (those the summary shows) each at
    its limits, lines or characters, stay under half of it."""
    from pytest_kernelprof.plugin.ci_facts import MESSAGE_CHARS, kept_lines
    from pytest_kernelprof.reports.records import Failure, ReportRecord
    from pytest_kernelprof.reports.summary import MAX_FAILURES, render_summary

    for width in (10, 200, 4000, 10**6):
        lines = ["x" * width] * 10_000
        kept = kept_lines(lines)
        assert 1 <= len(kept) <= MESSAGE_LINES
        assert sum(len(line) + 1 for line in kept) <= MESSAGE_CHARS + 4
        failure = Failure("kernels", "\n".join(kept), len(lines) - len(kept), "t.py", 1)
        tests = {f"t.py::test_{i}": ReportRecord(failure=failure) for i in range(MAX_FAILURES + 5)}
        size = len(render_summary(tests, [], rootpath=Path(".")).encode())
        assert size < 512 * 1024, (width, size)
    assert kept_lines(["a" * 10**6]) == ["a" * MESSAGE_CHARS + "..."]
    assert kept_lines(["ab", "cd"]) == ["ab", "cd"]
