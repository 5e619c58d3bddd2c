"""The files the plugin writes: one name per node id, old names still found, the umask's mode,
errors that name the file, and a session that ends normally whatever a baseline file holds."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_kernelprof import BaselineError, load_trace
from pytest_kernelprof.checks.baseline import read_baseline, record
from pytest_kernelprof.paths import (
    atomic_path,
    baseline_file_name,
    legacy_baseline_file_name,
    trace_file_name,
)
from tests.helpers import DATA

# Pairs of distinct tests that the 0.1 naming gave one file.
CONFUSABLE = [
    ("test_k[a/b]", "test_k[a_b]"),
    ("test_α", "test_β"),
    ("TestA::test_k", "TestB::test_k"),
    ("test_K", "test_k"),  # one file on a case-insensitive filesystem (macOS, Windows)
    ("test_k[x y]", "test_k[x\ty]"),
]


@pytest.mark.parametrize(("a", "b"), CONFUSABLE)
def test_distinct_tests_get_distinct_files(a: str, b: str) -> None:
    assert baseline_file_name(a).lower() != baseline_file_name(b).lower()
    assert trace_file_name(f"t.py::{a}", 0).lower() != trace_file_name(f"t.py::{b}", 0).lower()


def test_names_are_readable_safe_and_the_same_everywhere() -> None:
    assert baseline_file_name("test_mlp") == "test_mlp.json"  # nothing replaced: no hash
    digest = hashlib.sha256(b"test_k[a/b]").hexdigest()[:8]
    assert baseline_file_name("test_k[a/b]") == f"test_k_a_b-{digest}.json"
    # Pinned: a name must not change between runs, platforms or releases, or baselines are lost.
    assert baseline_file_name("test_α") == "test-cee0f390.json"
    assert trace_file_name("t.py::test[x/y: z]", 1) == "t.py__test_x_y_z-52340ea3-2.json.gz"
    for name in (baseline_file_name("test_k[" + "é" * 300 + "]"), trace_file_name("x.py::" + "a" * 300, 0)):
        assert len(name) < 130
        assert all(c.isascii() and (c.isalnum() or c in "_.-") for c in name)


def test_the_old_names_are_the_old_ones() -> None:
    assert legacy_baseline_file_name("test_mlp[bf16]") == "test_mlp_bf16.json"
    assert legacy_baseline_file_name("test_k[a/b]") == legacy_baseline_file_name("test_k[a_b]")


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("umask")
def test_written_files_get_the_umask_mode_and_keep_theirs(tmp_path: Path) -> None:
    new = tmp_path / "new.json"
    with atomic_path(new) as tmp:
        Path(tmp).write_text("{}")
    assert _mode(new) == 0o644
    os.umask(0o002)
    group = tmp_path / "group.json"
    with atomic_path(group) as tmp:
        Path(tmp).write_text("{}")
    assert _mode(group) == 0o664
    os.chmod(new, 0o640)
    with atomic_path(new) as tmp:  # an update keeps the file's own mode
        Path(tmp).write_text("{}")
    assert _mode(new) == 0o640


def test_a_baseline_that_is_not_utf8_is_a_baseline_error(tmp_path: Path) -> None:
    path = tmp_path / "test_x.json"
    path.write_bytes(b'{"format": 1, "archs": {"sm90": "\xff\xfe"}}')
    with pytest.raises(BaselineError, match=r"test_x\.json: not UTF-8 text \(byte 0xff at offset 33\)"):
        read_baseline(path)
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(BaselineError, match="nested too deeply"):
        read_baseline(path)


def test_an_unwritable_baseline_is_one_line_naming_the_path(tmp_path: Path) -> None:
    (tmp_path / "__kernelprof__").write_text("a file where the folder should be")
    path = tmp_path / "__kernelprof__" / "test_x.json"
    with pytest.raises(BaselineError) as info:
        record(path, "sm90", "default", load_trace(DATA / "h200_linear_eager.json.gz"))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"cannot write the baseline {path}: ")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_one_line_naming_the_path(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(BaselineError, match=f"cannot write the baseline {folder / 'x.json'}: .*Permission"):
            record(folder / "x.json", "sm90", "default", load_trace(DATA / "h200_linear_eager.json.gz"))
    finally:
        folder.chmod(0o755)


PROJECT = """
import pytest
from pathlib import Path
from pytest_kernelprof import load_trace

DATA = Path({data!r})
COMPILED, EAGER = "geglu_compiled", "geglu_eager"

def prof(name):
    return load_trace(DATA / f"h200_{{name}}.json.gz")

@pytest.mark.parametrize("p", ["a/b", "a_b"])
def test_k(kernel_baseline, p):
    kernel_baseline.check(prof(COMPILED if p == "a/b" else EAGER))

def test_α(kernel_baseline):
    kernel_baseline.check(prof(COMPILED))

def test_β(kernel_baseline):
    kernel_baseline.check(prof(EAGER))

@pytest.mark.parametrize("dtype", ["bf16"])
def test_mlp(kernel_baseline, dtype):
    kernel_baseline.check(prof(COMPILED))

def test_undecodable(kernel_baseline):
    kernel_baseline.check(prof(COMPILED))
"""


# A module whose baseline folder cannot be made: a file stands where it should be.
UNWRITABLE = """
from pathlib import Path
from pytest_kernelprof import load_trace

def test_α(kernel_baseline):
    kernel_baseline.check(load_trace(Path({trace!r})))
"""


def _kernels(path: Path) -> int:
    return len(json.loads(path.read_text())["archs"]["sm90"]["default"]["kernels"])


def test_files_per_node_id_old_names_and_bad_files(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_p=PROJECT.format(data=str(DATA)))
    folder = pytester.path / "__kernelprof__" / "test_p"
    folder.mkdir(parents=True)
    compiled = load_trace(DATA / "h200_geglu_compiled.json.gz")
    old = folder / "test_mlp_bf16.json"  # written by 0.1 for test_mlp[bf16]
    record(old, "sm90", "default", compiled)
    # One pair of tests that the old naming confused, each with its own signature on file;
    # a shared file would hold one of them, and the other test would fail.
    record(folder / baseline_file_name("test_k[a/b]"), "sm90", "default", compiled)
    record(folder / baseline_file_name("test_k[a_b]"), "sm90", "default", load_trace(DATA / "h200_geglu_eager.json.gz"))
    undecodable = folder / baseline_file_name("test_undecodable")
    undecodable.write_bytes(b"\xff\xfe{}")

    result = pytester.runpytest("-rfEp")
    # The old file is still read (and passes), so are the pair's; test_α and test_β have no
    # baseline yet; the bad file fails its test alone, and the session ends with its summary line.
    result.assert_outcomes(passed=3, failed=3)
    result.stdout.fnmatch_lines(
        [
            "FAILED test_p.py::test_α - *",
            "FAILED test_p.py::test_β - *",
            "FAILED test_p.py::test_undecodable - *",
            "PASSED test_p.py::test_k[[]a/b[]]",
            "PASSED test_p.py::test_k[[]a_b[]]",
            "PASSED test_p.py::test_mlp[[]bf16[]]",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            f"*BaselineError: {undecodable}: not UTF-8 text (byte 0xff at offset 0)*",
            "*- kernelprof: 1 baseline file read under the old naming -*",
            f"mv '{old}' '{folder / baseline_file_name('test_mlp[bf16]')}'",
        ]
    )
    result.stdout.no_fnmatch_line("*INTERNALERROR*")
    assert result.stdout.lines[-1].startswith("=")
    assert "3 failed, 3 passed" in result.stdout.lines[-1]

    (pytester.path / "__kernelprof__" / "test_q").write_text("a file where the folder should be")
    pytester.makepyfile(test_q=UNWRITABLE.format(trace=str(DATA / "h200_geglu_compiled.json.gz")))
    result = pytester.runpytest("--kernelprof-update", "-k", "not undecodable", "-rfEp")
    result.assert_outcomes(passed=5, failed=1, deselected=1)
    # test_α and test_β written, the pair and the old file unchanged, the old file moved.
    result.stdout.fnmatch_lines(["*kernelprof: 2 baselines written, 3 unchanged; 1 file renamed*"])
    assert not old.exists()
    names = sorted(p.name for p in folder.iterdir())
    assert len(names) == 6  # five tests, five files, and the undecodable one
    assert baseline_file_name("test_mlp[bf16]") in names  # the old file, under its new name
    # Each of the two tests the old naming confused got its own file, with its own signature.
    assert (_kernels(folder / baseline_file_name("test_α")), _kernels(folder / baseline_file_name("test_β"))) == (4, 5)
    # The unwritable baseline fails its test with one line that names the path.
    target = pytester.path / "__kernelprof__" / "test_q" / baseline_file_name("test_α")
    result.stdout.fnmatch_lines(
        [
            "*_ test_α _*",
            f"E   *BaselineError: cannot write the baseline {target}: {target.parent} is a file, where a folder"
            " must be",
            "FAILED test_q.py::test_α - *",
        ]
    )
    result.stdout.no_fnmatch_line("*tempfile*")
    result.stdout.no_fnmatch_line("*def write_baseline*")  # the plugin's frames are hidden
