"""Names from a trace that try to be something else in the output: a GitHub Actions workflow
command (a line that starts with ``::``, spaces before it allowed), a line of their own (a
newline), Markdown or HTML in the job summary. A run on such a trace prints every name on the
line it belongs to, and no line of it but the plugin's own annotations starts with ``::``.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path

import pytest

from pytest_kernelprof.tables import display_name
from tests.helpers import DATA

KERNEL = "::error file=README.md,line=1::kernel name\n::warning::second line\r::notice::third"
OP = "::error::op name\n::warning::second"
DEVICE = "NVIDIA H200\n::error::device name"
# The annotations the plugin writes itself: its properties and message escaped (annotations.py).
OURS = re.compile(r"^::(error file=[^,:]+(,line=\d+)?,title=kernelprof%3A [^:]+|notice title=kernelprof)::")


def hostile_trace(path: Path) -> Path:
    """``h200_geglu_liger.json.gz`` with its Liger kernel and op renamed: no evidence places
    the kernel, so the warnings and the end-of-run list name it."""
    text = gzip.decompress((DATA / "h200_geglu_liger.json.gz").read_bytes()).decode("utf-8")
    text = text.replace('"_geglu_tanh_forward_kernel"', json.dumps(KERNEL))
    text = text.replace('"LigerGELUMulFunction"', json.dumps(OP))
    text = text.replace('"NVIDIA H200"', json.dumps(DEVICE))
    path.write_bytes(gzip.compress(text.encode("utf-8")))
    return path


INI = """
[pytest]
kernelprof_forbid =
    no-unknown: family=unknown | every kernel placed
"""

SUITE = """
import pytest


def test_breaks_a_rule(kernelprof):
    kernelprof.load_trace("hostile.json.gz")


@pytest.mark.kernelprof_allow("no-unknown")
def test_counts_a_kind(kernelprof):
    prof = kernelprof.load_trace("hostile.json.gz")
    prof.kernels.count(kind="pointwise")  # warns: the unplaced kernel could change it


@pytest.mark.kernelprof_allow("no-unknown")
def test_fails_on_its_profile(kernelprof):
    prof = kernelprof.load_trace("hostile.json.gz")
    assert prof.kernels.count(kind="gemm") == 99


@pytest.mark.kernelprof_allow("no-unknown")
def test_passes(kernelprof):
    kernelprof.load_trace("hostile.json.gz")
"""


def _commands(lines: list[str]) -> list[str]:
    return [line for line in lines if line.strip().startswith("::")]


def test_no_name_becomes_a_workflow_command(cpu_pytester: pytest.Pytester) -> None:
    hostile_trace(cpu_pytester.path / "hostile.json.gz")
    cpu_pytester.makepyfile(test_hostile=SUITE)
    cpu_pytester.makeini(INI)
    summary = cpu_pytester.path / "summary.md"
    result = cpu_pytester.runpytest(
        "-W", "default", "--kernelprof-annotations", "on", "--kernelprof-summary", str(summary), "-rA"
    )
    result.assert_outcomes(passed=2, failed=2)
    output = result.outlines + result.errlines
    # The names are there, each on the line it belongs to: the warnings summary, the failure's
    # table, the end-of-run list of kernel names no evidence placed.
    result.stdout.fnmatch_lines(["*UndecodedKernelWarning*", "*kernel name* no evidence could place*"])
    shown = display_name(KERNEL)  # escaped: on one line
    assert "\\r::notice::third" in shown
    assert sum(shown in line for line in output) >= 3, "\n".join(output)
    assert any(r"launched by \x3a:error::op name\n::warning::second" in line for line in output)
    commands = _commands(output)
    assert commands, "the rule's annotation"
    assert all(OURS.match(line) for line in commands), commands
    # The job summary: the name in a code span of its table row, on one line.
    text = summary.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) == 1, text
    assert rows[0].startswith(r"| `\x3a:error file=README.md,line=1::kernel name\n::warning::second line\r")


def test_the_cli_prints_no_workflow_command(pytester: pytest.Pytester) -> None:
    trace = hostile_trace(pytester.path / "hostile.json.gz")
    for args in (
        ["show", str(trace), "--ops", "--calls"],
        ["diff", str(DATA / "h200_geglu_liger.json.gz"), str(trace)],
    ):
        result = pytester.run(sys.executable, "-m", "pytest_kernelprof", *args)
        assert result.ret in (0, 1), result.errlines
        output = result.outlines + result.errlines
        assert not _commands(output), _commands(output)
        assert any(display_name(KERNEL) in line for line in output)
        assert any(r"NVIDIA H200\n::error::device name" in line for line in output)


PATH_AND_OP_SUITE = """
import glob

import pytest


def test_fails_on_a_profile_of_a_file_named_as_a_command(kernelprof):
    prof = kernelprof.load_trace(glob.glob("x*")[0])
    assert len(prof.kernels) == 5


def test_asks_for_an_op_that_did_not_run(kernelprof):
    prof = kernelprof.load_trace("ops.json.gz")
    prof.ops["aten::mul"]
"""


@pytest.mark.parametrize("tb", ["native", "line"])
def test_a_trace_files_name_and_the_nearest_ops_stay_on_their_lines(cpu_pytester: pytest.Pytester, tb: str) -> None:
    """A failed test's report section starts with the profile's source, its file's path; a missing
    op's error lists the nearest op names. Both are printed without pytest's ``E`` in front
    under ``--tb=native``: a newline in either made a line that is a workflow command."""
    data = (DATA / "h200_sync_device.json.gz").read_bytes()
    (cpu_pytester.path / "x\n::error::fromfilename.json.gz").write_bytes(data)
    text = gzip.decompress(data).decode("utf-8").replace('"aten::mul_"', json.dumps("aten::mul_\n::error::nearest"))
    (cpu_pytester.path / "ops.json.gz").write_bytes(gzip.compress(text.encode("utf-8")))
    cpu_pytester.makepyfile(test_path_and_op=PATH_AND_OP_SUITE)
    result = cpu_pytester.runpytest(f"--tb={tb}", "-p", "no:randomly")
    result.assert_outcomes(failed=2)
    output = result.outlines + result.errlines
    assert not _commands(output), _commands(output)
    assert any(r"nearest: aten::mul_\n::error::nearest" in line for line in output), "\n".join(output)
    result.stdout.fnmatch_lines([r"*kernelprof profile 1 of 1*", r"*x\n::error::fromfilename.json.gz on NVIDIA H200*"])


NOT_UNICODE_SUITE = """
import pytest


@pytest.mark.kernelprof_allow("no-unknown")
def test_fails(kernelprof):
    prof = kernelprof.load_trace("trace.json.gz")
    assert prof.kernels.count(kind="gemm") == 99, "a name from JSON: \\ud800"
"""


def test_text_that_is_not_unicode_reaches_the_summary_and_the_pages(cpu_pytester: pytest.Pytester) -> None:
    """A lone surrogate (JSON's "\\udfff", in an op's name or in a test's message) cannot be written
    as UTF-8: it is written as its escape. The summary's write raised at the end of the session,
    and the page's lost the test's CI outputs (its failure was missing from the summary)."""
    text = gzip.decompress((DATA / "h200_geglu_liger.json.gz").read_bytes()).decode("utf-8")
    text = text.replace('"LigerGELUMulFunction"', '"op \\udfff"')
    (cpu_pytester.path / "trace.json.gz").write_bytes(gzip.compress(text.encode("utf-8")))
    cpu_pytester.makepyfile(test_not_unicode=NOT_UNICODE_SUITE)
    cpu_pytester.makeini(INI)
    summary = cpu_pytester.path / "summary.md"
    result = cpu_pytester.runpytest("--kernelprof-summary", str(summary), "--kernelprof-trace-dir", "traces")
    result.assert_outcomes(failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.no_fnmatch_line("*not gathered for this test*")
    assert "a name from JSON: \\ud800" in summary.read_text(encoding="utf-8")
    pages = list((cpu_pytester.path / "traces").glob("*.html"))
    assert len(pages) == 1
    assert "<td>op \\udfff</td>" in pages[0].read_text(encoding="utf-8")


BASELINE_NAME_SUITE = """
import pytest

INJECTED = "x\\n::error file=test_w.py,line=1::injected"


def test_checks_a_baseline(kernelprof, kernel_baseline):
    kernel_baseline.check(kernelprof.load_trace("hostile.json.gz"), name=INJECTED)
"""

BASELINE_MISSING = """

def test_checks_a_baseline_never_recorded(kernelprof, kernel_baseline):
    kernel_baseline.check(kernelprof.load_trace("hostile.json.gz"), name=INJECTED + "2")
"""


@pytest.mark.parametrize("tb", ["native", "short"])
def test_a_baseline_checks_name_stays_on_its_line(cpu_pytester: pytest.Pytester, tb: str) -> None:
    """A check's name (a test's parameter, say) is shown in the warning that kinds cannot tell,
    the failure's head and the end-of-run list of entries: a newline in it made a line that
    is a workflow command."""
    hostile_trace(cpu_pytester.path / "hostile.json.gz")
    cpu_pytester.makepyfile(test_w=BASELINE_NAME_SUITE)
    cpu_pytester.runpytest("--kernelprof-update", "-W", "default").assert_outcomes(passed=1)
    cpu_pytester.makepyfile(test_w=BASELINE_NAME_SUITE + BASELINE_MISSING)
    result = cpu_pytester.runpytest("-W", "default", f"--tb={tb}", "-rA", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    output = result.outlines + result.errlines
    assert not _commands(output), "\n".join(output)
    assert any(r"x\n::error file=test_w.py,line=1::injected (kinds compared)" in line for line in output)
    assert any(r"x\n::error file=test_w.py,line=1::injected2" in line for line in output), "\n".join(output)
