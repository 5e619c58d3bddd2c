"""Profiles taken without the ``kernelprof`` fixture (``load_trace``, ``profile``, ``Profiler()``
imported from the package) feed the running test's reports as the fixture's do: its failure's
kernel tables, the job summary and the JUnit properties (issue 32 item 10). One inner run."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers import DATA

SUITE = """
from pytest_kernelprof import load_trace

MIXED = {mixed!r}
AT_IMPORT = load_trace(MIXED)  # read at collection: no test's

def test_module_load_trace_fails():
    prof = load_trace(MIXED)
    assert prof.kernels.count(kind="gemm", dtype="fp32") == 0

def test_module_load_trace_passes():
    assert len(load_trace(MIXED).kernels) == 7

def test_fixture_and_module(kernelprof):
    kernelprof.load_trace(MIXED)
    load_trace(MIXED)

def test_fixture_once(kernelprof):
    kernelprof.load_trace(MIXED)

def test_profile_read_at_import_is_no_tests():
    assert len(AT_IMPORT.kernels) == 7
"""


def _properties(xml: Path) -> dict[str, dict[str, list[str]]]:
    found: dict[str, dict[str, list[str]]] = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        props = found.setdefault(case.get("name", ""), {})
        for prop in case.iter("property"):
            props.setdefault(prop.get("name", ""), []).append(prop.get("value", ""))
    return found


def test_profiles_taken_without_the_fixture_feed_the_tests_reports(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_w=SUITE.format(mixed=str(DATA / "h200_bf16_mlp_fp32_linear.json.gz")))
    result = pytester.runpytest("--junitxml", "out.xml", "--kernelprof-summary", "summary.md")
    result.assert_outcomes(passed=4, failed=1)
    # The failure shows the loaded profile's table, as a fixture's profile does.
    result.stdout.fnmatch_lines(["*- kernelprof profile 1 of 1 -*", "KernelProfile from *h200_bf16_mlp_fp32_linear*"])
    # The job summary tells the failure on the profile.
    summary = (pytester.path / "summary.md").read_text()
    assert "<code>test_w.py::test_module_load_trace_fails</code> failed (kernel assertion)" in summary
    # JUnit: each profile a test took once, whichever way it took it; none for one read at import.
    props = _properties(pytester.path / "out.xml")
    assert props["test_module_load_trace_fails"]["kernelprof.kernels"] == ["7"]
    assert props["test_module_load_trace_passes"]["kernelprof.profiles"] == ["1"]
    assert props["test_fixture_and_module"]["kernelprof.profiles"] == ["2"]
    assert props["test_fixture_once"]["kernelprof.profiles"] == ["1"]
    assert props["test_profile_read_at_import_is_no_tests"] == {}
