"""The CI outputs stay bounded and true whatever the run (issues 32 and 34): a parametrised id of
80 KB, a fixture that raises on a profile in its setup or teardown, a baseline's path off GitHub
Actions, and JUnit's message for a failure whose explanation the terminal cut."""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.baseline import baseline_paths, record
from pytest_kernelprof.reports.junit import MAX_VALUE
from pytest_kernelprof.reports.summary import MAX_TEXT, SUMMARY_BYTES
from tests.helpers import DATA

LONG = "p" * 80_000

HUGE_IDS = f"""
import pytest
from pathlib import Path

DATA = Path({str(DATA)!r})


@pytest.mark.parametrize("n", range(20), ids=lambda n: f"{{n}}-" + "{LONG}")
def test_gemms(kernelprof, n):
    assert kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz").kernels.count(kind="gemm") == 2
"""


@pytest.fixture
def off_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CI", "BUILD_NUMBER", "GITHUB_WORKSPACE", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)


def test_the_summary_of_tests_with_huge_ids_stays_under_its_budget(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, off_ci: None
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    cpu_pytester.makepyfile(test_ids=HUGE_IDS)
    cpu_pytester.makeconftest(
        """
def pytest_kernelprof_junit_properties(item, profile):
    return [("mine." + "n" * 5000, "v" * 100_000)]
"""
    )
    result = cpu_pytester.runpytest("--kernelprof-summary", "summary.md", "--junitxml", "out.xml")
    result.assert_outcomes(failed=20)
    text = (cpu_pytester.path / "summary.md").read_text()
    # Before: 1.6 MB (each id whole in its entry and in the list of the rest), over GitHub's 1 MiB.
    assert len(text.encode()) < SUMMARY_BYTES
    assert len(text.encode()) < 20 * MAX_TEXT * 3 + 20_000  # each id cut, not the summary at its budget
    assert text.count("<details>") == 10
    assert "chars...]" in text
    assert "... and 10 more failed tests (see the job log):" in text
    # The annotations: ten kernel assertions, each id cut, and the rest counted; JUnit's properties, cut.
    found = [line for line in result.outlines if line.startswith("::")]
    assert len(found) == 11
    assert all(len(line) < MAX_TEXT * 3 + 1_500 for line in found)
    assert found[-1].startswith("::notice title=kernelprof::10 more kernelprof annotations not written")
    root = ET.parse(cpu_pytester.path / "out.xml").getroot()
    mine = [p for p in root.iter("property") if p.get("name", "").startswith("mine.")]
    assert len(mine) == 20
    assert all(len(p.get("name", "")) < 300 and len(p.get("value", "")) <= MAX_VALUE + 3 for p in mine)


SUITE = f"""
import pytest
from pathlib import Path

DATA = Path({str(DATA)!r})


@pytest.fixture
def one_gemm(kernelprof):
    # A fixture that checks what it profiled: the trace has three gemms.
    return kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz").kernels.one(kind="gemm")


@pytest.fixture
def checked_after(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz")
    yield prof
    prof.kernels.one(kind="gemm")


def test_setup_raises(one_gemm):
    pass


def test_teardown_raises(checked_after):
    pass


def test_call_fails_and_teardown_raises(checked_after):
    assert checked_after.kernels.count(kind="gemm") == 2


def test_like_compiled(kernelprof, kernel_baseline):
    assert kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz") == kernel_baseline


def test_resnet_gemms(kernelprof):
    assert kernelprof.load_trace(DATA / "h200_resnet50_forward_cl_modules.json.gz").kernels.count(kind="gemm") == 0
"""


@pytest.fixture
def project(cpu_pytester: pytest.Pytester, off_ci: None) -> pytest.Pytester:
    module = cpu_pytester.makepyfile(test_s=SUITE)
    path, _ = baseline_paths(module, "test_s.py::test_like_compiled")
    record(path, "sm90", "default", load_trace(DATA / "h200_geglu_compiled.json.gz"))
    return cpu_pytester


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_setup_and_teardown_errors_baseline_paths_and_junit_messages(
    project: pytest.Pytester, workers: list[str]
) -> None:
    if workers:
        pytest.importorskip("xdist")
    result = project.runpytest(
        *workers, "--kernelprof-summary", "summary.md", "--kernelprof-annotations", "on", "--junitxml", "out.xml"
    )
    result.assert_outcomes(passed=1, failed=3, errors=3)
    text = (project.path / "summary.md").read_text()
    # Setup and teardown errors, as errors; the test that failed in its call and errored in its
    # teardown counted once, among the failures, its teardown's error told in its entry.
    assert "### 3 tests failed: kernel baseline (1), kernel assertion (2)\n" in text
    assert "### 2 tests errored in setup or teardown: kernel assertion\n" in text
    assert "<code>test_s.py::test_setup_raises</code> errored in setup (kernel assertion) at" in text
    assert "<code>test_s.py::test_teardown_raises</code> errored in teardown (kernel assertion) at" in text
    entry = text.split("<code>test_s.py::test_call_fails_and_teardown_raises</code>")[1].split("</details>")[0]
    assert "Its teardown then errored (kernel assertion) at" in entry
    assert text.count("test_call_fails_and_teardown_raises</code>") == 1
    # The baseline's path, relative to the rootdir (no GITHUB_WORKSPACE here): not the machine's.
    assert str(project.path) not in text
    assert "in __kernelprof__/test_s/test_like_compiled.json" in text
    found = [line for line in result.outlines if line.startswith("::error ")]
    assert not any(str(project.path) in line for line in found), found
    assert any("in __kernelprof__/test_s/test_like_compiled.json" in line for line in found), found
    errors = [line for line in found if "setup error)::" in line or "teardown error)::" in line]
    assert len(errors) == 2, found  # not the teardown of the test whose call failed: it is counted there
    assert any(
        line.startswith("::error file=test_s.py,") and "test_setup_raises errored in setup" in line for line in errors
    )
    # JUnit's message: the rest of the explanation is in the failure's text, not in a section "below".
    root = ET.parse(project.path / "out.xml").getroot()
    resnet = next(case for case in root.iter("testcase") if case.get("name") == "test_resnet_gemms")
    failure = resnet.find("failure")
    assert failure is not None
    message = failure.get("message", "")
    assert re.search(r"the rest, \d+ lines, is in the 'kernelprof assertion' section of this failure's text", message)
    assert "below" not in message
    assert "-vv" not in message
    assert "kernelprof assertion" in (failure.text or "")
    # The terminal keeps its pointer: there the section is below.
    result.stdout.fnmatch_lines(["*(the rest, * lines, is in the 'kernelprof assertion' section below; -vv*"])


def test_a_check_name_of_a_megabyte_is_cut_in_the_terminal(cpu_pytester: pytest.Pytester) -> None:
    # Before: "written ...: sm90/nnn..." and "... unused baseline entry" lines of 1,000,067 characters.
    cpu_pytester.makepyfile(
        test_n=f"""
from pathlib import Path
from pytest_kernelprof import load_trace

def test_named(kernel_baseline):
    name = "n" * 1_000_000 if not Path("second.txt").exists() else "short"
    kernel_baseline.check(load_trace({str(DATA / "h200_linear_eager.json.gz")!r}), name=name)
"""
    )
    result = cpu_pytester.runpytest("--kernelprof-update")
    result.assert_outcomes(passed=1)
    written = [line for line in result.outlines if line.startswith("written ")]
    assert len(written) == 1
    assert len(written[0]) < MAX_TEXT + 200, len(written[0])
    assert "chars...]" in written[0]
    (cpu_pytester.path / "second.txt").write_text("")
    result = cpu_pytester.runpytest("--kernelprof-update")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*kernelprof: 1 unused baseline entry*"])
    assert max(len(line) for line in result.outlines) < MAX_TEXT + 200
    assert any("nnn[..." in line for line in result.outlines)


GROUP_CONFTEST = f"""
import pytest
from pathlib import Path

DATA = Path({str(DATA)!r})


@pytest.fixture
def pointwise_after(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz")
    yield prof
    prof.kernels.one(kind="pointwise")  # CONFTEST_LINE


@pytest.fixture
def breaks_after():
    yield
    raise RuntimeError("the other fixture's teardown")
"""

GROUP_SUITE = """
import asyncio
from conftest import DATA


def test_alone(pointwise_after):
    pass


def test_with_another(breaks_after, pointwise_after):
    pass


def test_task_group(kernelprof):
    prof = kernelprof.load_trace(DATA / "h200_sync_item_stacks.json.gz")

    async def check():
        assert not prof.syncs

    async def main():
        async with asyncio.TaskGroup() as group:
            group.create_task(check())

    asyncio.run(main())
"""


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.TaskGroup, and pytest's grouped teardown errors")
def test_profile_failures_inside_exception_groups_and_a_conftests_fixture_are_told(
    cpu_pytester: pytest.Pytester, off_ci: None
) -> None:
    # Before: the teardown whose errors pytest grouped, and the TaskGroup's assertion, were in no
    # summary entry and no annotation; a conftest fixture's error was placed at the test's file.
    cpu_pytester.makeconftest(cpu_pytester.path.joinpath("conftest.py").read_text() + GROUP_CONFTEST)
    cpu_pytester.makepyfile(test_g=GROUP_SUITE)
    line = (
        cpu_pytester.path.joinpath("conftest.py")
        .read_text()
        .splitlines()
        .index('    prof.kernels.one(kind="pointwise")  # CONFTEST_LINE')
        + 1
    )
    result = cpu_pytester.runpytest("--kernelprof-summary", "summary.md", "--kernelprof-annotations", "on")
    result.assert_outcomes(passed=2, failed=1, errors=2)
    text = (cpu_pytester.path / "summary.md").read_text()
    assert "<code>test_g.py::test_task_group</code> failed (host syncs)" in text
    for test in ("test_alone", "test_with_another"):
        what = f"<code>test_g.py::{test}</code> errored in teardown (kernel assertion)"
        assert f"{what} at <code>conftest.py:{line}</code>" in text
    entry = text.split("<code>test_g.py::test_with_another</code>")[1].split("</details>")[0]
    assert "pointwise" in entry
    found = [line for line in result.outlines if line.startswith("::error ")]
    assert sum(f.startswith(f"::error file=conftest.py,line={line},") for f in found) == 2, found
    assert any(f.startswith("::error file=test_g.py,") and "test_task_group" in f for f in found), found
