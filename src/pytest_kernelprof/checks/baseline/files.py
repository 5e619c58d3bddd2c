"""Baseline files: read (every stored value checked), written atomically, an entry recorded
under the lock of its folder, and where a test's file is.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...errors import BaselineError
from ...model import KernelProfile
from ...paths import atomic_path, baseline_file_name, legacy_baseline_file_name, name_in_module
from ...tables import display_name, plural
from .buckets import BUCKET_FIELDS, BUCKET_KEY, BucketRanges
from .signature import FORMAT_VERSION, MISSING, Signature, bad_value, differences, known_keys

# The keys of a file and of an entry of a sweep's bucket (its ranges' are BUCKET_FIELDS).
FILE_KEYS = ("format", "archs")
BUCKET_ENTRY_KEYS = ("device", BUCKET_KEY)


def read_baseline(path: Path) -> dict[str, Any]:
    """The parsed file ({} when absent); a BaselineError when it exists but is not a baseline."""
    __tracebackhide__ = True
    fix = "fix it from version control, or delete it and run with --kernelprof-update to record it again"
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read the baseline ({exc.strerror or exc})") from None
    try:
        # utf-8-sig: a byte order mark that an editor (on Windows) put first is skipped, as the
        # trace reader does; the file is written back without one.
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        offset = exc.start + len(raw) - len(exc.object)  # the codec's offset is past the mark
        raise BaselineError(
            f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {offset}); {fix}"
        ) from None
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates(path, fix))
    except ValueError as exc:
        raise BaselineError(f"{path}: not valid JSON ({exc}); {fix}") from None
    except RecursionError:
        raise BaselineError(f"{path}: not a pytest-kernelprof baseline (nested too deeply); {fix}") from None
    if not isinstance(data, dict) or "format" not in data:
        raise BaselineError(
            f"{path}: not a pytest-kernelprof baseline (a JSON object with 'format' and 'archs' keys); {fix}"
        )
    version = data["format"]
    if type(version) is int and version > FORMAT_VERSION:  # not "fix it": the file is good, the reader old
        raise BaselineError(
            f"{path}: baseline format {version} is newer than this pytest-kernelprof reads (format "
            f"{FORMAT_VERSION}): upgrade pytest-kernelprof to compare against it"
        )
    if type(version) is not int or version != FORMAT_VERSION:
        raise BaselineError(
            f"{path}: unknown baseline format {version!r} (this pytest-kernelprof reads format {FORMAT_VERSION}); {fix}"
        )
    try:
        known_keys(data, FILE_KEYS, "", "a key of a baseline file")
    except ValueError as exc:
        raise BaselineError(f"{path}: {exc}; {fix}") from None
    if not isinstance(data.get("archs"), dict):
        raise BaselineError(f"{path}: {bad_value('archs', data.get('archs', MISSING), 'an object')}; {fix}")
    for arch, entries in data["archs"].items():
        if not isinstance(entries, dict):
            raise BaselineError(f"{path}: entry {arch!r} is not an object; {fix}")
        for name, entry in entries.items():
            if not isinstance(entry, dict):
                raise BaselineError(f"{path}: entry {arch}/{name} is not an object; {fix}")
            try:
                if BUCKET_KEY in entry:
                    known_keys(entry, BUCKET_ENTRY_KEYS, "", "a key of a sweep's baseline entry")
                    if isinstance(entry[BUCKET_KEY], dict):
                        known_keys(entry[BUCKET_KEY], BUCKET_FIELDS, BUCKET_KEY, "a field of a sweep's bucket")
                    BucketRanges.from_json(entry[BUCKET_KEY])
                else:
                    Signature.from_json(entry)
            except ValueError as exc:
                raise BaselineError(f"{path}: entry {arch}/{name}: {exc}; {fix}") from None
    return data


def _no_duplicates(path: Path, fix: str) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """An object_pairs_hook that refuses a key twice in one object: json keeps the last, so a
    hand edit that adds a key (or an arch) beside the one there would silently drop that one."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for key, value in pairs:
            if key in data:
                raise BaselineError(f"{path}: the key {key!r} appears twice in one object; {fix}")
            data[key] = value
        return data

    return hook


def write_baseline(path: Path, data: Mapping[str, Any]) -> None:
    """Write atomically: a temporary file in the same folder, then a rename."""
    __tracebackhide__ = True
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    try:
        with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise _unwritable(path, exc) from None


def _unwritable(path: Path, exc: OSError) -> BaselineError:
    # The error names the temporary file it failed on: name the baseline, and its folder's part.
    return BaselineError(
        f"cannot write the baseline {path}: {exc.strerror or exc} (a baseline is written to a temporary "
        f"file in {path.parent} and renamed: that folder must be writable)"
    )


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the lock of ``path``'s folder for a read-modify-write of ``path``: two processes
    that record into one baseline file (xdist workers, CI jobs on one checkout, a second
    terminal) take turns, so that neither loses the other's entry. The folder, not the file,
    because a write replaces the file. Created where missing (a first entry)."""
    __tracebackhide__ = True
    release = _lock(path)
    try:
        yield
    finally:
        release()


def _lock(path: Path) -> Callable[[], None]:
    """Wait for the lock of ``path``'s folder; what releases it. On Windows, a file in the
    temporary folder named after it (a folder cannot be locked there)."""
    __tracebackhide__ = True
    folder = path.parent
    existing = folder
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        raise BaselineError(f"cannot write the baseline {path}: {existing} is a file, where a folder must be")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if sys.platform == "win32":  # pragma: no cover - Windows (the suite runs on Linux)
            import msvcrt

            key = hashlib.sha1(str(folder.resolve()).encode()).hexdigest()[:16]
            handle = open(Path(tempfile.gettempdir()) / f"kernelprof-{key}.lock", "a+b")  # noqa: SIM115
            handle.seek(0)
            while True:
                try:
                    msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)  # tries for 10 s, then raises
                    break
                except OSError:
                    continue

            def release() -> None:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
                handle.close()

            return release
        import fcntl

        descriptor = os.open(folder, os.O_RDONLY)
    except OSError as exc:
        raise _unwritable(path, exc) from None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
    except OSError as exc:
        if exc.errno not in _NO_LOCKS:
            os.close(descriptor)
            raise _unwritable(path, exc) from None
        # A file system that keeps no locks (some network mounts): write as before there is one.
    return lambda: os.close(descriptor)  # closing it releases the lock


_NO_LOCKS = frozenset((errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL))


# What --kernelprof-update did to one entry.
WRITTEN, UPDATED, UNCHANGED = "written", "updated", "unchanged"


def record(path: Path, arch: str, name: str, prof: KernelProfile, *, legacy: Path | None = None) -> str:
    """Write or replace the entry ``arch/name``, keeping every other entry of the file;
    ``written`` (a new entry), ``updated`` or ``unchanged`` (the file is left as it was).

    Where ``path`` does not exist yet and ``legacy`` (the file under the old naming) does,
    its entries move into ``path`` and ``legacy`` is removed."""
    __tracebackhide__ = True
    return record_entry(path, arch, name, Signature.of(prof).to_json(prof), legacy=legacy)


def record_entry(path: Path, arch: str, name: str, entry: Mapping[str, Any], *, legacy: Path | None = None) -> str:
    """:func:`record` of an entry made already (a sweep's bucket)."""
    __tracebackhide__ = True
    with locked(path):
        return _record(path, arch, name, dict(entry), legacy)


def _record(path: Path, arch: str, name: str, entry: dict[str, Any], legacy: Path | None) -> str:
    __tracebackhide__ = True
    data = read_baseline(path)
    moved = False
    if not data and legacy is not None and legacy != path:
        data = read_baseline(legacy)
        moved = bool(data)
    data = data or {"format": FORMAT_VERSION, "archs": {}}
    before = data["archs"].get(arch, {}).get(name)
    outcome = WRITTEN if before is None else UNCHANGED if before == entry else UPDATED
    if outcome != UNCHANGED or moved:
        data["archs"].setdefault(arch, {})[name] = entry
        write_baseline(path, data)
    if moved and legacy is not None:
        with contextlib.suppress(FileNotFoundError):  # another xdist worker moved it first
            os.remove(legacy)
    return outcome


def entries(data: Mapping[str, Any]) -> Sequence[tuple[str, str]]:
    """Every (arch, name) entry of a parsed baseline file."""
    return [(arch, name) for arch, named in data.get("archs", {}).items() for name in named]


def baseline_paths(module: Path, nodeid: str) -> tuple[Path, Path]:
    """The baseline file of the test ``nodeid`` of ``module``, and its name under the old naming."""
    folder = module.parent / "__kernelprof__" / module.stem
    test = name_in_module(nodeid)
    return folder / baseline_file_name(test), folder / legacy_baseline_file_name(_function_name(test))


def _function_name(test: str) -> str:
    """``TestX::test_k[a::b]`` -> ``test_k[a::b]``: the name without its classes (pytest's ``item.name``)."""
    head, bracket, params = test.partition("[")
    return head.rsplit("::", 1)[-1] + bracket + params


def unguarded_lines(prof: KernelProfile) -> tuple[str, ...]:
    """What an entry written from ``prof`` cannot guard: its kernels of unknown dtype, stored as
    null and left out of the dtype comparison from then on. Said when it is written, where it is
    chosen: a trial recorded a compiled trace's Triton kernel with ``"dtype": null`` and learned
    that its dtype was never compared only from a later failure's note."""
    undated = {k.name: k for k in prof.kernels if k.dtype is None}
    names = sorted(undated)
    if not names:
        return ()
    # Inductor's: read live from their compiled code, and not to be taught by name (the same name
    # recompiled for another dtype would pass unseen: the undecoded warning's words); others: taught.
    inductor = [name for name in names if undated[name].family == "inductor"]
    live = "record it from a live profile, which reads Inductor's dtypes"
    taught = "kernelprof show on its trace prints the --kernels line that teaches a dtype"
    remedy = (
        live if len(inductor) == len(names) else taught if not inductor else f"Inductor's: {live}; others: {taught}"
    )
    shown = ", ".join(display_name(name) for name in names[:3])
    if len(names) > 3:
        shown += f", +{len(names) - 3} more"
    return (
        f"dtype not guarded: {plural(len(names), 'kernel name')} of unknown dtype, stored as null: {shown} ({remedy})",
    )


def accepted_lines(stored: object, prof: KernelProfile, mode: str, tolerance: float) -> tuple[str, ...]:
    """What an update that replaced the entry ``stored`` accepts, as a failed check's headline
    would have said it (``kernels per call: 4 -> 5``, ``count changes: ...``), the worse metrics
    first: the update run's log keeps it, where the failure that asked for it may be gone."""
    if not isinstance(stored, dict):
        return ()
    if BUCKET_KEY in stored:
        return ("the entry held a check_sweep bucket's ranges",)
    try:  # a hand-edited entry
        recorded = Signature.from_json(stored)
    except ValueError as exc:
        return (f"the stored entry was not readable ({exc})",)
    lines, worse, better = differences(recorded, Signature.of(prof), mode, tolerance)
    said = [f"worse: {change}" for change in worse]
    if lines is not None:
        at = lines.index("--- baseline")
        # Only dtypes moved: no count line comes before the diff, its ``#i`` lines tell them.
        said.extend(lines[:at] or [line for line in lines[at:] if line.startswith("#")])
    said.extend(f"better: {change}" for change in better)
    if not said:
        device = stored.get("device")
        said.append(
            f"device: {device} -> {prof.device}"
            if device != prof.device
            else f"no change the check compares (names compared: {mode}), only names or fields it does not"
        )
    return tuple(said)
