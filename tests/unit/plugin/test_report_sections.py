"""A test's report sections (``plugin/report_sections.py``): the saved traces' lines hold a
command to paste, which must stay one command whatever the trace folder is named."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from pytest_kernelprof.plugin.report_sections import save_traces


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
