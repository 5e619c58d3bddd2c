"""The plugin's own hooks (plugin/hookspec.py) through pytester: extra JUnit properties per
profile, and extra lines at the end of the job summary, with and without xdist."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tests.helpers import DATA

CONFTEST = f"""
from pathlib import Path

DATA = Path({str(DATA)!r})


def pytest_kernelprof_junit_properties(item, profile):
    gemms = profile.kernels.of_kind("gemm")
    return [("team.gemms", len(gemms)), ("team.test", item.name)]


def pytest_kernelprof_summary(config, exitstatus):
    return ["### Runner notes", "", f"exit status {{exitstatus}}"]
"""

SUITE = """
from conftest import DATA


def test_two_profiles(kernelprof):
    kernelprof.load_trace(DATA / "h200_geglu_compiled.json.gz")
    kernelprof.load_trace(DATA / "h200_linear_eager.json.gz")


def test_plain():
    pass
"""


def _properties(xml_path: object) -> dict[str, list[tuple[str, str]]]:
    found: dict[str, list[tuple[str, str]]] = {}
    for case in ET.parse(str(xml_path)).getroot().iter("testcase"):
        found[case.get("name", "")] = [(p.get("name", ""), p.get("value", "")) for p in case.iter("property")]
    return found


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_hooks_add_junit_properties_per_profile_and_summary_lines(
    cpu_pytester: pytest.Pytester, workers: list[str]
) -> None:
    if workers:
        pytest.importorskip("xdist")
    cpu_pytester.makeconftest(cpu_pytester.path.joinpath("conftest.py").read_text() + CONFTEST)
    cpu_pytester.makepyfile(test_h=SUITE)

    result = cpu_pytester.runpytest(*workers, "--junitxml", "out.xml", "--kernelprof-summary", "summary.md")

    result.assert_outcomes(passed=2)
    props = _properties(cpu_pytester.path / "out.xml")
    pairs = props["test_two_profiles"]
    # After the plugin's own figures of both profiles, the hook's pairs, one call per profile.
    assert [name for name, _ in pairs][-4:] == ["team.gemms", "team.test", "team.gemms", "team.test"]
    assert pairs[-4:] == [
        ("team.gemms", "3"),
        ("team.test", "test_two_profiles"),
        ("team.gemms", "1"),
        ("team.test", "test_two_profiles"),
    ]
    assert ("kernelprof.2.kernels", "1") in pairs
    assert props["test_plain"] == []  # no profile, no call
    # Nothing of the plugin's own to say (no failure, no baseline, every kernel placed): the
    # summary holds its title and the hook's lines.
    text = (cpu_pytester.path / "summary.md").read_text()
    assert text == "## pytest-kernelprof\n\n### Runner notes\n\nexit status 0\n"


FAILING_HOOKS = f"""
from pathlib import Path

DATA = Path({str(DATA)!r})


def pytest_kernelprof_junit_properties(item, profile):
    raise ValueError("no team here")


def pytest_kernelprof_summary(config, exitstatus):
    raise ValueError("no notes today")
"""

# A plugin of the user's beside the conftest: an endless iterator of pairs (read past 100,000, it
# says so), and a summary as one string.
OTHER_PLUGIN = """
import itertools


def pytest_kernelprof_junit_properties(item, profile):
    for n in itertools.count():
        if n > 100_000:
            raise RuntimeError("read past the bound")
        yield (f"mine.{n}", n)


def pytest_kernelprof_summary(config, exitstatus):
    return "### Mine\\n\\nall **fine**"
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_a_hook_that_fails_is_told_and_the_plugins_own_outputs_are_written(
    cpu_pytester: pytest.Pytester, workers: list[str]
) -> None:
    if workers:
        pytest.importorskip("xdist")
    cpu_pytester.makeconftest(cpu_pytester.path.joinpath("conftest.py").read_text() + FAILING_HOOKS)
    cpu_pytester.makepyfile(test_h=SUITE, other_plugin=OTHER_PLUGIN)

    result = cpu_pytester.runpytest(
        *workers, "-p", "other_plugin", "--junitxml", "out.xml", "--kernelprof-summary", "summary.md"
    )

    # Before: the summary hook's error ended the session with a traceback and no summary; the
    # properties hook's error dropped the plugin's own properties, and the endless one was read whole.
    result.assert_outcomes(passed=2)
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "kernelprof: the pytest_kernelprof_summary hook of conftest.py raised ValueError: no notes today: "
            "its lines are left out of the job summary",
            "kernelprof: the pytest_kernelprof_junit_properties hook of conftest.py raised ValueError: no team here: "
            "its JUnit properties are left out",
        ]
    )
    result.stdout.no_fnmatch_line("*Traceback*")
    props = dict(_properties(cpu_pytester.path / "out.xml")["test_two_profiles"])
    assert props["kernelprof.profiles"] == "2"
    assert "kernelprof.2.kernels" in props
    assert "mine.0" in props
    assert "kernelprof.properties_left_out" in props
    assert len(props) == 2_001
    # The string is its lines, not one character a line.
    text = (cpu_pytester.path / "summary.md").read_text()
    assert text == "## pytest-kernelprof\n\n### Mine\n\nall **fine**\n"


BAD_STR = """
class Bad:
    def __str__(self):
        raise RuntimeError("bad str")


def pytest_kernelprof_junit_properties(item, profile):
    return [("bad", Bad())]
"""

FAILING_SUITE = f"""
from pathlib import Path

DATA = Path({str(DATA)!r})


def test_gemms(kernelprof):
    assert kernelprof.load_trace(DATA / "h200_geglu_eager.json.gz").kernels.count(kind="gemm") == 99
"""


def test_a_pair_whose_value_cannot_be_text_is_that_hooks_and_the_plugins_outputs_are_written(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    cpu_pytester.makeconftest(cpu_pytester.path.joinpath("conftest.py").read_text() + BAD_STR)
    cpu_pytester.makepyfile(test_h=FAILING_SUITE)

    result = cpu_pytester.runpytest("--junitxml", "out.xml", "--kernelprof-summary", "summary.md")

    # Before: the str() that raised ran after the hook's guard, under one that dropped every
    # CI output of the test: no properties of the plugin's, no annotation, no summary.
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "kernelprof: the pytest_kernelprof_junit_properties hook of conftest.py raised RuntimeError: bad str: "
            "its JUnit properties are left out",
        ]
    )
    props = dict(_properties(cpu_pytester.path / "out.xml")["test_gemms"])
    assert props["kernelprof.profiles"] == "1"
    assert "bad" not in props
    assert any(line.startswith("::error ") and "test_gemms" in line for line in result.outlines)
    text = (cpu_pytester.path / "summary.md").read_text()
    assert "test_gemms" in text
