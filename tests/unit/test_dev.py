"""dev.py, the README's commands: which torch it installs, when it reinstalls, and compat's matrix."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def dev(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("kernelprof_dev_script", ROOT / "dev.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.delenv("KERNELPROF_TORCH", raising=False)
    return module


def _record(dev: ModuleType, monkeypatch: pytest.MonkeyPatch, failing: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    calls: list[tuple[str, ...]] = []

    def run(*command: object) -> int:
        calls.append(tuple(str(c) for c in command))
        return 1 if any(f in calls[-1] for f in failing) and "--extra-index-url" not in calls[-1] else 0

    monkeypatch.setattr(dev, "_run", run)
    monkeypatch.setattr(dev, "_check", lambda *command: calls.append(tuple(str(c) for c in command)))
    return calls


def _torch_wanted(calls: list[tuple[str, ...]]) -> list[str]:
    """The torch requirement of each pip call made (how pip is called is dev.py's business)."""
    return [next(arg for arg in call if arg.startswith("torch")) for call in calls]


@pytest.mark.parametrize(
    ("gpu", "override", "wanted"),
    [
        (False, None, "torch==2.13.0+cpu"),  # a plain "torch" would pull the CUDA build
        (True, None, "torch"),
        (None, "torch==2.4.1", "torch==2.4.1"),  # KERNELPROF_TORCH: no GPU probe at all
    ],
    ids=["no-gpu", "gpu", "override"],
)
def test_which_torch_is_installed(
    dev: ModuleType, monkeypatch: pytest.MonkeyPatch, gpu: bool | None, override: str | None, wanted: str
) -> None:
    if override is not None:
        monkeypatch.setenv("KERNELPROF_TORCH", override)
    monkeypatch.setattr(dev, "_has_gpu", lambda: gpu if gpu is not None else pytest.fail("must not look for a GPU"))
    calls = _record(dev, monkeypatch)
    dev._install_torch(Path("python"))
    assert _torch_wanted(calls) == [wanted]


def test_no_local_cpu_build_falls_back_to_pytorchs_cpu_index(dev: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dev, "_has_gpu", lambda: False)
    calls = _record(dev, monkeypatch, failing=("torch==2.13.0+cpu",))
    dev._install_torch(Path("python"))
    assert _torch_wanted(calls) == ["torch==2.13.0+cpu", "torch==2.13.0+cpu"]
    assert "https://download.pytorch.org/whl/cpu" in calls[-1]


def test_an_existing_torch_is_kept(dev: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env = tmp_path / "env"
    python = dev._python_of(env)
    python.parent.mkdir(parents=True)
    python.touch()
    monkeypatch.setenv("KERNELPROF_VENV", str(env))
    monkeypatch.setattr(dev, "_has_torch", lambda python: True)
    monkeypatch.setattr(dev, "_install_torch", lambda python: pytest.fail("torch must not be reinstalled"))
    calls = _record(dev, monkeypatch)
    assert dev._environment() == python
    assert len(calls) == 1
    assert ".[test]" in calls[0]  # the project, and no torch
    # A second run with pyproject.toml unchanged installs nothing.
    assert dev._environment() == python
    assert len(calls) == 1


def test_an_unknown_command_is_named(dev: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    """The trial: `dev.py foo` printed the whole docstring and the usage, and never said that
    there is no command foo."""
    assert dev.main(["lint", "-x"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[0] == "dev.py: unknown command 'lint' (the commands: examples, tests, compat)"
    assert "usage: python3 dev.py {examples,tests}" in err
    assert "README" not in err  # the usage, not the docstring


@pytest.mark.parametrize(("argv", "code"), [([], 2), (["--help"], 0), (["-h"], 0)])
def test_no_command_or_help_prints_the_docstring_and_usage(
    dev: ModuleType, capsys: pytest.CaptureFixture[str], argv: list[str], code: int
) -> None:
    assert dev.main(argv) == code
    out = capsys.readouterr().out
    assert out.startswith("The README's commands")
    assert "usage: python3 dev.py {examples,tests}" in out


def _words(text: str) -> str:
    return " ".join(text.split())


def test_the_help_and_contributing_tell_compat_alike(dev: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    # Trial: `dev.py --help` said compat prints "passed, failed, skipped, wall time" a line and runs
    # "the newest one pip's index lists" besides; CONTRIBUTING.md said otherwise. One text, both places.
    dev.main(["--help"])
    help_text = capsys.readouterr().out
    compat = help_text[help_text.index("`python3 dev.py compat [VERSIONS...]") :].split("\n\n")[0]
    assert "Markdown table row per version" in compat
    assert _words(compat) in _words((ROOT / "CONTRIBUTING.md").read_text())


def _commands(page: str) -> str:
    """A page's "The commands" section up to its first paragraph after the bullets."""
    text = (ROOT / page).read_text()
    section = text[text.index("\n```bash\npython3 dev.py ") :]
    return section[: section.index("\n- `compat`") if page == "README.md" else section.index("\n\n`python3")]


def test_contributing_gives_the_readmes_commands_as_the_readme_does() -> None:
    # Trial: CONTRIBUTING.md listed `tests` before `examples`, in other words than the README's.
    readme = _commands("README.md")
    assert readme.index("dev.py examples") < readme.index("dev.py tests") < readme.index("dev.py compat")
    assert _commands("CONTRIBUTING.md") == readme


def test_ci_runs_the_readmes_commands() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    for command in ("python3 dev.py tests", "python3 dev.py examples"):
        assert command in ci


def test_tests_say_how_long_the_suite_took(
    dev: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = _record(dev, monkeypatch, failing=("pytest",))
    clock = iter([100.0, 187.31])
    monkeypatch.setattr(dev.time, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(dev.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(dev, "imported_package", lambda python: dev.ROOT / "src" / "pytest_kernelprof")
    assert dev.main(["tests", "--system", "-x"]) == 1  # pytest's status
    assert calls == [(sys.executable, "-m", "pytest", "-n", "auto", "--dist", "worksteal", "-x")]
    assert capsys.readouterr().out.splitlines() == [
        f"dev.py: testing pytest_kernelprof from {ROOT / 'src' / 'pytest_kernelprof'}",
        "dev.py: tests: 87.3 s wall, 2 CPU cores",
    ]


def _interpreter_importing(tmp_path: Path, origin: str) -> Path:
    # An interpreter whose find_spec("pytest_kernelprof") gives origin ("" where it finds none).
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\necho '{origin}'\n")
    python.chmod(0o755)
    return python


def test_the_run_names_the_package_it_tests_and_warns_where_it_is_not_this_checkouts(
    dev: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A trial: `dev.py tests --system` ran an editable install of another checkout, silently.
    own = ROOT / "src" / "pytest_kernelprof"
    dev.say_which_package(_interpreter_importing(tmp_path, str(own / "__init__.py")))
    out, err = capsys.readouterr()
    assert (out, err) == (f"dev.py: testing pytest_kernelprof from {own}\n", "")
    other = tmp_path / "elsewhere" / "src" / "pytest_kernelprof"
    dev.say_which_package(_interpreter_importing(tmp_path, str(other / "__init__.py")))
    out, err = capsys.readouterr()
    assert out == f"dev.py: testing pytest_kernelprof from {other}\n"
    assert err == (
        f"dev.py: warning: that is not this checkout's ({own}): this run tests that copy, not this checkout: "
        "an install of another checkout, or PYTHONPATH, comes first. To test this checkout, "
        "`pip install -e .` into this interpreter\n"
    )
    python = _interpreter_importing(tmp_path, "")
    dev.say_which_package(python)
    out, err = capsys.readouterr()
    assert (out, err.startswith(f"dev.py: warning: {python} imports no pytest_kernelprof")) == ("", True)


def test_the_package_is_found_as_pytest_will_import_it(dev: ModuleType) -> None:
    # From the checkout, in this environment: the interpreter running this test imports the package under test.
    import pytest_kernelprof

    assert dev.imported_package(Path(sys.executable)) == Path(pytest_kernelprof.__file__).parent


def test_probing_for_torch_prints_no_traceback(
    dev: ModuleType, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    python = tmp_path / "python"  # an environment without torch: its import fails loudly
    python.write_text(
        "#!/bin/sh\necho 'Traceback (most recent call last):' >&2\n"
        "echo \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n"
    )
    python.chmod(0o755)
    assert dev._has_torch(python) is False
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


# ---- compat: the suite on other torch versions ----------------------------------------------

INDEX = ["2.15.0", "2.14.1", "2.14.0", "2.8.0", "2.7.1", "2.7.0", "2.6.0", "2.5.1", "2.4.1"]


@pytest.mark.parametrize(
    ("asked", "chosen"),
    [
        ([], ["2.6.0", "2.7.1", "2.8.0", "2.14.1", "2.15.0"]),  # the floor, each minor's newest above it
        (["2.7"], ["2.7.1"]),
        (["2.7.0", "floor", "newest", "2.7.0"], ["2.7.0", "2.6.0", "2.15.0"]),
        (["2.13.0+cpu"], ["2.13.0+cpu"]),  # a local build, as given
        (["2.4.1"], ["2.4.1"]),  # below the floor: run to show what happens there
    ],
)
def test_compat_versions(dev: ModuleType, asked: list[str], chosen: list[str]) -> None:
    assert dev.compat_versions(asked, INDEX, "2.6") == chosen


def test_the_floor_is_its_first_release(dev: ModuleType) -> None:
    """torch>=2.7 admits 2.7.0 first: that one is run, not the newest 2.7.x."""
    assert dev.compat_versions([], INDEX, "2.7") == ["2.7.0", "2.8.0", "2.14.1", "2.15.0"]
    assert dev.compat_versions(["floor", "2.7"], INDEX, "2.7") == ["2.7.0", "2.7.1"]


def test_compat_versions_the_index_cannot_give(dev: ModuleType) -> None:
    with pytest.raises(SystemExit, match="no torch 2.9.x"):
        dev.compat_versions(["2.9"], INDEX, "2.6")
    with pytest.raises(SystemExit, match="no torch 2.6.x"):
        dev.compat_versions([], ["2.14.1"], "2.6")


def test_the_floor_is_pyprojects(dev: ModuleType) -> None:
    assert dev._floor() == "2.6"
    assert dev.venv_name("3.11", "2.6.0") == "py3.11-torch2.6.0"  # as .venvs/ names them


def test_the_index_is_asked_for_the_releases_of_this_python(dev: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    listing = "torch (2.15.0)\nAvailable versions: 2.15.0, 2.14.1, 2.13.0+cpu, 2.13.0, 2.12.0rc1, 2.4.1\n"
    asked: list[list[str]] = []

    def run(command: list[object], **kwargs: object) -> subprocess.CompletedProcess[str]:
        asked.append([str(part) for part in command])
        return subprocess.CompletedProcess(command, 0, listing, "WARNING: pip index is currently experimental")

    monkeypatch.setattr(dev.subprocess, "run", run)
    assert dev._index_versions(Path("/usr/bin/python3.10")) == ["2.15.0", "2.14.1", "2.13.0", "2.4.1"]
    assert asked == [["/usr/bin/python3.10", "-m", "pip", "index", "versions", "torch"]]


PIP_CAPPED = """ERROR: Cannot install torch==2.15.0 because these package versions have conflicting dependencies.

The conflict is caused by:
    The user requested torch==2.15.0
    The user requested (constraint) torch<=2.14.1
"""
PIP_BELOW_FLOOR = """The conflict is caused by:
    pytest-kernelprof 0.1.0 depends on torch>=2.6
    The user requested (constraint) torch==2.4.1
"""


@pytest.mark.parametrize(
    ("output", "why"),
    [
        (PIP_CAPPED, "pip refuses: its configured constraints allow only torch<=2.14.1"),
        (PIP_BELOW_FLOOR, "pip refuses: pytest-kernelprof 0.1.0 depends on torch>=2.6"),
        ("ERROR: No matching distribution found for torch==2.15.0", "pip finds no wheel of it for this Python"),
        ("ERROR: disk full", "ERROR: disk full"),
    ],
)
def test_why_pip_failed_in_one_line(dev: ModuleType, output: str, why: str) -> None:
    assert dev.why_pip_failed(output) == why


class FakePip:
    """The pip and python calls of compat_environment, as a list; torch installs fail for ``refused``."""

    def __init__(self, dev: ModuleType, monkeypatch: pytest.MonkeyPatch, refused: str = "") -> None:
        self.calls: list[str] = []
        self.refused = refused
        monkeypatch.setattr(dev, "_pip", self.pip)
        monkeypatch.setattr(dev.subprocess, "run", self.run)
        monkeypatch.setattr(dev, "_python_version", lambda python: "3.10")

    def pip(self, python: Path, *args: str, log: Path) -> subprocess.CompletedProcess[str]:
        self.calls.append("pip " + " ".join(a if not a.endswith("torch-pin.txt") else "PIN" for a in args))
        failed = self.refused and self.refused in args
        return subprocess.CompletedProcess(args, 1 if failed else 0, "", PIP_CAPPED if failed else "")

    def run(self, command: list[object], **kwargs: object) -> subprocess.CompletedProcess[str]:
        command = [str(part) for part in command]
        if command[1:3] == ["-m", "venv"]:
            self.calls.append("venv")
            python = Path(command[3]) / "bin" / "python"
            python.parent.mkdir(parents=True)
            python.touch()
        return subprocess.CompletedProcess(command, 0, b"2.6.0\n", b"")


def test_a_compat_environment_is_made_once_and_its_torch_pinned(
    dev: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(dev, "VENVS", tmp_path)
    pip = FakePip(dev, monkeypatch)
    python, why = dev.compat_environment(Path("python3.10"), "2.6.0")
    assert (python, why) == (tmp_path / "py3.10-torch2.6.0" / "bin" / "python", "")
    assert pip.calls == ["venv", "pip install --no-cache-dir torch==2.6.0", "pip install -c PIN -e .[test]"]
    assert (tmp_path / "py3.10-torch2.6.0" / "torch-pin.txt").read_text() == "torch==2.6.0\n"
    assert dev.compat_environment(Path("python3.10"), "2.6.0") == (python, "")
    assert len(pip.calls) == 3  # made, installed: a second run only runs
    (tmp_path / "py3.10-torch2.6.0" / ".kernelprof-installed").write_text("an older pyproject.toml")
    dev.compat_environment(Path("python3.10"), "2.6.0")
    assert pip.calls[3:] == ["pip install -c PIN -e .[test]"]  # the project again, never torch


def test_a_torch_pip_refuses_leaves_no_environment(
    dev: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(dev, "VENVS", tmp_path)
    FakePip(dev, monkeypatch, refused="torch==2.15.0")
    assert dev.compat_environment(Path("python3.10"), "2.15.0") == (
        None,
        "pip refuses: its configured constraints allow only torch<=2.14.1",
    )
    assert [p.name for p in tmp_path.iterdir()] == []


@pytest.mark.parametrize(
    ("version", "free_gb", "made"), [("2.6.0", 8.5, False), ("2.6.0", 9, True), ("2.13.0+cpu", 2, True)]
)
def test_a_torch_the_disk_cannot_hold_is_not_begun(
    dev: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, version: str, free_gb: float, made: bool
) -> None:
    monkeypatch.setattr(dev, "VENVS", tmp_path)
    monkeypatch.setattr(dev.shutil, "disk_usage", lambda path: SimpleNamespace(free=int(free_gb * 2**30)))
    pip = FakePip(dev, monkeypatch)
    python, why = dev.compat_environment(Path("python3.10"), version)
    if made:
        assert (python, why) == (tmp_path / f"py3.10-torch{version}" / "bin" / "python", "")
        return
    assert (python, why) == (
        None,
        f"needs 9 GB free disk for torch {version}, 8.5 GB free:"
        f" remove environments of {tmp_path.name}/ that are no longer needed",
    )
    assert pip.calls == ["venv"]  # pip never ran
    assert list(tmp_path.iterdir()) == []


def _made(dev: ModuleType, venvs: Path, python: str, torch: str) -> None:
    (venvs / dev.venv_name(python, torch)).mkdir()
    (venvs / dev.venv_name(python, torch) / dev.TORCH_READY).touch()


def test_the_disk_a_whole_compat_run_needs(dev: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each new environment keeps its torch (a CUDA build 7 GB at most, a CPU build 1 GB), and
    the last one installed needs its 9 GB (CPU: 2 GB) of room while pip unpacks."""
    monkeypatch.setattr(dev, "VENVS", tmp_path)
    free = [0]
    monkeypatch.setattr(dev.shutil, "disk_usage", lambda path: SimpleNamespace(free=free[0]))
    matrix = [("3.11", "2.6.0"), ("3.11", "2.7.1"), ("3.11", "2.13.0+cpu"), ("3.12", "2.6.0")]
    free[0] = 24 * 2**30 - 1  # 7 + 7 + 1 + 7 kept, and 2 GB more for the last CUDA build's install
    short = dev.disk_short_of_run(matrix)
    assert short.startswith("dev.py: compat needs about 24.0 GB of free disk for the 4 environments it would make")
    assert "py3.11-torch2.6.0, py3.11-torch2.7.1, py3.11-torch2.13.0+cpu, py3.12-torch2.6.0" in short
    assert "3 of them a CUDA build of torch" in short
    assert f"{tmp_path}/ has 24.0 GB free" in short
    assert "Run fewer versions" in short
    free[0] += 1
    assert dev.disk_short_of_run(matrix) == ""
    _made(dev, tmp_path, "3.11", "2.6.0")  # made already: it costs nothing more
    free[0] = 17 * 2**30
    assert dev.disk_short_of_run(matrix) == ""
    assert dev.disk_short_of_run([("3.11", "2.13.0+cpu")]) == ""  # 2 GB: the room a CPU install takes
    free[0] = 2 * 2**30 - 1
    assert "needs about 2.0 GB" in dev.disk_short_of_run([("3.11", "2.13.0+cpu")])
    assert dev.disk_short_of_run([("3.11", "2.6.0")]) == ""


def test_compat_refuses_a_run_the_disk_cannot_hold_before_it_makes_anything(
    dev: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The trial: on a CPU-only machine `dev.py compat` installed one CUDA build after another
    (5 to 7 GB each), each checked alone against the free disk, until the disk was full."""
    venvs = tmp_path / ".venvs"  # not made yet: a first run
    monkeypatch.setattr(dev, "VENVS", venvs)
    monkeypatch.setattr(dev, "_interpreter", lambda wanted: Path("python3.11"))
    monkeypatch.setattr(dev, "_python_version", lambda python: "3.11")
    monkeypatch.setattr(dev, "_index_versions", lambda python: INDEX)
    monkeypatch.setattr(dev.shutil, "disk_usage", lambda path: SimpleNamespace(free=20 * 2**30))
    monkeypatch.setattr(dev, "compat_environment", lambda python, v: pytest.fail("no environment may be made"))
    assert dev.main(["compat"]) == 2  # five CUDA builds: 37 GB
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("dev.py: compat needs about 37.0 GB of free disk for the 5 environments it would make")
    assert "has 20.0 GB free" in err


def test_junit_counts_and_the_report_line(dev: ModuleType, tmp_path: Path) -> None:
    xml = tmp_path / "run.xml"
    xml.write_text(
        '<testsuites><testsuite tests="10" failures="1" errors="2" skipped="3"/>'
        '<testsuite tests="5" failures="0" errors="0" skipped="1"/></testsuites>'
    )
    assert dev.junit_counts(xml) == (8, 3, 4)  # errors fail too
    assert dev.report_line("2.6.0", "3.11", (8, 3, 4), 151.4, "") == "| 2.6.0 | 3.11 | 8 | 3 | 4 | 2m31s |  |"
    refused = dev.report_line("2.15.0", "3.11", None, 0, "pip refuses")
    assert refused == "| 2.15.0 | 3.11 | - | - | - | - | pip refuses |"


def test_compat_runs_each_version_of_each_python_and_reports_a_line_each(
    dev: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    runs: list[tuple[str, list[str]]] = []
    monkeypatch.setattr(dev, "_interpreter", lambda wanted: Path(f"python{wanted}"))
    monkeypatch.setattr(dev, "_python_version", lambda python: str(python).removeprefix("python"))
    monkeypatch.setattr(dev, "_index_versions", lambda python: INDEX)
    environments = {"2.15.0": (None, "pip refuses: its configured constraints allow only torch<=2.14.1")}
    monkeypatch.setattr(dev, "compat_environment", lambda python, v: environments.get(v, (Path(f"{python}-{v}"), "")))

    def run(env_python: Path, pytest_args: list[str], log: Path) -> tuple[tuple[int, int, int] | None, float, str]:
        runs.append((str(env_python), pytest_args))
        return ((10, 1, 2) if "2.7" in str(env_python) else (11, 0, 2)), 61.0, ""

    monkeypatch.setattr(dev, "compat_run", run)
    monkeypatch.setattr(dev, "VENVS", tmp_path)
    monkeypatch.setattr(dev.shutil, "disk_usage", lambda path: SimpleNamespace(free=100 * 2**30))
    assert dev.main(["compat", "--python", "3.10", "--python=3.13", "2.6", "newest", "--", "-x", "-k", "cli"]) == 1
    assert runs == [("python3.10-2.6.0", ["-x", "-k", "cli"]), ("python3.13-2.6.0", ["-x", "-k", "cli"])]
    out = capsys.readouterr().out
    table = out[out.index("| torch |") :].splitlines()
    assert table[2:] == [
        "| 2.6.0 | 3.10 | 11 | 0 | 2 | 1m01s |  |",
        "| 2.15.0 | 3.10 | - | - | - | - | pip refuses: its configured constraints allow only torch<=2.14.1 |",
        "| 2.6.0 | 3.13 | 11 | 0 | 2 | 1m01s |  |",
        "| 2.15.0 | 3.13 | - | - | - | - | pip refuses: its configured constraints allow only torch<=2.14.1 |",
    ]
    runs.clear()
    assert dev.main(["compat", "2.6"]) == 0  # every version passed
    assert dev.main(["compat", "2.7"]) == 1  # a failure fails the command
    with pytest.raises(SystemExit, match="--python takes a version"):
        dev.main(["compat", "--python"])


def test_a_python_is_found_by_its_version(dev: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pyenv = tmp_path / "versions" / "3.10.13" / "bin" / "python3.10"
    pyenv.parent.mkdir(parents=True)
    pyenv.touch()
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    monkeypatch.setattr(dev.shutil, "which", lambda name: "/shims/python3.10")  # a shim of a version not selected
    monkeypatch.setattr(
        dev.subprocess, "run", lambda command, **kw: subprocess.CompletedProcess(command, int("shims" in command[0]))
    )
    assert dev._interpreter("3.10") == pyenv
    assert dev._interpreter("/opt/py/bin/python3") == Path("/opt/py/bin/python3")
    assert dev._interpreter(None) == Path(sys.executable)
    with pytest.raises(SystemExit, match="no Python 3.9 found"):
        dev._interpreter("3.9")


def test_a_first_run_says_what_it_sets_up_and_that_it_is_still_at_it(
    dev: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The trial: `dev.py examples` printed nothing for two minutes while it installed torch
    (pip -q says nothing while it downloads)."""
    env = tmp_path / "env"
    monkeypatch.setenv("KERNELPROF_VENV", str(env))
    monkeypatch.setattr(dev, "TICK_SECONDS", 0.02)
    monkeypatch.setattr(dev.venv, "create", lambda path, with_pip: dev._python_of(env).parent.mkdir(parents=True))
    monkeypatch.setattr(dev, "_has_torch", lambda python: False)
    monkeypatch.setattr(dev, "_has_gpu", lambda: False)
    slow = lambda *command: time.sleep(0.15) or 0  # noqa: E731
    monkeypatch.setattr(dev, "_run", slow)
    monkeypatch.setattr(dev, "_check", slow)
    dev._environment()
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"dev.py: first run: setting up {env}, a virtual environment with torch and this project")
    assert any(line.startswith("dev.py: no GPU: installing the CPU build of torch") for line in out)
    assert any(line.startswith("dev.py: still installing torch (") for line in out)
    assert any(line.startswith("dev.py: still installing the project (") for line in out)
    assert out[-1] == f"dev.py: {env} is ready: running pytest"


@pytest.mark.parametrize("command", ["tests", "examples"])
def test_system_on_an_interpreter_without_torch_says_so(
    dev: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # A trial: `dev.py examples --system` without torch ended in pytest's ModuleNotFoundError.
    calls = _record(dev, monkeypatch)
    real_find_spec = dev.importlib.util.find_spec
    monkeypatch.setattr(
        dev.importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real_find_spec(name, *a)
    )
    assert dev.main([command, "--system"]) == 2
    assert calls == []
    err = capsys.readouterr().err
    assert f"dev.py: --system runs the {command} with this interpreter" in err
    assert "which has no torch" in err
