"""``kernelprof --help`` and ``kernelprof diff --help``: examples and exit statuses, in 80 columns
(a new user found the statuses only in docs/traces.md, which a wheel does not ship)."""

from __future__ import annotations

import shlex

import pytest

from pytest_kernelprof.cli import CLOSED_PIPE, _parser, main


@pytest.mark.parametrize("command", [[], ["diff"]])
def test_help_ends_with_examples_and_exit_statuses(
    command: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as done:
        main([*command, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    examples, statuses = out.split("\nexamples:\n")[1].split("\n\nexit status:\n")
    assert [line.split()[0] for line in statuses.splitlines()] == ["0", "1", "2", str(CLOSED_PIPE)]
    assert "diff: the kernels or the counts of the calls differ" in statuses
    commands = [shlex.split(line.strip().split("  ")[0]) for line in examples.splitlines()]
    assert len(commands) >= 2
    for example in commands:  # each example is a command the parser takes
        assert example[0] == "kernelprof"
        assert _parser().parse_args(example[1:]).command == (command or example[1:2])[0]
