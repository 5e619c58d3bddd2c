"""dev.py, the README's two commands: which torch it installs, and when it reinstalls."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

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


def test_unknown_command_prints_usage(dev: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert dev.main(["lint"]) == 2
    assert "usage: python3 dev.py {tests,examples}" in capsys.readouterr().out


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
