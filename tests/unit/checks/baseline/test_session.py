"""The run's end of baselines (``BaselineSession``) without pytest in between: the commands it
suggests are shell words, and what may belong to a test that did not run is never unused."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.baseline import (
    BaselineSession,
    Checked,
    Improved,
    ReadUnderOldName,
    baseline_paths,
    record,
)

Trace = Callable[[str], Path]

# Test ids a shell would read as more than one word, or as a command of its own.
HOSTILE = ["a'; touch PWNED; echo '", "it's", "$(touch PWNED)", "a b", "`x`", 'q"uote', "back\\slash"]


@pytest.mark.parametrize("odd", HOSTILE)
def test_the_improved_line_suggests_a_command_that_names_the_test_and_nothing_else(odd: str) -> None:
    nodeid = f"tests/test_m.py::test_m[{odd}]"
    session = BaselineSession()
    session.add_report(nodeid, [Improved(nodeid, "default", "syncs", 2, 1)])
    [section] = session.summary(Path("."), narrowed=True)
    assert section[1] == f"better: syncs: 2 -> 1 in {nodeid}"
    assert shlex.split(section[2].removeprefix("lock it in with ")) == ["pytest", "--kernelprof-update", nodeid]


@pytest.mark.parametrize("odd", HOSTILE)
def test_the_mv_line_moves_the_old_file_and_nothing_else(odd: str) -> None:
    old, new = f"/p/__kernelprof__/t/test_{odd}.json", f"/p/__kernelprof__/t/test_{odd}-1a2b3c4d.json"
    session = BaselineSession()
    session.add_report("t.py::x", [ReadUnderOldName(old, new)])
    [section] = session.summary(Path("."), narrowed=True)
    assert shlex.split(section[1]) == ["mv", old, new]


def test_plain_words_keep_their_quotes() -> None:
    # The commands read as they did for ids a shell takes as they are.
    session = BaselineSession()
    session.add_report("t.py::test_m", [Improved("t.py::test_m", "default", "syncs", 2, 1)])
    [section] = session.summary(Path("."), narrowed=True)
    assert section[-1] == "lock it in with pytest --kernelprof-update 't.py::test_m'"


def test_the_files_of_tests_that_did_not_run_are_neither_unused_nor_pruned(tmp_path: Path, trace: Trace) -> None:
    """A test deselected, or left out by a conftest's pytest_collection_modifyitems, may still
    exist: its file (under either naming) is not an orphan, and its entries are kept."""
    module = tmp_path / "test_m.py"
    prof = load_trace(trace("linear_eager"))
    tests = ("test_ran", "TestS::test_slow", "test_gone")
    paths = {test.split("::")[-1]: baseline_paths(module, f"test_m.py::{test}") for test in tests}
    for path, _ in paths.values():
        record(path, "sm90", "default", prof)
    record(paths["test_ran"][0], "sm90", "old_check", prof)
    legacy = paths["test_slow"][1]
    assert legacy != paths["test_slow"][0]
    legacy.write_text(paths["test_slow"][0].read_text())  # the slow test's file under the old naming too
    session = BaselineSession()
    session.add_report("test_m.py::test_ran", [Checked(str(paths["test_ran"][0]), "sm90", "default")])
    session.add_not_run(["test_m.py::TestS::test_slow"])

    unused = [str(u) for u in session.unused(tmp_path, narrowed=False)]
    assert unused == [f"{paths['test_ran'][0]}: sm90/old_check", f"{paths['test_gone'][0]} (no test of that name ran)"]

    sections = session.summary(tmp_path, narrowed=False, prune=True)
    assert sections == [
        ["kernelprof: deleted 2 baseline entries", *sorted(unused)],  # by path
        [
            "kernelprof: 1 test's baselines kept (collected, not run)",
            "deselected (-k, -m, --deselect) or left out by a conftest or plugin: --kernelprof-prune "
            "deletes nothing of theirs",
        ],
    ]
    # Issue 32: the heading is a separator line's; it fits 80 columns with pytest's "- " and " -".
    assert len(f"- {sections[1][0]} -") <= 80
    assert paths["test_slow"][0].exists()
    assert legacy.exists()
    assert not paths["test_gone"][0].exists()
