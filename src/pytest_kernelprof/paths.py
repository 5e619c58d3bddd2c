"""The files the plugin writes: names made from test ids (readable, unique, safe on every
filesystem), and atomic writes, so that a reader never sees half a file and a failure
never loses the file that was there. And the plugin's own files, whose frames a warning or a
failure skips to point at the user's line."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
MAX_STEM = 100

# The package's folder as Python and pytest spell its frames' files: made absolute, links kept
# (not resolved), as ``co_filename`` and a traceback entry's path are.
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def is_own_file(filename: str | os.PathLike[str]) -> bool:
    """Whether ``filename`` (a frame's ``co_filename``, a traceback entry's path) is one of this
    package's files: the whole of pytest_kernelprof, so that the user's line is found however deep
    the plugin's own calls went (a rule in checks/ warns through model/)."""
    return os.path.abspath(filename).startswith(_PACKAGE)


# A ``with`` block's end runs the plugin's generator from contextlib's ``__exit__``.
_CONTEXTLIB = os.path.abspath(contextlib.__file__)


def callers_stacklevel() -> int:
    """The ``stacklevel`` for a ``warnings.warn`` made in the caller of this function that points
    at the first frame outside pytest_kernelprof (and contextlib, for the end of a ``with``
    block): the user's line that asked, however deep the plugin's own calls went."""
    frame, level = sys._getframe(2), 2
    while frame is not None and (is_own_file(frame.f_code.co_filename) or frame.f_code.co_filename == _CONTEXTLIB):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def _safe_stem(text: str) -> str:
    """``text`` in the characters every filesystem takes, plus a short hash of ``text`` where
    it could be confused with another: where characters were replaced (``test_k[a/b]`` and
    ``test_k[a_b]``, ``test_α`` and ``test_β``), where upper case would meet its lower case
    on a case-insensitive filesystem (macOS, Windows), and where the name was cut short.
    The hash is of the UTF-8 text, so the name is the same on every run and platform.
    """
    stem = _UNSAFE.sub("_", text.replace("::", "__")).strip("_.") or "test"
    if stem == text and text == text.lower() and len(text) <= MAX_STEM:
        return stem
    return f"{stem[:MAX_STEM]}-{_short_hash(text)}"


def trace_file_name(nodeid: str, index: int) -> str:
    """A file name for the ``index``-th profile of a test: readable, unique, filesystem-safe."""
    suffix = f"-{index + 1}" if index else ""
    return f"{_safe_stem(nodeid)}{suffix}.json.gz"


def name_in_module(nodeid: str) -> str:
    """The part of a node id after its module: ``tests/test_a.py::TestX::test_k[p]`` -> ``TestX::test_k[p]``."""
    return nodeid.split("::", 1)[1] if "::" in nodeid else nodeid


def baseline_file_name(test_name: str) -> str:
    """``test_mlp`` -> ``test_mlp.json``; ``TestX::test_mlp[bf16]`` -> ``TestX__test_mlp_bf16-<hash>.json``.

    ``test_name`` is the node id's part after the module (:func:`name_in_module`), so that
    tests of two classes in one module get two files."""
    return f"{_safe_stem(test_name)}.json"


def legacy_baseline_file_name(function_name: str) -> str:
    """The name pytest-kernelprof 0.1 gave a baseline file: the test's name without its class,
    every run of other characters replaced by ``_`` (so that distinct tests could share it);
    read still, and renamed by ``--kernelprof-update``."""
    stem = _UNSAFE.sub("_", function_name.replace("::", "__")).strip("_.")
    if len(stem) > 120:
        stem = stem[:100] + "-" + hashlib.sha1(function_name.encode()).hexdigest()[:12]
    return f"{stem}.json"


def _new_file_mode() -> int:
    # The umask can only be read by setting it; set it straight back.
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str], suffix: str = ".tmp") -> Iterator[str]:
    """A temporary path beside ``target`` to write to; renamed onto ``target`` when the block
    ends without an error, removed in any case. The folder is created if need be.

    The file gets ``target``'s mode where it exists, else the mode a plain ``open`` would
    give it (0666 less the umask), not the 0600 of a temporary file: baselines go into
    version control, traces are shared.

    A ``target`` that is a link is written through: the file it points to is replaced, the link
    stays. One that is no regular file (a folder, a named pipe, a device such as ``/dev/stdout``)
    is refused, since the rename would replace it rather than write into it; and an error about
    the temporary file (a folder where none can be made, a full disk) names ``target`` instead,
    the path the caller was given."""
    named = os.fspath(target)
    try:
        mode: int | None = os.stat(named).st_mode  # through a link, as open() would
    except FileNotFoundError:  # or a link to nothing yet: written where it points
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        what = file_kind(mode)
        code = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
        raise OSError(
            code,
            f"not a regular file but {what}: a file is written beside it and renamed onto it, which would "
            "replace it; name a file",
            named,
        )
    real = os.path.realpath(named) if os.path.islink(named) else named
    directory = os.path.dirname(real) or "."
    os.makedirs(directory, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{_cut(os.path.basename(real), suffix)}.", suffix=suffix, dir=directory)
    except OSError as exc:
        raise _named(exc, named, f"making a temporary file in {directory} to rename onto it") from None
    os.close(fd)
    try:
        os.chmod(tmp, _new_file_mode() if mode is None else stat.S_IMODE(mode))
        yield tmp
        os.replace(tmp, real)
    except OSError as exc:
        if tmp not in (exc.filename, exc.filename2):
            raise
        raise _named(exc, named, "") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)


_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a named pipe",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def file_kind(mode: int) -> str:
    """What a file of ``mode`` that is not a regular file is, in words: "a named pipe"."""
    return _KINDS.get(stat.S_IFMT(mode), "not a file")


# The longest file name most filesystems take, in bytes; mkstemp adds 8 characters.
_NAME_MAX = 255
_RANDOM = 8


def _cut(name: str, suffix: str) -> str:
    """``name`` short enough that ``.name.XXXXXXXX{suffix}`` is a name the filesystem takes."""
    room = _NAME_MAX - len(os.fsencode(suffix)) - _RANDOM - 2
    while len(os.fsencode(name)) > room:
        name = name[:-1]
    return name


def _named(exc: OSError, target: str, doing: str) -> OSError:
    """``exc`` (its type, its errno) about ``target`` rather than the temporary file."""
    reason = exc.strerror or str(exc)
    return type(exc)(exc.errno, f"{reason} ({doing})" if doing else reason, target)


def relative_or_whole(path: str, folder: str | os.PathLike[str]) -> str:
    """``path`` relative to ``folder``, ``..`` included; whole where no relative path joins them
    (another drive, on Windows)."""
    try:
        return os.path.relpath(path, folder)
    except ValueError:
        return path


def short_path(path: str) -> str:
    """``path`` relative to the working directory where it lies below it, else as given."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith("..") else relative
