"""Options and ini keys -> the session's Settings, and bad values -> usage errors.

``pytester.parseconfigure`` configures a session in this process without running tests (no
torch import, no subprocess), so every source of every setting is checked here; the
pytester runs in the other tests/plugin modules check that the settings take effect (that a
usage error ends a real run, on stderr, is tests/plugin/test_bounds.py's). One run here: --help.
"""

from __future__ import annotations

import pytest

from pytest_kernelprof.plugin.settings import SETTINGS_KEY, Settings


def _settings(pytester: pytest.Pytester, *args: str, ini: tuple[str, ...] = ()) -> Settings:
    if ini:
        pytester.makeini("\n".join(("[pytest]", *ini)))
    return pytester.parseconfigure(*args).stash[SETTINGS_KEY]


def test_defaults(pytester: pytest.Pytester) -> None:
    assert _settings(pytester) == Settings(
        warmup=2,
        calls=3,
        require_gpu=False,
        trace_dir=None,
        save="none",
        update=False,
        names="stable",
        memory_tolerance=0.05,
    )


def test_options(pytester: pytest.Pytester) -> None:
    settings = _settings(
        pytester,
        "--kernelprof-warmup=0",
        "--kernelprof-calls=2",
        "--kernelprof-require-gpu",
        "--kernelprof-trace-dir=traces",
        "--kernelprof-update",
        "--kernelprof-baseline-names=exact",
        "--kernelprof-memory-tolerance=25%",
        "--kernelprof-modules",
        "--kernelprof-stacks",
    )
    traces = pytester.path / "traces"
    assert settings == Settings(
        warmup=0,
        calls=2,
        require_gpu=True,
        trace_dir=traces,
        save="failed",
        update=True,
        names="exact",
        memory_tolerance=0.25,
        modules=True,
        stacks=True,
    )
    for save in ("all", "none"):
        assert _settings(pytester, "--kernelprof-trace-dir=traces", f"--kernelprof-save={save}").save == save


def test_ini_keys(pytester: pytest.Pytester) -> None:
    ini = (
        "kernelprof_warmup = 1",
        "kernelprof_calls = 1",
        "kernelprof_require_gpu = true",
        "kernelprof_baseline_names = loose",
        "kernelprof_memory_tolerance = 1%",
        "kernelprof_modules = true",
        "kernelprof_stacks = true",
    )
    settings = _settings(pytester, ini=ini)
    read = (settings.warmup, settings.calls, settings.require_gpu, settings.names, settings.memory_tolerance)
    assert read == (1, 1, True, "loose", 0.01)
    assert (settings.modules, settings.stacks) == (True, True)


def test_native_toml_takes_numbers(pytester: pytest.Pytester) -> None:
    """``[tool.pytest]`` (pytest 9) gives TOML's own types: a number was refused as no string."""
    pytester.makepyprojecttoml(
        "[tool.pytest]\nkernelprof_warmup = 1\nkernelprof_calls = 3\nkernelprof_memory_tolerance = 5\n"
    )
    settings = pytester.parseconfigure().stash[SETTINGS_KEY]
    assert (settings.warmup, settings.calls, settings.memory_tolerance) == (1, 3, 0.05)
    pytester.makepyprojecttoml('[tool.pytest]\nkernelprof_calls = "2"\nkernelprof_memory_tolerance = 2.5\n')
    settings = pytester.parseconfigure().stash[SETTINGS_KEY]
    assert (settings.calls, settings.memory_tolerance) == (2, 0.025)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("kernelprof_calls = 0", "kernelprof.calls must be at least 1, got 0"),
        ("kernelprof_calls = true", "kernelprof_calls.*bool"),
        ("kernelprof_warmup = 1.5", "kernelprof_warmup.*float"),
    ],
)
def test_native_toml_numbers_out_of_bounds_are_usage_errors(pytester: pytest.Pytester, line: str, message: str) -> None:
    pytester.makepyprojecttoml(f"[tool.pytest]\n{line}\n")
    with pytest.raises(pytest.UsageError, match=message):
        pytester.parseconfigure()


def test_options_win_over_ini_keys(pytester: pytest.Pytester) -> None:
    ini = (
        "kernelprof_warmup = 1",
        "kernelprof_calls = 1",
        "kernelprof_baseline_names = loose",
        "kernelprof_memory_tolerance = 1%",
    )
    args = ("--kernelprof-warmup=0", "--kernelprof-baseline-names=exact", "--kernelprof-memory-tolerance=10%")
    settings = _settings(pytester, *args, ini=ini)
    assert (settings.warmup, settings.calls, settings.names, settings.memory_tolerance) == (0, 1, "exact", 0.1)


@pytest.mark.parametrize(
    ("args", "ini", "message"),
    [
        (["--kernelprof-calls", "0"], (), "--kernelprof-calls must be at least 1, got 0"),
        (["--kernelprof-warmup", "-1"], (), "--kernelprof-warmup must be at least 0, got -1"),
        (["--kernelprof-warmup", "two"], (), "--kernelprof-warmup takes an integer, got 'two'"),
        ([], ("kernelprof_calls = 0",), "kernelprof.calls must be at least 1, got 0"),
        ([], ("kernelprof_baseline_names = bogus",), "kernelprof.baseline.names takes one of stable, exact, loose"),
        (["--kernelprof-save", "all"], (), "--kernelprof-save=all needs --kernelprof-trace-dir DIR"),
        (["--kernelprof-save", "some"], (), "--kernelprof-save: invalid choice: 'some'"),
        (["--kernelprof-trace-dir="], (), "--kernelprof-trace-dir takes a directory, got an empty value"),
    ],
)
def test_bad_values_are_usage_errors(
    pytester: pytest.Pytester, args: list[str], ini: tuple[str, ...], message: str
) -> None:
    with pytest.raises(pytest.UsageError, match=message):
        _settings(pytester, *args, ini=ini)


def test_help_lists_the_options(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(
        [
            "GPU kernel assertions (pytest-kernelprof):",
            "*--kernelprof-require-gpu*",
            "*--kernelprof-warmup=N*",
            "*--kernelprof-calls=N*",
        ]
    )
    # Issue 32 item 9: the rules' page is docs/rules.md; the README no longer has that section.
    text = " ".join(result.stdout.str().split())
    # Trials: it said the calls were "each compared with the first" (their kernel sequences are),
    # then that every figure was one call's, where a kernel's time is its median over the calls.
    assert (
        "--kernelprof-calls=N Profiled calls per kernelprof(fn) call: their kernel sequences must match the first "
        "call's; launches, host span, busy and idle time are the fastest call's by host span (prof.fastest_call), "
        "a kernel's time its median over the calls; default: 3" in text
    )
    assert "kernelprof_forbid (linelist): Rules every profile" in text
    # Named by the page's title too: a wheel carries no docs folder to find the file in.
    assert '(the docs\' page "Suite-wide rules", docs/rules.md)' in text
    assert "README" not in text
    # Issue 32: the option writes a timeline page per failing test too, which its help said nowhere.
    assert (
        "into DIR (which tests: --kernelprof-save), and an .html timeline page beside each failing test's trace" in text
    )


def test_the_options_page_lists_the_options_of_the_help_with_their_defaults(pytester: pytest.Pytester) -> None:
    # A trial: the page said the figures were "the median call's" after the help said "the
    # fastest call's". Each option of the help is a row of the page, with the default it gives.
    import re
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "reference" / "options.md").read_text(encoding="utf-8")
    rows = {
        m.group(1): m.group(2).strip(" `")
        for m in re.finditer(r"^\| `(--kernelprof-[a-z-]+)[^|]*\|[^|]*\| ([^|]*) \|", page, re.M)
    }
    # Each option's entry: its line, then the indented lines of its help, up to the next entry.
    entries = re.split(r"\n  (?=-)", pytester.runpytest("--help").stdout.str())
    helped = {
        m.group(1): " ".join(entry.split()) for entry in entries if (m := re.match(r"(--kernelprof-[a-z-]+)", entry))
    }
    assert set(helped) == set(rows)
    for option, said in helped.items():
        default = re.search(r"default: ([\w.-]+)$", said)
        if default:
            assert rows[option] == default.group(1), (option, rows[option], said)
    # The figures' call, in the words of the help and of every page.
    assert "the fastest call's by host span" in page
    docs = Path(__file__).parents[2] / "docs"
    assert not [p.name for p in docs.rglob("*.md") if "median call" in p.read_text(encoding="utf-8")]
