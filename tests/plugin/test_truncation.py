"""When the plugin moves an explanation's body into a report section: where pytest would cut it
short (plugin/settings.py's ``assertion_budget``, which mirrors pytest's private rule). Checked
against the installed pytest at its limits: an explanation exactly at the line and character
limits (shown whole by both), one over each (cut by pytest, moved by the plugin), without and
with -v, at -vv and on CI (never cut)."""

from __future__ import annotations

import re

import pytest

CONFTEST = """
from pytest_kernelprof.model.explain import Explanation
from pytest_kernelprof.plugin.settings import assertion_budget


class Shown:
    # A value whose failed comparison pytest explains in lines of these widths.
    def __init__(self, name, widths):
        self.name, self.widths = name, widths


def pytest_assertrepr_compare(config, op, left, right):
    if not isinstance(left, Shown):
        return None
    lines = [c * w for c, w in zip("abcdefghijklmnop", left.widths)]
    fits = Explanation(lines[:1], lines[1:]).fits(*assertion_budget(config))
    with open("decisions.txt", "a") as out:
        out.write(f"{left.name} {'whole' if fits else 'cut'}\\n")
    return lines
"""

# pytest's defaults: 8 lines, 640 characters, each with its footer's slack (2 lines, 46 characters).
SUITE = """
from conftest import Shown


def test_lines_at():
    assert Shown("lines_at", [10] * 10) == 0


def test_lines_over():
    assert Shown("lines_over", [10] * 11) == 0


def test_chars_at():
    assert Shown("chars_at", [343, 343]) == 0


def test_chars_over():
    assert Shown("chars_over", [343, 344]) == 0
"""

CASES = ("lines_at", "lines_over", "chars_at", "chars_over")
PYTEST_MAJOR = int(pytest.__version__.split(".")[0])


def _cut_by_pytest(output: str) -> dict[str, str]:
    """Per test, whether pytest cut its explanation ("cut") or showed it whole ("whole")."""
    parts = re.split(r"_{3,} test_(\w+) _{3,}", output)
    sections = zip(parts[1::2], parts[2::2], strict=True)
    return {name: "cut" if "Full output truncated" in text else "whole" for name, text in sections}


@pytest.mark.parametrize(
    ("options", "ci", "expected"),
    [
        ([], "", {"lines_at": "whole", "lines_over": "cut", "chars_at": "whole", "chars_over": "cut"}),
        (["-v"], "", {"lines_at": "whole", "lines_over": "cut", "chars_at": "whole", "chars_over": "cut"}),
        (["-vv"], "", dict.fromkeys(CASES, "whole")),
        ([], "true", dict.fromkeys(CASES, "whole")),
    ],
    ids=["default", "-v", "-vv", "CI=true"],
)
def test_the_plugin_cuts_where_pytest_cuts(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, options: list[str], ci: str, expected: dict[str, str]
) -> None:
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
    if ci:
        monkeypatch.setenv("CI", ci)
    else:
        monkeypatch.delenv("CI", raising=False)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_t=SUITE)
    result = pytester.runpytest(*options, "-p", "no:randomly")
    result.assert_outcomes(failed=len(CASES))
    decisions = dict(line.split() for line in (pytester.path / "decisions.txt").read_text().splitlines())
    assert decisions == expected
    by_pytest = _cut_by_pytest(result.stdout.str())
    if PYTEST_MAJOR >= 9:
        assert by_pytest == expected
    else:  # pytest 8 keeps 70 characters over its limit whole: the plugin's 46 is the safe side
        assert {name for name, how in by_pytest.items() if how == "cut"} <= {
            name for name, how in decisions.items() if how == "cut"
        }
