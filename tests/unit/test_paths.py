"""Atomic writes (``paths.atomic_path``) at targets that are not plain files: a link is written
through, what is no regular file is refused, and every error names the target the caller named,
never the temporary file beside it (an adversarial review of ``kernelprof show --html``)."""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path

import pytest

from pytest_kernelprof.cli import main
from pytest_kernelprof.paths import atomic_path
from tests.helpers import DATA

posix = pytest.mark.skipif(sys.platform == "win32", reason="links and named pipes of POSIX")


def _write(target: Path | str, text: str = "new") -> None:
    with atomic_path(target) as tmp:
        Path(tmp).write_text(text)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@posix
def test_a_link_is_written_through_to_its_target(tmp_path: Path) -> None:
    # The link was replaced by a regular file, its target left as it was.
    real, link = tmp_path / "real.html", tmp_path / "link.html"
    real.write_text("old")
    real.chmod(0o640)
    link.symlink_to("real.html")
    _write(link)
    assert link.is_symlink()
    assert real.read_text() == "new"
    assert real.stat().st_mode & 0o777 == 0o640
    dangling = tmp_path / "dangling.html"
    dangling.symlink_to("made.html")
    _write(dangling)
    assert dangling.is_symlink()
    assert (tmp_path / "made.html").read_text() == "new"
    assert _leftovers(tmp_path) == []


@posix
@pytest.mark.parametrize(
    ("make", "what"),
    [(os.mkfifo, "a named pipe"), (os.mkdir, "a folder")],
    ids=["fifo", "folder"],
)
def test_what_is_no_regular_file_is_refused_naming_it(tmp_path: Path, make: object, what: str) -> None:
    target = tmp_path / "target"
    make(target)  # type: ignore[operator]
    kind = target.stat().st_mode
    with pytest.raises(OSError, match=rf"not a regular file but {what}: .* name a file") as info:
        _write(target)
    assert info.value.filename == str(target)
    assert ".tmp" not in str(info.value)
    assert target.stat().st_mode == kind  # still what it was, not replaced by a file
    assert _leftovers(tmp_path) == []


def test_a_device_is_refused_not_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As root, `--html /dev/stdout` replaced the device node with a regular file. A stand-in: a
    # test at a real device would replace it wherever the fix is missing.
    target = tmp_path / "device"
    target.write_text("a stand-in")
    real_stat = os.stat

    def device_stat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        found = real_stat(path, *args, **kwargs)  # type: ignore[arg-type]
        return os.stat_result((stat.S_IFCHR | 0o666, *found[1:])) if os.fspath(path) == str(target) else found  # type: ignore[call-overload]

    monkeypatch.setattr(os, "stat", device_stat)
    with pytest.raises(OSError, match="not a regular file but a character device") as info:
        _write(target)
    assert info.value.errno == errno.EINVAL
    monkeypatch.undo()
    assert target.read_text() == "a stand-in"
    assert _leftovers(tmp_path) == []


def test_the_longest_name_a_folder_takes_is_written(tmp_path: Path) -> None:
    # The temporary name added 15 characters: a valid name of 255 was "File name too long".
    target = tmp_path / ("a" * 250 + ".html")
    _write(target)
    assert target.read_text() == "new"
    assert _leftovers(tmp_path) == []


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="Linux's /proc")
def test_a_folder_where_no_file_can_be_made_is_named_with_the_target() -> None:
    with pytest.raises(OSError, match="a temporary file in /proc") as info:
        _write("/proc/version")
    assert info.value.filename == "/proc/version"
    assert ".version." not in str(info.value)


def test_an_error_about_the_temporary_file_names_the_target(tmp_path: Path) -> None:
    target = tmp_path / "page.html"
    with pytest.raises(OSError, match=os.strerror(errno.ENOSPC)) as info, atomic_path(target) as tmp:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), tmp)
    assert info.value.errno == errno.ENOSPC
    assert info.value.filename == str(target)
    with pytest.raises(FileNotFoundError) as other, atomic_path(target):
        open(tmp_path / "elsewhere")  # noqa: SIM115 - an error about another file stays as it is
    assert other.value.filename == str(tmp_path / "elsewhere")


@posix
def test_show_html_at_a_folder_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    os.mkdir("dd")
    assert main(["show", str(DATA / "h200_geglu_eager.json.gz"), "--html", "dd"]) == 2
    captured = capsys.readouterr()
    assert captured.err == "kernelprof: error: --html dd is a folder; name a file, such as dd/timeline.html\n"
    assert captured.out == ""  # said before the report, not after it


def test_the_packages_own_files_are_told_from_the_users(tmp_path: Path) -> None:
    import pytest_kernelprof
    from pytest_kernelprof import paths
    from pytest_kernelprof.model import unknowns
    from pytest_kernelprof.paths import is_own_file

    package = Path(pytest_kernelprof.__file__).parent
    assert is_own_file(paths.__file__)
    assert is_own_file(unknowns.__file__)  # a module a level down: the whole package, not paths' folder
    assert is_own_file(package / "plugin" / ".." / "checks" / "sweep.py")  # spelled as a frame may be
    assert not is_own_file(__file__)
    assert not is_own_file(f"{package}_extra/sweep.py")  # a sibling folder whose name starts alike
    assert not is_own_file(package)
