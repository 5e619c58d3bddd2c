"""A test's report sections (``plugin/report_sections.py``): the saved traces' lines hold a
command to paste, which must stay one command whatever the trace folder is named."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.api.captures import Capture, TraceCapture
from pytest_kernelprof.plugin.report_sections import report_sections, save_traces
from tests.helpers import DATA


class _Capture:
    def export_trace(self, path: Path) -> None:
        path.write_text("{}")


def test_the_command_to_show_a_saved_trace_is_quoted_for_the_shell(tmp_path: Path) -> None:
    folder = tmp_path / "ci traces; rm -rf ~"
    folder.mkdir()
    (line,) = save_traces(folder, "tests/test_a.py::test_b", [_Capture()])  # type: ignore[list-item]
    shown, _, command = line.partition("  (kernelprof show ")
    words = shlex.split(command.removesuffix(")"))
    assert len(words) == 1
    assert Path(words[0]).read_text() == "{}"
    assert Path(shown).parent == folder


def test_a_trace_folder_named_as_a_workflow_command_starts_no_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    written = Path("::error::folder")
    written.mkdir()
    missing = Path("::error::missing\n::error::second")
    lines = save_traces(written, "t.py::t", [_Capture()])  # type: ignore[list-item]
    lines += save_traces(missing, "t.py::t", [_Capture()])  # type: ignore[list-item]
    assert "not written" in lines[1]
    for line in lines:
        assert not [part for part in line.splitlines() if part.lstrip().startswith("::")], line


def _section(captures: list[Capture], rootpath: Path | None = None) -> str:
    [(_, text)] = report_sections("t.py::t", captures, failed=True, trace_dir=None, save_from=None, rootpath=rootpath)
    return text


def test_a_loaded_traces_section_ends_with_the_command_that_prints_it_again(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Trial: a failure's table (each kernel's median over the calls, "median us") and
    # `kernelprof show`'s (one call's own, "call 2 us") disagreed, and the failure never
    # said that `show --medians` prints its table.
    monkeypatch.chdir(DATA.parent.parent)
    path = os.path.relpath(DATA / "h200_geglu_eager.json.gz")
    text = _section([TraceCapture(load_trace(path), None, path=path)])
    *table, last = text.splitlines()
    pointer = f"kernelprof show --medians {path} prints this table (plain show: call 2's own times beside them)"
    assert last == pointer
    from pytest_kernelprof.cli import main

    assert main(["show", "--medians", path]) == 0
    assert capsys.readouterr().out.splitlines()[: len(table)] == table
    # Plain show as the line says: call 2's own times, the table's medians beside them.
    assert main(["show", path]) == 0
    assert "  call 2 us  median us  " in capsys.readouterr().out
    # An absolute path under the rootdir, as the section's head names it.
    absolute = str(DATA / "h200_geglu_eager.json.gz")
    text = _section([TraceCapture(load_trace(absolute), None, path=absolute)], rootpath=DATA.parent.parent)
    assert text.splitlines()[-1] == pointer
    assert text.startswith(f"KernelProfile from {path} ")


def test_a_live_profiles_section_has_no_such_command() -> None:
    # No trace file to show: the `kernelprof traces` section names one where it was saved.
    text = _section([Capture(load_trace(DATA / "h200_geglu_eager.json.gz"), None)])
    assert "--medians" not in text
