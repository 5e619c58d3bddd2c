"""The trace size cap holds before the memory is spent: bytes are counted as they are read or
decompressed, and reading stops at the cap; a gzip bomb is refused without unpacking it into
memory; a file that grows while it is read stops at the cap too."""

from __future__ import annotations

import gzip
import io
import os
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.errors import IncompleteProfileError, TraceError
from pytest_kernelprof.traces import files, trace_bytes

MB = 1 << 20
CAP_MB = 256


# One event that records work: a trace of none is refused once read (issue 34), which tests of
# the reading's bounds are not about.
_CPU_OP = b'{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 1}'


def _bomb(path: Path, megabytes: int, inner: bytes = b" ") -> Path:
    """A trace of one CPU op whose one string of spaces makes ``megabytes`` MB of JSON, gzipped to
    about a thousandth of that."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = inner * MB
    parts = [packer.compress(b'{"traceEvents": [' + _CPU_OP + b'], "padding": "')]
    parts += [packer.compress(chunk) for _ in range(megabytes)]
    parts += [packer.compress(b'"}'), packer.flush()]
    path.write_bytes(b"".join(parts))
    return path


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Past the cap is all a bomb needs to be: reading stops there (4 times the cap took 3.3 s of
    # CPU to pack, this 0.9 s).
    return _bomb(tmp_path_factory.mktemp("bomb") / "bomb.json.gz", CAP_MB + 16)


def _peak(fn: Any) -> tuple[float, BaseException | None]:
    """Peak Python memory (MB) while ``fn`` runs, and what it raised."""
    tracemalloc.start()
    raised = None
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001 - told to the caller
        raised = exc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak / MB, raised


def test_a_gzip_bomb_is_refused_before_it_fills_memory(bomb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(trace_bytes.MAX_TRACE_MB_ENV, str(CAP_MB))
    assert bomb.stat().st_size < MB  # a thousandth of the 272 MB it unpacks to
    peak, raised = _peak(lambda: load_trace(bomb))
    assert isinstance(raised, TraceError)
    assert f"larger than {CAP_MB} MB, the most a trace is read to" in str(raised)
    assert peak < trace_bytes._BOMB_BYTES / MB + 16, f"{peak:.0f} MB held for a {CAP_MB} MB cap"


def test_a_trace_that_compresses_like_a_bomb_but_fits_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted first, then unpacked once into one buffer: the cap, not the ratio, decides."""
    monkeypatch.setenv(trace_bytes.MAX_TRACE_MB_ENV, str(CAP_MB))
    fits = _bomb(tmp_path / "fits.json.gz", CAP_MB // 2)
    peak, raised = _peak(lambda: trace_bytes._trace_bytes(str(fits)))
    assert raised is None
    assert peak < CAP_MB // 2 * 1.2 + 8, f"{peak:.0f} MB held for a {CAP_MB // 2} MB trace"
    assert not load_trace(fits).has_device_activity


def test_gzip_members_and_padding_still_read(tmp_path: Path, trace: Any) -> None:
    """Two gzip members (as ``cat a.gz b.gz`` makes), zero padding after the last."""
    text = gzip.decompress(trace("linear_eager").read_bytes())
    half = len(text) // 2
    path = tmp_path / "members.json.gz"
    path.write_bytes(gzip.compress(text[:half]) + gzip.compress(text[half:]) + b"\0" * 100)
    assert load_trace(path).kernels.names == load_trace(trace("linear_eager")).kernels.names


class _Endless(io.RawIOBase):
    """A file that grows as fast as it is read: ``fstat`` said it was small."""

    def __init__(self) -> None:
        self.given = 0

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return -1

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            raise AssertionError("read to the end of an endless file")
        self.given += size
        return b'{"traceEvents": ['.ljust(size) if self.given == size else b" " * size

    def __enter__(self) -> _Endless:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def test_a_file_that_grows_while_it_is_read_stops_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(trace_bytes.MAX_TRACE_MB_ENV, "8")
    endless = _Endless()
    small = os.stat_result((0o100644, 0, 0, 1, 0, 0, 100, 0, 0, 0))  # a regular file of 100 bytes
    monkeypatch.setattr(trace_bytes, "_open", lambda name: endless)
    monkeypatch.setattr(trace_bytes.os, "fstat", lambda fd: small)
    with pytest.raises(TraceError, match="larger than 8 MB, the most a trace is read to"):
        load_trace("growing.json")
    assert endless.given <= 8 * MB + trace_bytes._CHUNK + 101


def _spaces(path: Path, megabytes: int, event: bytes = b"") -> Path:
    """A plain trace of ``megabytes`` MB: an event list of ``event`` and spaces, no GPU record."""
    with path.open("wb") as handle:
        handle.write(b'{"traceEvents": [' + event)
        for _ in range(megabytes):
            handle.write(b" " * MB)
        handle.write(b"]}")
    return path


def test_under_the_default_cap_a_gzip_bomb_is_refused_by_its_ratio(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An adversarial review: under the default cap (4096 MiB) a 4 MB gzip unpacked to 4 GB and
    # took 8 GB to read. Traces compress 8 to 20 times; a bomb about a thousand.
    monkeypatch.delenv(trace_bytes.MAX_TRACE_MB_ENV, raising=False)
    packed = _bomb(tmp_path / "bomb.json.gz", 80)
    peak, raised = _peak(lambda: load_trace(packed))
    assert isinstance(raised, TraceError), raised
    assert str(raised) == (
        f"{packed}: a gzip stream that unpacks to more than 100 times its size, as a gzip bomb does (a trace "
        f"compresses 8 to 20 times): refused once it passed 64 MB (set {trace_bytes.MAX_TRACE_MB_ENV} to "
        "read it, up to that many megabytes)"
    )
    assert peak < trace_bytes._BOMB_BYTES / MB + 16, f"{peak:.0f} MB held"


@pytest.mark.parametrize(("event", "refused"), [(b"", True), (_CPU_OP, False)], ids=["spaces", "cpu-op"])
def test_a_trace_without_gpu_records_is_read_without_a_decoded_copy(
    tmp_path: Path, event: bytes, refused: bool
) -> None:
    # The review's 1.2 GB of spaces in a gzip of 1.2 MB took 2.4 GB: a trace without GPU records is
    # read again for what it holds instead, and that read decoded the whole text beside its bytes.
    # Spaces alone record nothing: refused (issue 34), once read to their end.
    pytest.importorskip("msgspec")
    path = _spaces(tmp_path / "spaces.json", 96, event)
    peak, raised = _peak(lambda: load_trace(path))
    if refused:
        assert isinstance(raised, IncompleteProfileError), raised
        assert "the trace recorded nothing" in str(raised)
    else:
        assert raised is None
    assert peak < 96 * 1.1 + 8, f"{peak:.0f} MB held for a 96 MB trace"


def test_running_out_of_memory_while_reading_says_what_to_do(trace: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The review: under `ulimit -v` the decode of a big trace's text ended `kernelprof show` in a
    # MemoryError traceback.
    def exhausted(*args: object) -> None:
        raise MemoryError

    monkeypatch.setattr(files, "read_trace_data", exhausted)
    with pytest.raises(TraceError) as info:
        load_trace(trace("linear_eager"))
    assert str(info.value) == (
        f"{trace('linear_eager')}: out of memory while reading the trace: reading takes about the trace's "
        "decompressed size in memory, twice that or more without msgspec (pip install 'pytest-kernelprof[fast]'); "
        "read it where more memory is free, or set KERNELPROF_MAX_TRACE_MB to refuse traces this big before "
        "they are read"
    )
