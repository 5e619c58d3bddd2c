"""What a release ships and how the pages say to install it (issue 32 item 9): the metadata
PyPI shows, every data file in the wheel, and install commands that work while the package
is not on PyPI. The sdist and the wheel are built (setuptools, in a copy of the checkout): the
sdist ships no test without what it imports, and the long description no link that only
resolves in a checkout."""

from __future__ import annotations

import ast
import email
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
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
    assert "readme" in project["dynamic"]  # README.md, its relative links made text: setup.py
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


# The one form a git URL takes on the pages while the project has no public repository: a
# placeholder a reader cannot mistake for a real address (the trial: github.com/<owner>/...).
GIT_PLACEHOLDER = "git+https://GIT-SERVER/PATH/TO/pytest-kernelprof@COMMIT-SHA"


@pytest.mark.parametrize("page", [*PAGES, ROOT / "CONTRIBUTING.md"], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_page_points_pip_at_a_repository_that_does_not_exist(page: Path) -> None:
    text = page.read_text()
    assert "<owner>" not in text
    source = PROJECT["project"].get("urls", {}).get("Source")
    for url in re.findall(r"git\+[^\s\"`]+", text):
        # A copy on the same machine (README, and the site's index, which copies its install
        # section): pip takes it as file://localhost, not file:///.
        local = url == "git+file://localhost/ABSOLUTE/PATH@<sha>" and page.name in ("README.md", "index.md")
        assert url == GIT_PLACEHOLDER or local or (source and url.startswith(f"git+{source}@")), url
        assert "placeholder" in text, f"{page.name}: say that {GIT_PLACEHOLDER} is a placeholder to replace"


def test_the_readme_says_how_to_install_without_pypi_or_a_public_repository() -> None:
    readme = (ROOT / "README.md").read_text()
    install = readme[readme.index("## Install") : readme.index("## The commands")]
    assert "pip install .  " in install  # from a checkout
    assert "python -m build" in install
    assert "pip install dist/pytest_kernelprof-" in install


def test_project_urls_are_true_where_there_are_any() -> None:
    """No public URL yet: [project.urls] is left out rather than made up (CONTRIBUTING.md, "A
    release", step 5). Once there is one, each is an https address, no placeholder."""
    for name, url in PROJECT["project"].get("urls", {}).items():
        assert re.fullmatch(r"https://[\w.-]+/\S+", url), (name, url)
        assert not re.search(r"<|>|owner|GIT-SERVER|example\.", url), (name, url)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the sdist, the wheel), built by setuptools from a copy of the checkout."""
    pytest.importorskip("setuptools.build_meta")  # in the test extra
    tmp = tmp_path_factory.mktemp("build")
    copy, out = tmp / "project", tmp / "dist"
    skipped = shutil.ignore_patterns(
        ".git", ".venv", ".venvs", "__pycache__", "*.egg-info", "build", "dist", ".whl", ".*_cache", ".site", "site"
    )
    shutil.copytree(ROOT, copy, ignore=skipped, symlinks=True)
    # build_meta rewrites sys.argv as it runs: the folder is read before.
    code = (
        "import sys; from setuptools import build_meta as b; out = sys.argv[1]; b.build_sdist(out), b.build_wheel(out)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(out)], cwd=copy, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [sdist], [wheel] = out.glob("*.tar.gz"), out.glob("*.whl")
    return sdist, wheel


def _local_imports(source: str, path: str) -> list[tuple[str, str | None]]:
    """What the test module at ``path`` imports from the project's tests: (the module as a path
    without ``.py``, the name imported from it or None), for ``tests.*`` and relative imports."""
    package = path.rsplit("/", 1)[0].split("/")
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] == "tests"):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = "/".join([*base, *(node.module or "").split(".")]).strip("/")
            found += [(module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(a.name.replace(".", "/"), None) for a in node.names if a.name.split(".")[0] == "tests"]
    return found


def test_the_sdist_ships_no_test_without_what_it_imports(built: tuple[Path, Path]) -> None:
    """The trial: the sdist held tests/test_warm.py alone, which imports tests/warm.py."""
    with tarfile.open(built[0]) as sdist:
        top = sdist.getnames()[0].split("/")[0]
        files = {name.removeprefix(f"{top}/"): name for name in sdist.getnames()}

        def source(module: str) -> str | None:
            for candidate in (f"{module}.py", f"{module}/__init__.py"):
                if candidate in files:
                    member = sdist.extractfile(files[candidate])
                    assert member is not None
                    return member.read().decode()
            return None

        tests = sorted(f for f in files if f.startswith(("tests/", "test/")) and f.endswith(".py"))
        for name in tests:
            for module, imported in _local_imports(source(name.removesuffix(".py")) or "", name):
                found = source(module)
                assert found is not None, f"the sdist ships {name} without {module}.py or {module}/__init__.py"
                if imported is not None and source(f"{module}/{imported}") is None:
                    assert re.search(rf"\b{imported}\b", found), f"the sdist ships {name} without {module}/{imported}"
    package = {p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    assert package <= set(files)
    assert {"README.md", "LICENSE", "pyproject.toml"} <= set(files)


def test_the_long_description_has_no_link_that_resolves_only_in_a_checkout(built: tuple[Path, Path]) -> None:
    """The trial: the README, the package's page on an index, links to docs/ relatively, and
    PyPI resolves no relative link. Until there is a public URL they read as text."""
    with zipfile.ZipFile(built[1]) as wheel:
        metadata = email.message_from_bytes(wheel.read("pytest_kernelprof-0.1.0.dist-info/METADATA"))
    description = metadata.get_payload()
    assert isinstance(description, str)
    assert metadata["Description-Content-Type"] == "text/markdown"
    relative = re.findall(r"\]\((?!https?://|#)[^)]*\)", description)
    assert not relative, relative
    # Said, not dropped, and where a wheel's user finds it (a wheel carries no docs/).
    assert "failure reports (docs/failure-reports.md in the source distribution)" in description
    assert "## Quick start" in description
    for url in metadata.get_all("Project-URL") or []:
        assert ", https://" in url, url


def test_each_file_the_long_description_names_is_in_the_sdist(built: tuple[Path, Path]) -> None:
    """Issue 32: a wheel's user read links to docs/ that nothing they had holds: the sdist ships
    the pages (and mkdocs.yml, to serve them) that the long description names."""
    with zipfile.ZipFile(built[1]) as wheel:
        description = email.message_from_bytes(wheel.read("pytest_kernelprof-0.1.0.dist-info/METADATA")).get_payload()
    assert isinstance(description, str)
    said = re.findall(r"`?([\w./-]+)`? \((?:([\w./-]+) )?in the source distribution\)", description)
    named = {target or shown for shown, target in said}
    assert {"docs/index.md", "docs/ci.md", "CONTRIBUTING.md"} <= named
    with tarfile.open(built[0]) as sdist:
        top = sdist.getnames()[0].split("/")[0]
        files = {name.removeprefix(f"{top}/") for name in sdist.getnames()}
    assert named <= files, sorted(named - files)
    assert {"mkdocs.yml", "docs/images/ci-summary.png"} <= files
