"""What a release ships and how the pages say to install it (issue 32 item 9): the metadata
PyPI shows, every data file in the wheel, and install commands that work while the package
is not on PyPI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the metadata is the same on 3.10

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "pytest_kernelprof"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_metadata_pypi_shows() -> None:
    project = PROJECT["project"]
    assert project["license"] == "MIT"
    assert (ROOT / "LICENSE").is_file()
    assert project["license-files"] == ["LICENSE"]
    assert project["readme"] == "README.md"
    assert project["keywords"]
    for classifier in ("Framework :: Pytest", "Typing :: Typed", "Development Status :: 3 - Alpha"):
        assert classifier in project["classifiers"]
    versions = {
        c.rsplit(" ", 1)[-1] for c in project["classifiers"] if c.startswith("Programming Language :: Python :: 3.")
    }
    assert min(versions, key=lambda v: tuple(map(int, v.split(".")))) == project["requires-python"].removeprefix(">=")
    assert project["entry-points"]["pytest11"] == {"kernelprof": "pytest_kernelprof.plugin"}


def test_numpy_is_required_since_torch_warns_in_every_run_without_it() -> None:
    # torch's CPU wheels do not pull numpy; without it every run warns "Failed to initialize NumPy".
    assert any(re.match(r"numpy\b", dep) for dep in PROJECT["project"]["dependencies"])


def test_every_data_file_of_the_package_is_in_the_wheel() -> None:
    shipped = set(PROJECT["tool"]["setuptools"]["package-data"]["pytest_kernelprof"])
    data = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
    }
    assert data <= shipped


PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "examples").rglob("*.yml"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_page_installs_the_package_from_pypi_before_it_is_published(page: Path) -> None:
    # "pip install pytest-kernelprof" fails until the release (CONTRIBUTING: the release checklist).
    for line in page.read_text().splitlines():
        if "pip install" in line and "published" not in line:  # "once it is published, ..."
            assert not re.search(r"pip install[^#\n]*(?<![@/\w\-.])pytest-kernelprof(?![\w\-]| @)", line), line


@pytest.mark.parametrize("page", [ROOT / "README.md", ROOT / "docs" / "index.md"], ids=lambda p: p.name)
def test_a_cpu_install_installs_numpy_with_torch(page: Path) -> None:
    cpu = [line for line in page.read_text().splitlines() if "download.pytorch.org/whl/cpu" in line]
    assert cpu
    assert all("numpy" in line for line in cpu), cpu
