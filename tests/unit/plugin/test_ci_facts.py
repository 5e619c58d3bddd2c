"""Where a fixture's error is placed: at the user's line, never inside the plugin's own files,
even where the plugin's source lies under the rootdir (a checkout of pytest-kernelprof itself)."""

from __future__ import annotations

from pathlib import Path

import pytest

import pytest_kernelprof
from pytest_kernelprof.paths import atomic_path
from pytest_kernelprof.plugin.ci_facts import fixture_line


def test_a_fixtures_error_raised_inside_the_plugin_is_placed_at_the_users_line(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="not a regular file") as info, atomic_path(tmp_path):  # raised in paths.py
        pass
    rootdir = Path(pytest_kernelprof.__file__).parents[2]  # the checkout, or site-packages' parent
    place = fixture_line(info, rootdir)
    assert place is not None
    path, line = place
    assert path == Path(__file__)
    assert "atomic_path(tmp_path)" in path.read_text().splitlines()[line - 1]
