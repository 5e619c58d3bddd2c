"""The sample outputs of the documentation, made by the tool itself, so that no page shows
output the tool no longer prints.

A fenced block whose fence follows the line ``<!-- sample: NAME -->`` is the output of the
sample ``NAME`` below: a command of ``kernelprof``, a pytest run of a small test on a trace of
``tests/data/``, the figures a report writes, or a file of the repository that a page shows
whole (the CI workflow of ``examples/ci/``). ::

    python tools/doc_samples.py            # rewrite every sample block with what the tool prints now
    python tools/doc_samples.py --check    # exit 1, with a diff, where a page shows other output

``tests/plugin/test_docs.py`` runs the check, and requires every ``text`` block of the pages to
be a sample or marked ``<!-- not generated: REASON -->`` (a drawing, a GPU run's record).
Samples run from the repository root on the checkout's source (``src/``), off CI, 80 columns wide.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

# A marker line, then a fence at any indentation, its info string, its body, and the closing fence.
SAMPLE = re.compile(
    r"^[ \t]*<!--\s*sample:\s*(?P<name>[\w-]+)\s*-->[ \t]*\n"
    r"(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


@contextlib.contextmanager
def _chdir(path: str | Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


@contextlib.contextmanager
def _source_first() -> Iterator[None]:
    """Import the checkout's ``pytest_kernelprof`` (``src/``), whatever is installed."""
    sys.path.insert(0, str(ROOT / "src"))
    try:
        yield
    finally:
        sys.path.remove(str(ROOT / "src"))


def _kernelprof(*args: str) -> str:
    """``$ kernelprof ARGS`` and what it prints, run from the repository root."""
    with _source_first():
        from pytest_kernelprof.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), _chdir(ROOT):
        main(list(args))
    return f"$ kernelprof {' '.join(args)}\n{out.getvalue()}"


def _pytest(test: str, ini: str = "", *, test_name: str) -> str:
    """The failure section of ``test_name`` in a pytest run of ``test`` (a file ``test_m.py``),
    with ``ini`` as its pytest.ini, in a project whose ``tests/data`` is the repository's."""
    with tempfile.TemporaryDirectory(prefix="kernelprof-sample-") as tmp:
        Path(tmp, "pytest.ini").write_text("[pytest]\n" + textwrap.dedent(ini))
        Path(tmp, "test_m.py").write_text(textwrap.dedent(test))
        Path(tmp, "tests").mkdir()
        Path(tmp, "tests", "data").symlink_to(ROOT / "tests" / "data", target_is_directory=True)
        # Off CI: no CI output of the sample's run goes into a real job's summary or log.
        off_ci = ("CI", "BUILD_NUMBER", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")
        env = {k: v for k, v in os.environ.items() if k not in off_ci}
        env.update(
            COLUMNS="80", PYTEST_ADDOPTS="", PYTHONPATH=os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
        )
        command = [sys.executable, "-m", "pytest", "test_m.py", "-p", "no:randomly", "-p", "no:cacheprovider"]
        command += ["-p", "no:xdist", "-p", "no:hypothesispytest"]
        run = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True, check=False)
    lines = run.stdout.splitlines()
    title = re.compile(rf"^_+ {re.escape(test_name)} _+$")
    start = next((i for i, line in enumerate(lines) if title.match(line)), None)
    if start is None:
        raise RuntimeError(f"no failure of {test_name} in the run:\n{run.stdout}\n{run.stderr}")
    end = next(i for i in range(start + 1, len(lines)) if re.match(r"^(_{3,} \S.* _{3,}|={3,}.*)$", lines[i]))
    return "\n".join(line.rstrip() for line in lines[start + 1 : end]).strip("\n") + "\n"


def failed_count() -> str:
    """docs/failure-reports.md: a failed count on the eager GeGLU MLP, which has no fusion."""
    return _pytest(
        """\
        from pytest_kernelprof import load_trace

        def test_gelu_and_mul_are_fused():
            prof = load_trace("tests/data/h200_geglu_eager.json.gz")
            assert prof.kernels.count("triton_poi_fused_*gelu*mul*") == 1
        """,
        test_name="test_gelu_and_mul_are_fused",
    )


def broken_rule() -> str:
    """docs/rules.md: the bf16 MLP with its middle layer in fp32 under the page's rules."""
    failure = _pytest(
        """\
        def test_mlp(kernelprof):
            kernelprof.load_trace("tests/data/h200_bf16_mlp_fp32_linear.json.gz")
        """,
        """\
        kernelprof_forbid =
            fp32-gemm: kind=gemm dtype=fp32      | bf16 models must not run fp32 GEMMs
            no-sync: syncs>0                     | no host syncs in a step
        """,
        test_name="test_mlp",
    )
    return "\n".join(line for line in failure.splitlines() if line.startswith("E")) + "\n"


def _failed_assertion(test: str, test_name: str) -> str:
    """The ``E`` lines of ``test_name``'s failure: what the assertion says, without the report
    sections after it."""
    failure = _pytest(test, test_name=test_name)
    return "\n".join(line for line in failure.splitlines() if line.startswith("E")) + "\n"


@functools.cache
def _syncs_failure() -> str:
    """The failure section of ``assert not prof.syncs`` on a training step whose ``.item()``
    syncs, recorded with stacks on an H200."""
    return _pytest(
        """\
        from pytest_kernelprof import load_trace

        def test_training_step_never_waits_for_the_gpu():
            prof = load_trace("tests/data/h200_sync_item_stacks.json.gz")
            assert not prof.syncs
        """,
        test_name="test_training_step_never_waits_for_the_gpu",
    )


def failed_syncs() -> str:
    """docs/guide/syncs.md: what ``assert not prof.syncs`` says (the ``E`` lines)."""
    return "\n".join(line for line in _syncs_failure().splitlines() if line.startswith("E")) + "\n"


def failed_syncs_section() -> str:
    """docs/guide/syncs.md: how the same failure's ``kernelprof profile`` section ends: the
    per-call line, the sync table and what would remove the sync."""
    lines = _syncs_failure().splitlines()
    start = next(i for i, line in enumerate(lines) if " the fastest of " in line and " by host span: " in line)
    return "\n".join(lines[start:]) + "\n"


def failed_copies() -> str:
    """docs/guide/syncs.md: ``prof.copies.count("DtoH") == 0`` on the same step (its ``.item()`` copies)."""
    return _failed_assertion(
        """\
        from pytest_kernelprof import load_trace

        def test_training_step_copies_nothing_to_the_host():
            prof = load_trace("tests/data/h200_sync_item_stacks.json.gz")
            assert prof.copies.count("DtoH") == 0
        """,
        "test_training_step_copies_nothing_to_the_host",
    )


def _baseline_of(nodeid: str, rootdir: str) -> tuple[Path, Callable[[Path], str]]:
    """The baseline file of the test ``nodeid`` under ``rootdir``, and how a message names it,
    as the ``kernel_baseline`` fixture has them (a sample's path once lacked the test's folder)."""
    with _source_first():
        from pytest_kernelprof.checks.baseline import baseline_paths
        from pytest_kernelprof.reports.summary import relative_paths

    root = Path(rootdir)
    path, _ = baseline_paths(root / nodeid.split("::", 1)[0], nodeid)
    return path, lambda shown: relative_paths(str(shown), root)


def worse_baseline() -> str:
    """docs/baselines.md: the training step with an .item() checked against its baseline
    recorded before the .item() came in: one more host sync and DtoH copy."""
    with _source_first():
        from pytest_kernelprof import load_trace
        from pytest_kernelprof.checks.baseline import KernelBaseline
        from pytest_kernelprof.errors import BaselineMismatchError

    prof = load_trace(ROOT / "tests/data/h200_sync_item_stacks.json.gz")
    with tempfile.TemporaryDirectory(prefix="kernelprof-sample-") as tmp, _chdir(tmp):
        nodeid = "tests/test_train.py::test_train_step"  # the trace is a training step's
        path, shown = _baseline_of(nodeid, tmp)
        KernelBaseline(path, nodeid, update=True, names="stable", notes=[]).check(prof)
        stored = json.loads(path.read_text())
        for entry in stored["archs"]["sm90"].values():  # as recorded before the .item() came in
            entry["metrics"].update(syncs=0, dtoh_copies=0)
        path.write_text(json.dumps(stored))
        try:
            KernelBaseline(path, nodeid, update=False, names="stable", notes=[], shown=shown).check(prof)
        except BaselineMismatchError as failed:
            return f"{failed}\n"
    raise RuntimeError("the baseline check passed")


def sweep_broken_fusion() -> str:
    """docs/sweeps.md: the GeGLU sweep recorded on an H100 whose odd batch sizes break the fusion."""
    with _source_first():
        from pytest_kernelprof import SweepError, load_sweep

    def fuses_gelu_and_mul(prof: object) -> None:
        assert prof.kernels.count("triton_*gelu*mul*") == 1, "gelu and mul are not one kernel"  # type: ignore[attr-defined]

    with _chdir(ROOT):
        try:
            load_sweep("tests/data/h100_sweep_geglu_odd_break").every(fuses_gelu_and_mul)
        except SweepError as failed:
            return f"{failed}\n"
    raise RuntimeError("the sweep's check held")


def sweep_bucket_baseline() -> str:
    """docs/sweeps.md: a sweep's baseline per bucket, where the batch>=16 bucket lost its fusion."""
    with _source_first():
        from pytest_kernelprof import ProfileSweep, load_sweep
        from pytest_kernelprof.checks.baseline import KernelBaseline
        from pytest_kernelprof.errors import BaselineMismatchError

    good = load_sweep(ROOT / "tests/data/h100_sweep_geglu")
    broken = load_sweep(ROOT / "tests/data/h100_sweep_geglu_odd_break")
    changed = ProfileSweep([c for c in good if c["batch"] < 16] + [c for c in broken if c["batch"] >= 16])

    def by(case: object) -> str:
        return "batch<16" if case["batch"] < 16 else "batch>=16"  # type: ignore[index]

    with tempfile.TemporaryDirectory(prefix="kernelprof-sample-") as tmp, _chdir(tmp):
        nodeid = "tests/test_m.py::test_geglu_sweep"
        path, shown = _baseline_of(nodeid, tmp)
        KernelBaseline(path, nodeid, update=True, names="stable", notes=[]).check_sweep(good, by=by)
        try:
            KernelBaseline(path, nodeid, update=False, names="stable", notes=[], shown=shown).check_sweep(
                changed, by=by
            )
        except BaselineMismatchError as failed:
            return f"{failed}\n"
    raise RuntimeError("the baseline check passed")


def junit_properties() -> str:
    """docs/ci.md: the JUnit properties of a test that profiled the training step with an .item()."""
    with _source_first():
        from pytest_kernelprof import load_trace
        from pytest_kernelprof.reports.junit import properties

    pairs = properties([load_trace(ROOT / "tests/data/h200_sync_item_stacks.json.gz")])
    # Named after what the figures are of: the training step of h200_sync_item_stacks.
    lines = ['<testcase classname="tests.test_train" name="test_train_step" time="1.9">', "  <properties>"]
    lines += [f'    <property name="{name}" value="{value}"/>' for name, value in pairs]
    return "\n".join([*lines, "  </properties>", "</testcase>"]) + "\n"


def kernelprof_diff() -> str:
    """docs/traces.md: ``kernelprof diff`` of the eager and compiled GeGLU MLP."""
    return _kernelprof("diff", "tests/data/h200_geglu_eager.json.gz", "tests/data/h200_geglu_compiled.json.gz")


def kernelprof_diff_dtype() -> str:
    """docs/traces.md: ``kernelprof diff`` of a bf16 nn.Linear and the same in fp32."""
    return _kernelprof("diff", "tests/data/h200_linear_eager.json.gz", "tests/data/h200_linear_fp32.json.gz")


def kernelprof_diff_bias() -> str:
    """docs/traces.md: ``kernelprof diff`` of ``x @ w + b`` eager and compiled (the add into the GEMM's bias)."""
    return _kernelprof(
        "diff", "tests/data/h200_matmul_add_eager.json.gz", "tests/data/h200_matmul_add_compiled.json.gz"
    )


def kernelprof_show() -> str:
    """docs/traces.md: ``kernelprof show`` of the compiled GeGLU MLP."""
    return _kernelprof("show", "tests/data/h200_geglu_compiled.json.gz")


def kernelprof_diff_ops() -> str:
    """docs/traces.md: ``kernelprof diff --ops`` of nn.Linear and the same as matmul + add: their op trees."""
    return _kernelprof(
        "diff", "--ops", "tests/data/h200_linear_eager.json.gz", "tests/data/h200_matmul_add_eager.json.gz"
    )


def kernelprof_diff_ops_cpu() -> str:
    """docs/traces.md: ``kernelprof diff --ops`` of one workload's CPU-only traces on torch 2.4.1 and 2.13.0."""
    return _kernelprof(
        "diff", "--ops", "tests/data/cpu_torch2.4.1_calls.json.gz", "tests/data/cpu_torch2.13.0_calls.json.gz"
    )


def kernelprof_show_ops() -> str:
    """docs/traces.md: ``kernelprof show --ops`` of a bf16 nn.Linear: its CPU op tree."""
    return _kernelprof("show", "tests/data/h200_linear_eager.json.gz", "--ops")


def gpu_workflow() -> str:
    """docs/ci.md: the GitHub Actions workflow for a GPU runner, ``examples/ci/gpu-tests.yml`` whole."""
    return (ROOT / "examples" / "ci" / "gpu-tests.yml").read_text(encoding="utf-8")


SAMPLES: dict[str, Callable[[], str]] = {
    "failed-count": failed_count,
    "broken-rule": broken_rule,
    "failed-syncs": failed_syncs,
    "failed-syncs-section": failed_syncs_section,
    "failed-copies": failed_copies,
    "worse-baseline": worse_baseline,
    "junit-properties": junit_properties,
    "kernelprof-diff": kernelprof_diff,
    "kernelprof-diff-dtype": kernelprof_diff_dtype,
    "kernelprof-diff-bias": kernelprof_diff_bias,
    "kernelprof-diff-ops": kernelprof_diff_ops,
    "kernelprof-diff-ops-cpu": kernelprof_diff_ops_cpu,
    "kernelprof-show": kernelprof_show,
    "kernelprof-show-ops": kernelprof_show_ops,
    "sweep-broken-fusion": sweep_broken_fusion,
    "sweep-bucket-baseline": sweep_bucket_baseline,
    "gpu-workflow": gpu_workflow,
}


def rewritten(text: str, made: dict[str, str]) -> str:
    """``text`` with each sample block's body replaced by ``made[name]`` (made on first use)."""

    def replace(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in SAMPLES:
            raise KeyError(f"no sample {name!r}; the samples are: {', '.join(SAMPLES)}")
        if name not in made:
            made[name] = SAMPLES[name]()
        body = textwrap.indent(made[name], match["indent"], lambda line: bool(line.strip()))
        head = match.group(0)[: match.start("body") - match.start()]
        return f"{head}{body}{match['indent']}{match['fence']}"

    return SAMPLE.sub(replace, text)


def drift(pages: list[Path] = PAGES) -> dict[Path, str]:
    """Each page whose samples differ from what the tool prints now, with the page as it should be."""
    made: dict[str, str] = {}
    changed = {}
    for page in pages:
        text = page.read_text(encoding="utf-8")
        new = rewritten(text, made)
        if new != text:
            changed[page] = new
    return changed


def main(argv: list[str]) -> int:
    changed = drift()
    if "--check" in argv:
        for page, new in changed.items():
            old = page.read_text(encoding="utf-8").splitlines(keepends=True)
            name = str(page.relative_to(ROOT))
            sys.stdout.writelines(difflib.unified_diff(old, new.splitlines(keepends=True), name, name + " (tool)"))
        if changed:
            print("\nthe pages show other output than the tool prints: python tools/doc_samples.py rewrites them")
        return 1 if changed else 0
    for page, new in changed.items():
        page.write_text(new, encoding="utf-8")
        print(f"rewrote {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
