"""Messages that must say what is wrong: a baseline of a newer format, a metric rule compared
with a negative number."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_kernelprof import BaselineError, load_trace
from pytest_kernelprof.checks.baseline import read_baseline, record
from pytest_kernelprof.checks.rules import parse_rule
from tests.helpers import DATA


def test_a_newer_baseline_format_says_to_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "test_x.json"
    path.write_text('{"format": 99, "archs": {}}')
    with pytest.raises(BaselineError) as info:
        read_baseline(path)
    assert str(info.value) == (
        f"{path}: baseline format 99 is newer than this pytest-kernelprof reads (format 1): "
        "upgrade pytest-kernelprof to compare against it"
    )
    with pytest.raises(BaselineError, match="upgrade pytest-kernelprof"):
        record(path, "sm90", "default", load_trace(DATA / "h200_linear_eager.json.gz"))
    assert path.read_text() == '{"format": 99, "archs": {}}'


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"format": "1", "archs": {}}', "unknown baseline format '1' (this pytest-kernelprof reads format 1)"),
        ('{"format": 0, "archs": {}}', "unknown baseline format 0 (this pytest-kernelprof reads format 1)"),
        ('{"archs": {}}', "not a pytest-kernelprof baseline (a JSON object with 'format' and 'archs' keys)"),
        ("[]", "not a pytest-kernelprof baseline (a JSON object with 'format' and 'archs' keys)"),
        ('{"format": 1}', "archs is missing"),
        ('{"format": 1, "archs": []}', "archs is [], not an object"),
    ],
)
def test_other_formats_say_what_is_wrong(tmp_path: Path, content: str, said: str) -> None:
    path = tmp_path / "test_x.json"
    path.write_text(content)
    with pytest.raises(BaselineError) as info:
        read_baseline(path)
    assert str(info.value).startswith(f"{path}: {said}; fix it from version control, or delete it")


@pytest.mark.parametrize(
    ("rule", "metric"),
    [("r: syncs>-1", "syncs"), ("r: peak_bytes<=-2GiB", "peak_bytes"), ("r: launches==-0.5", "launches")],
)
def test_a_negative_limit_is_told_as_such(rule: str, metric: str) -> None:
    with pytest.raises(ValueError, match=f"{metric} is never negative: compare it with 0 or more") as info:
        parse_rule(rule)
    assert "takes a number" not in str(info.value)


def test_a_limit_that_is_not_a_number_still_says_so() -> None:
    with pytest.raises(ValueError, match="syncs> takes a number, got 'many'"):
        parse_rule("r: syncs>many")
