"""``TraceCapture.export_trace``: a loaded trace is saved as it was loaded, or refused with a reason;
never another trace, half of one, or a wait on a pipe."""

from __future__ import annotations

import gzip
import os
import shutil
import threading
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.api import TraceCapture
from pytest_kernelprof.errors import TraceNotKeptError

DATA = Path(__file__).parents[2] / "data"
LINEAR = DATA / "h200_linear_eager.json.gz"


def _loaded(path: Path) -> TraceCapture:
    return TraceCapture(load_trace(path), None, path=str(path))


def test_an_unchanged_trace_is_saved_as_it_was_loaded(tmp_path: Path) -> None:
    source = tmp_path / "t.json.gz"
    shutil.copy(LINEAR, source)
    capture = _loaded(source)
    capture.export_trace(tmp_path / "out.json")
    assert (tmp_path / "out.json").read_bytes() == gzip.decompress(LINEAR.read_bytes())
    assert len(load_trace(tmp_path / "out.json").kernels) == len(capture.profile.kernels)


def test_a_trace_loaded_by_a_relative_path_is_saved_after_a_change_of_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An adversarial probe: load_trace("t.json.gz"), then monkeypatch.chdir: the export said the
    # file "changed since it was loaded" (it read another folder's, or none).
    shutil.copy(LINEAR, tmp_path / "t.json.gz")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    capture = TraceCapture(load_trace("t.json.gz"), None, path="t.json.gz")
    monkeypatch.chdir(tmp_path / "sub")
    capture.export_trace(tmp_path / "out.json")
    assert (tmp_path / "out.json").read_bytes() == gzip.decompress(LINEAR.read_bytes())


@pytest.mark.parametrize("how", ["truncated", "another trace"])
def test_a_trace_file_changed_since_it_was_loaded_is_not_saved(tmp_path: Path, how: str) -> None:
    # The test rewrote the file it loaded: the export read a half gzip stream (EOFError, which
    # the plugin did not catch: INTERNALERROR for the whole session), or saved the other trace.
    source = tmp_path / "t.json.gz"
    shutil.copy(LINEAR, source)
    capture = _loaded(source)
    data = source.read_bytes()
    if how == "truncated":
        source.write_bytes(data[: len(data) // 2])
    else:
        source.write_bytes(gzip.compress(gzip.decompress(data) + b" " * 10))
    with pytest.raises(TraceNotKeptError, match=r"t\.json\.gz changed since it was loaded"):
        capture.export_trace(tmp_path / "out.json.gz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json.gz"]  # no copy, no temporary file


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_trace_read_from_a_named_pipe_is_refused_without_opening_it_again(tmp_path: Path) -> None:
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    # A reader of our own first, so that the writer's end opens at once and the loader reads all.
    held = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    sent = os.open(fifo, os.O_WRONLY)

    def write() -> None:
        with open(sent, "wb") as pipe:
            pipe.write(LINEAR.read_bytes())

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        capture = _loaded(fifo)
    finally:
        writer.join(30)
        os.close(held)
    outcome: list[BaseException | None] = []

    def export() -> None:
        try:
            capture.export_trace(tmp_path / "out.json.gz")
        except BaseException as exc:  # handed to the test's thread
            outcome.append(exc)
        else:
            outcome.append(None)

    exporter = threading.Thread(target=export, daemon=True)
    exporter.start()
    exporter.join(10)
    try:
        assert outcome, "the export blocked opening the named pipe"
    finally:
        if exporter.is_alive():  # let the blocked open return: a writer opens the pipe
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            exporter.join(10)
    assert isinstance(outcome[0], OSError)
    assert "a named pipe, read once as the trace was loaded" in str(outcome[0])
    assert not (tmp_path / "out.json.gz").exists()
