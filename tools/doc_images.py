"""The screenshots of docs/ci.md, made again from the tool as it is now, so that no page shows
an output the tool no longer writes. ::

    python tools/doc_images.py          # rewrite docs/images/ci-summary.png and docs/images/ci-timeline.png
    python tools/doc_images.py --check  # exit 1 where a picture's source has changed since it was drawn

- ``ci-summary.png``: the job summary (``--kernelprof-summary``) of a pytest run of four tests
  that fail on traces of ``tests/data/`` (a ``kernelprof_forbid`` rule broken, a kernel baseline
  regressed, a host sync, a failed kernel count), its Markdown rendered as GitHub shows it, the
  count's failure unfolded;
- ``ci-timeline.png``: the timeline page (``kernelprof show TRACE --html``) of the training step
  whose loss is read with ``.item()`` (``tests/data/h200_sync_item_stacks.json.gz``).

Beside each picture goes what it was drawn from: ``ci-summary.txt``, the summary's Markdown, and
``ci-timeline.sha256``, the hash of the timeline page. ``tests/plugin/test_docs.py`` makes both
again (no browser needed) and fails where either differs: the pictures showed a kernel table
headed ``ops`` for months after every output said ``fused ops``. ``python tools/doc_images.py
--check`` does the same here.

Needs headless Chromium (``chromium`` on PATH, or ``CHROMIUM=/path/to/it``) and Python-Markdown
(the ``markdown`` module: the docs extra installs it, ``pip install -e ".[docs]"``). Runs from
the repository root on the checkout's source (``src/``), off CI. ``tests/plugin/test_docs.py``
runs the summary's pytest run, so the script keeps working as the plugin changes; the pictures
themselves are made here only.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
TIMELINE_TRACE = "tests/data/h200_sync_item_stacks.json.gz"
# What each picture was drawn from, beside it: the summary's Markdown, the timeline page's hash.
SUMMARY_SOURCE = IMAGES / "ci-summary.txt"
TIMELINE_SOURCE = IMAGES / "ci-timeline.sha256"
UNFOLDED = "test_two_gemms"  # the failure shown open in the summary's picture

# The run of the summary: which trace the baseline test loads comes from the environment, so that
# a first run records its baseline from the compiled MLP and the second compares the eager one.
TESTS = """\
import os

import pytest_kernelprof

BASELINE_TRACE = os.environ.get("KERNELPROF_IMAGES_TRACE", "h200_geglu_compiled")


def test_rule_broken(kernelprof):
    kernelprof.load_trace("tests/data/h200_bf16_mlp_fp32_linear.json.gz")


def test_baseline_regression(kernelprof, kernel_baseline):
    kernel_baseline.check(kernelprof.load_trace(f"tests/data/{BASELINE_TRACE}.json.gz"))


def test_sync_assert():
    prof = pytest_kernelprof.load_trace("tests/data/h200_sync_item_stacks.json.gz")
    assert not prof.syncs


def test_two_gemms():
    prof = pytest_kernelprof.load_trace("tests/data/h200_geglu_eager.json.gz")
    assert prof.kernels.count(kind="gemm") == 2


def test_fused(kernelprof):
    prof = kernelprof.load_trace("tests/data/h200_geglu_compiled.json.gz")
    assert prof.kernels.count("triton_poi_fused_*gelu*mul*") == 1
"""
RULES = """\
[pytest]
kernelprof_forbid =
    fp32-gemm: kind=gemm dtype=fp32 | bf16 models must not run fp32 GEMMs
"""

# GitHub's look, near enough: its fonts, code spans, fenced blocks and <details>.
STYLE = """
body { font-family: -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; font-size: 16px;
       line-height: 1.5; color: #1f2328; margin: 24px; max-width: 1100px; }
h2 { font-size: 1.5em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; }
h3 { font-size: 1.25em; }
code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 85%;
       background: #eff1f3; border-radius: 6px; padding: .2em .4em; }
pre { background: #f6f8fa; border-radius: 6px; padding: 16px; overflow: hidden; line-height: 1.45; }
pre code { background: none; padding: 0; font-size: 13px; }
details { margin: 4px 0; }
table { border-collapse: collapse; } td, th { border: 1px solid #d1d9e0; padding: 6px 13px; }
"""


def _environment() -> dict[str, str]:
    """Off CI (the run's outputs go nowhere but where it is told), the checkout's source first."""
    off_ci = ("CI", "BUILD_NUMBER", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "PYTEST_ADDOPTS")
    env = {k: v for k, v in os.environ.items() if k not in off_ci}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env["COLUMNS"] = "80"
    return env


def _pytest(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "test_ci.py", "-p", "no:randomly", "-p", "no:cacheprovider"]
    command += ["-p", "no:xdist", "-p", "no:hypothesispytest", *args]
    return subprocess.run(command, cwd=project, env=_environment() | env, capture_output=True, text=True, check=False)


def summary_markdown() -> str:
    """The job summary of the run of TESTS, whose baseline test's baseline was recorded first."""
    with tempfile.TemporaryDirectory(prefix="kernelprof-images-") as tmp:
        project = Path(tmp)
        (project / "pytest.ini").write_text(RULES)
        (project / "test_ci.py").write_text(TESTS)
        (project / "tests").mkdir()
        (project / "tests" / "data").symlink_to(ROOT / "tests" / "data", target_is_directory=True)
        recorded = _pytest(project, "-k", "baseline", "--kernelprof-update")
        if recorded.returncode != 0:
            raise RuntimeError(f"recording the baseline failed:\n{recorded.stdout}\n{recorded.stderr}")
        run = _pytest(project, "--kernelprof-summary=summary.md", KERNELPROF_IMAGES_TRACE="h200_geglu_eager")
        summary = project / "summary.md"
        if not summary.exists():
            raise RuntimeError(f"the run wrote no summary:\n{run.stdout}\n{run.stderr}")
        return summary.read_text(encoding="utf-8")


def summary_page(markdown_text: str) -> str:
    """The summary as GitHub shows it, the failure of UNFOLDED open."""
    import markdown  # the docs extra

    body = markdown.markdown(markdown_text, extensions=["fenced_code", "tables"])
    opened = f"<details><summary><code>test_ci.py::{UNFOLDED}</code>"
    if opened not in body:
        raise RuntimeError(f"the summary lists no failure of {UNFOLDED}:\n{markdown_text}")
    body = body.replace(opened, opened.replace("<details>", "<details open>"))
    head = f"<head><meta charset='utf-8'><style>{STYLE}</style></head>"
    return f"<!doctype html>\n<html>{head}\n<body>{body}</body></html>\n"


def timeline_page(out: Path) -> None:
    """``kernelprof show TIMELINE_TRACE --html out``, run from the repository root (the page is
    titled with the trace's path as given)."""
    command = [sys.executable, "-m", "pytest_kernelprof", "show", TIMELINE_TRACE, "--html", str(out)]
    done = subprocess.run(command, cwd=ROOT, env=_environment(), capture_output=True, text=True, check=False)
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"kernelprof show --html exited {done.returncode}:\n{done.stderr[-2000:]}")


def page_hash(page: Path) -> str:
    """The line ``TIMELINE_SOURCE`` holds for the page: its SHA-256 and what it is of."""
    return f"{hashlib.sha256(page.read_bytes()).hexdigest()}  kernelprof show {TIMELINE_TRACE} --html\n"


def sources() -> dict[Path, str]:
    """What the pictures would be drawn from now, by the file beside them that records it."""
    with tempfile.TemporaryDirectory(prefix="kernelprof-images-") as tmp:
        timeline = Path(tmp, "timeline.html")
        timeline_page(timeline)
        return {SUMMARY_SOURCE: summary_markdown(), TIMELINE_SOURCE: page_hash(timeline)}


def stale() -> list[str]:
    """The pictures whose source has changed since they were drawn (empty: none)."""
    return [
        f"docs/images/{path.name} is not what the tool writes now"
        for path, text in sources().items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]


def _chromium() -> str:
    found = os.environ.get("CHROMIUM") or next(
        filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None
    )
    if not found:
        raise SystemExit("tools/doc_images.py: no headless Chromium: install chromium, or set CHROMIUM=/path/to/it")
    return found


def screenshot(page: Path, png: Path, width: int, height: int) -> None:
    """``page`` drawn by headless Chromium into ``png``, ``width`` x ``height`` CSS pixels."""
    command = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    command += ["--force-device-scale-factor=1", "--virtual-time-budget=3000", f"--window-size={width},{height}"]
    command += [f"--screenshot={png}", page.resolve().as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not png.exists():
        raise RuntimeError(f"chromium failed ({done.returncode}):\n{done.stderr[-2000:]}")


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        found = stale()
        for line in found:
            print(f"{line}: run python tools/doc_images.py", file=sys.stderr)
        return 1 if found else 0
    if argv:
        raise SystemExit("usage: python tools/doc_images.py [--check]")
    with tempfile.TemporaryDirectory(prefix="kernelprof-images-") as tmp:
        markdown_text = summary_markdown()
        summary = Path(tmp, "summary.html")
        summary.write_text(summary_page(markdown_text), encoding="utf-8")
        screenshot(summary, IMAGES / "ci-summary.png", 1200, 560)
        timeline = Path(tmp, "timeline.html")
        timeline_page(timeline)
        screenshot(timeline, IMAGES / "ci-timeline.png", 1400, 900)
        # Written after the pictures, so that a failed screenshot leaves the check failing.
        SUMMARY_SOURCE.write_text(markdown_text, encoding="utf-8")
        TIMELINE_SOURCE.write_text(page_hash(timeline), encoding="utf-8")
    for name in ("ci-summary.png", "ci-timeline.png"):
        print(f"wrote docs/images/{name} ({(IMAGES / name).stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
