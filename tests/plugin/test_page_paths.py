"""The timeline page beside a failed test's trace names paths as the failure and the job summary
do: relative to the rootdir where under it (a trial's page read `baseline sm90/default
(/tmp/x/tests/__kernelprof__/...)` and `source /tmp/x/tests/traces/...`)."""

from __future__ import annotations

import html
import shutil

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.baseline import baseline_paths, record
from pytest_kernelprof.paths import trace_file_name
from tests.helpers import DATA

SUITE = """
from pathlib import Path


def test_baseline(kernelprof, kernel_baseline):
    kernel_baseline.check(kernelprof.load_trace(Path(__file__).parent / "recorded" / "geglu.json.gz"))
"""


def test_the_page_of_a_failed_baseline_names_paths_relative_to_the_rootdir(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    cpu_pytester.makeini("[pytest]\n")  # the rootdir, above the folder the run starts in
    tests = cpu_pytester.mkpydir("tests")
    module = tests / "test_user.py"
    module.write_text(SUITE)
    (tests / "recorded").mkdir()
    shutil.copy(DATA / "h200_geglu_eager.json.gz", tests / "recorded" / "geglu.json.gz")
    path, _ = baseline_paths(module, "tests/test_user.py::test_baseline")
    record(path, "sm90", "default", load_trace(DATA / "h200_geglu_compiled.json.gz"))
    monkeypatch.chdir(tests)
    summary = cpu_pytester.path / "summary.md"
    result = cpu_pytester.runpytest("--kernelprof-trace-dir", str(tests / "traces"), "--kernelprof-summary", summary)
    result.assert_outcomes(failed=1)
    shown = path.relative_to(cpu_pytester.path).as_posix()
    assert shown in summary.read_text()  # as the failure names it
    trace = tests / "traces" / trace_file_name("tests/test_user.py::test_baseline", 0)
    text = trace.with_name(trace.name.removesuffix(".json.gz") + ".html").read_text()
    assert f"<h2>baseline sm90/default ({shown}) and this run</h2>" in text
    # The title and the heading say whose page it is (they read `... test_baseline profile 1`).
    assert "<title>tests/test_user.py::test_baseline: its profile - kernelprof</title>" in text
    assert "<h1>tests/test_user.py::test_baseline: its profile</h1>" in text
    assert "; source tests/recorded/geglu.json.gz" in text
    assert str(cpu_pytester.path) not in text
    # The page leads with the failure's headline, in its words (a trial found the page without it).
    headline = next(line for line in result.outlines if "kernels per call: " in line).split("kernels per call: ")[1]
    assert headline.startswith("4 -> 5")
    assert f'<div class="told"><div>kernels per call: {html.escape(headline)}</div>' in text


TWO = """
from pathlib import Path

DATA = Path({data!r})


def test_two(kernelprof):
    kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz")
    kernelprof.load_trace(DATA / "h200_geglu_compiled.json.gz")
    assert False
"""


def test_the_pages_of_a_test_with_two_profiles_say_which_of_the_two_they_are(cpu_pytester: pytest.Pytester) -> None:
    cpu_pytester.makepyfile(test_two=TWO.format(data=str(DATA)))
    result = cpu_pytester.runpytest("--kernelprof-trace-dir", "traces")
    result.assert_outcomes(failed=1)
    for index in (0, 1):
        trace = cpu_pytester.path / "traces" / trace_file_name("test_two.py::test_two", index)
        text = trace.with_name(trace.name.removesuffix(".json.gz") + ".html").read_text()
        title = f"test_two.py::test_two: profile {index + 1} of 2"
        assert f"<title>{title} - kernelprof</title>" in text
        assert f"<h1>{title}</h1>" in text
