"""Every ```python block of README.md and docs/ is run here, or marked as not runnable.

A block is not run when the line right before its fence is ``<!-- not run: REASON -->`` (the
reason is required: a GPU, a model of the reader's own, ...). Of the others, a block that
defines a test (``def test_``) is a test file: all of them are written into one pytester
project and run in one pytest subprocess, where they must pass or skip (GPU tests skip without a
GPU). Any other block is a snippet, executed in a fresh namespace from the repository root, so
that ``tests/data/...`` paths resolve as they do in a checkout. Blocks in other languages
(bash, ini, toml, text) are not run. An output block (``text``, ``xml``) is made by
``tools/doc_samples.py`` (``<!-- sample: NAME -->`` before its fence) and checked here against
what the tool prints now, or marked ``<!-- not generated: REASON -->``. CONTRIBUTING.md
describes the convention.
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import re
import shlex
import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

# A fence at any indentation, its info string, its body, and the closing fence at the same indentation.
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
NOT_RUN = re.compile(r"^\s*<!--\s*not run:\s*(?P<reason>.*?)\s*-->\s*$")
# Output blocks: made by tools/doc_samples.py, or marked as not the tool's output.
SAMPLE = re.compile(r"^\s*<!--\s*sample:\s*(?P<name>[\w-]+)\s*-->\s*$")
NOT_GENERATED = re.compile(r"^\s*<!--\s*not generated:\s*(?P<reason>.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    info: str
    code: str
    not_run: str | None  # the reason, for a block marked not runnable
    marker: str  # the line right before the fence

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"

    @property
    def is_python(self) -> bool:
        return self.info.split(maxsplit=1)[0].lower() in ("python", "py") if self.info.strip() else False

    @property
    def is_test_file(self) -> bool:
        return re.search(r"^def test_", self.code, re.MULTILINE) is not None


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = NOT_RUN.match(before)
        found.append(
            Block(
                page=page,
                line=line,
                info=match["info"].strip(),
                code=textwrap.dedent(match["body"]),
                not_run=None if marker is None else marker["reason"],
                marker=before,
            )
        )
    return found


ALL = [block for page in PAGES for block in blocks(page)]
PYTHON = [block for block in ALL if block.is_python]
SNIPPETS = [block for block in PYTHON if block.not_run is None and not block.is_test_file]
TEST_FILES = [block for block in PYTHON if block.not_run is None and block.is_test_file]


def test_the_pages_have_python_blocks() -> None:
    assert (ROOT / "docs").is_dir()
    assert SNIPPETS
    assert TEST_FILES


@pytest.mark.parametrize("block", [b for b in PYTHON if b.not_run is not None], ids=lambda b: b.id)
def test_a_block_marked_not_run_says_why(block: Block) -> None:
    assert len(block.not_run or "") >= 8, f"{block.id}: write why the block is not run: <!-- not run: REASON -->"


def test_fences_are_closed() -> None:
    """An unclosed fence would hide the blocks after it from this module."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        rest = FENCE.sub("", text)
        assert not re.search(r"^[ \t]*(`{3,}|~{3,})", rest, re.MULTILINE), f"{page}: an unclosed code fence"


OUTPUT = [block for block in ALL if block.info.split(maxsplit=1)[:1] in (["text"], ["xml"])]


@pytest.mark.parametrize("block", OUTPUT, ids=lambda b: b.id)
def test_an_output_block_is_the_tools_or_says_why_not(block: Block) -> None:
    """Issue 32 item 4: sample output is made by the tool (tools/doc_samples.py), so it cannot drift."""
    sample, not_generated = SAMPLE.match(block.marker), NOT_GENERATED.match(block.marker)
    assert sample or not_generated, (
        f"{block.id}: output must be made by the tool: <!-- sample: NAME --> before the fence, NAME a sample "
        "of tools/doc_samples.py; or say why it is not the tool's: <!-- not generated: REASON -->"
    )
    assert sample or len(not_generated["reason"]) >= 8, f"{block.id}: write why the block is not generated"


def _tool(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.usefixtures("warm_subprocesses")  # the samples' pytest runs start warm
def test_the_sample_outputs_are_what_the_tool_prints_now() -> None:
    """Each ``<!-- sample: NAME -->`` block, made again: a page that shows other output fails,
    with the diff (``python tools/doc_samples.py`` rewrites the pages)."""
    doc_samples = _tool("doc_samples")
    used = {SAMPLE.match(block.marker)["name"] for block in ALL if SAMPLE.match(block.marker)}  # type: ignore[index]
    assert used == set(doc_samples.SAMPLES), "a sample of tools/doc_samples.py that no page shows, or one it lacks"
    changed = doc_samples.drift(PAGES)
    diffs = [
        "".join(difflib.unified_diff(page.read_text().splitlines(True), new.splitlines(True), str(page), "tool"))
        for page, new in changed.items()
    ]
    assert not changed, "the pages show other output than the tool prints (python tools/doc_samples.py):\n" + "".join(
        diffs
    )


def test_a_baseline_sample_names_the_file_that_its_test_has() -> None:
    """Trial report: docs/baselines.md paired ``__kernelprof__/test_m/test_decode.json`` with
    ``tests/test_m.py::test_decode``, whose file a run names ``tests/__kernelprof__/test_m/...``."""
    from pytest_kernelprof.checks.baseline import baseline_paths

    doc_samples = _tool("doc_samples")
    for sample in (doc_samples.worse_baseline, doc_samples.sweep_bucket_baseline):
        text = sample()
        [file] = re.findall(r" in (\S+\.json)", text.splitlines()[0])
        [nodeid] = re.findall(r"--kernelprof-update '([^']+)'", text)
        path, _ = baseline_paths(Path(nodeid.split("::", 1)[0]), nodeid)
        assert file == path.as_posix(), sample.__name__


def test_a_sample_of_the_training_step_names_its_test_after_it() -> None:
    """Trial report: docs/ci.md's JUnit properties named the test ``tests.test_decode`` ``test_step``
    (and docs/baselines.md's worse baseline ``test_decode``) where the figures are those of the
    training step recorded in ``h200_sync_item_stacks.json.gz``."""
    doc_samples = _tool("doc_samples")
    for sample in (doc_samples.junit_properties, doc_samples.worse_baseline):
        text = sample()
        assert "decode" not in text, sample.__name__
        assert re.search(r"test_train\.py::test_train_step|\"tests\.test_train\" name=\"test_train_step\"", text), text


@pytest.mark.parametrize("block", SNIPPETS, ids=lambda b: b.id)
def test_snippet_runs(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code = compile(block.code, block.id, "exec")
    exec(code, {"__name__": "__doc_snippet__"})


def test_test_blocks_pass(pytester: pytest.Pytester) -> None:
    """The test files of the pages, each its own module, in one pytest run: nothing fails or errors."""
    files = {}
    for block in TEST_FILES:
        name = "test_doc_" + re.sub(r"\W", "_", block.id.removesuffix(".md").replace(".md:", "_"))
        files[name] = block.code
    pytester.makepyfile(**files)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rfEs", "-v")
    outcomes = result.parseoutcomes()
    bad = {key: outcomes[key] for key in ("failed", "error", "errors") if outcomes.get(key)}
    assert not bad, result.stdout.str()
    for name in files:  # each file was collected and ran
        assert f"{name}.py::" in result.stdout.str(), f"{name} ran no test:\n{result.stdout.str()}"


def test_the_profile_page_names_every_field_of_a_kernel() -> None:
    """Issue 32 item 11: docs/guide/profile.md left out evidence, unplaced and part_of."""
    import dataclasses

    from pytest_kernelprof.types import Kernel

    page = (ROOT / "docs" / "guide" / "profile.md").read_text()
    fields = {field.name for field in dataclasses.fields(Kernel) if field.repr}
    properties = {name for name, value in vars(Kernel).items() if isinstance(value, property)}
    properties |= {name for name, value in vars(Kernel.__mro__[1]).items() if isinstance(value, property)}
    missing = sorted(name for name in fields | properties if not name.startswith("_") and f"`{name}`" not in page)
    assert not missing, f"docs/guide/profile.md does not name Kernel's {missing}"


def test_an_example_that_reads_a_recorded_trace_says_it_needs_a_checkout() -> None:
    """Issue 32 item 11: tests/data is in the repository, not in the installed package."""
    for block in SNIPPETS + TEST_FILES:
        if "tests/data/" not in block.code:
            continue
        text = block.page.read_text(encoding="utf-8")
        before = "\n".join(text.splitlines()[: block.line - 1])
        paragraph = before.rstrip().rsplit("\n\n", 1)[-1]
        assert "checkout" in paragraph, f"{block.id}: say that the trace is in a checkout (tests/data/)"


WORKFLOW = ROOT / "examples" / "ci" / "gpu-tests.yml"


def _workflow_pytest_line() -> list[str]:
    """The arguments of the pytest command of the workflow's "tests" step (a folded ``run: >``)."""
    lines = WORKFLOW.read_text(encoding="utf-8").splitlines()
    step = lines.index("      - name: tests")
    start = next(i for i in range(step, len(lines)) if lines[i].strip() == "run: >")
    command = []
    for line in lines[start + 1 :]:
        if not line.startswith(" " * 10):
            break
        command.append(line.strip())
    return shlex.split(" ".join(command))


def test_the_ci_page_shows_the_example_workflow_whole() -> None:
    """The trial: docs/ci.md's workflow lacked --kernelprof-require-gpu, examples/ci/gpu-tests.yml
    --junitxml and --kernelprof-trace-dir; the page now shows the file itself."""
    page = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    shown = [b for b in blocks(ROOT / "docs" / "ci.md") if b.info == "yaml"]
    assert len(shown) == 1, "docs/ci.md shows one workflow"
    assert shown[0].code == WORKFLOW.read_text(encoding="utf-8")
    assert "<!-- sample: gpu-workflow -->\n```yaml" in page


def test_the_example_workflow_turns_on_every_ci_output_and_uploads_what_it_writes() -> None:
    args = _workflow_pytest_line()
    assert args[:3] == ["python", "-m", "pytest"]
    for option in ("--kernelprof-require-gpu", "--kernelprof-stacks", "--junitxml", "--kernelprof-trace-dir"):
        assert option in args, f"the workflow's pytest line lacks {option}"
    assert args[args.index("-n") + 1] == "$(nvidia-smi -L | wc -l)"  # a worker per GPU
    assert args[args.index("--kernelprof-gpus") + 1] == "auto"
    text = WORKFLOW.read_text(encoding="utf-8")
    assert f"path: {args[args.index('--kernelprof-trace-dir') + 1]}/" in text
    assert f"path: {args[args.index('--junitxml') + 1]}\n" in text


def test_the_example_workflows_pytest_line_runs_and_fails_a_gpu_test_without_a_gpu(
    cpu_pytester: pytest.Pytester,
) -> None:
    """The workflow's own pytest line, with no GPU (one process: -n 0): a gpu test fails rather
    than skip, and a failing profiled test leaves its trace and JUnit properties."""
    cpu_pytester.makepyfile(
        test_ci="""
        import pytest
        import torch

        @pytest.mark.gpu
        def test_on_the_gpu():
            pass

        def test_profiled_and_failing(kernelprof):
            kernelprof(torch.relu, torch.ones(4))
            assert False
        """
    )
    args = _workflow_pytest_line()[3:]
    args[args.index("-n") + 1] = "0"
    result = cpu_pytester.runpytest(*args)
    result.assert_outcomes(failed=1, errors=1)
    result.stdout.fnmatch_lines(["kernelprof: no CUDA GPU, gpu tests error in setup (--kernelprof-require-gpu)*"])
    junit = (cpu_pytester.path / "junit.xml").read_text()
    assert '<property name="kernelprof.profiles" value="1"' in junit
    assert [p.name for p in (cpu_pytester.path / "kernelprof-traces").glob("*.json.gz")]


def test_the_versions_page_counts_no_tests_outside_its_dated_table() -> None:
    """The trial: docs/versions.md said the matrix ran "with this checkout's code ... 2,345 of
    them" while the checkout collected about 2,850: a count in the prose drifts with every test
    added. The table is a dated run's record; the prose says so and counts nothing."""
    page = (ROOT / "docs" / "versions.md").read_text(encoding="utf-8")
    prose = [line for line in page.splitlines() if not line.startswith("|")]
    for line in prose:
        assert not re.search(r"\b(\d{1,3},\d{3}|\d{4,})\s+(of them|tests)\b", line), line  # the suite's size
    assert "this checkout" not in page


@pytest.mark.usefixtures("warm_subprocesses")  # the picture's pytest runs start warm
def test_the_summary_picture_is_made_from_a_run_that_fails_as_its_caption_says() -> None:
    """The trial: docs/images/ci-summary.png showed a kernel name shortened as no output does
    any more; tools/doc_images.py makes the pictures again from the tool, and its run is kept
    working here (the pictures themselves need Chromium)."""
    doc_images = _tool("doc_images")
    summary = _image_sources()[doc_images.SUMMARY_SOURCE]
    assert (
        "### 4 tests failed: kernelprof_forbid rule (1), kernel baseline (1), host syncs (1), kernel assertion (1)"
    ) in summary
    assert "<details><summary><code>test_ci.py::test_two_gemms</code> failed (kernel assertion)" in summary
    caption = "a rule break, a baseline regression, a sync and a kernel count, the count's failure unfolded"
    assert f"{caption}](images/ci-summary.png)" in (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")


@pytest.mark.usefixtures("warm_subprocesses")
def test_the_pictures_are_drawn_from_what_the_tool_writes_now() -> None:
    """Trial: docs/images/ci-summary.png and ci-timeline.png headed their kernel tables ``ops``
    long after every output said ``fused ops``. tools/doc_images.py writes beside each picture
    what it drew it from (the summary's Markdown, the timeline page's hash); made again here."""
    stale = {
        path.name: difflib.unified_diff(
            path.read_text(encoding="utf-8").splitlines(True) if path.exists() else [],
            text.splitlines(True),
            f"docs/images/{path.name}",
            "the tool now",
        )
        for path, text in _image_sources().items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    }
    assert not stale, (
        "the pictures of docs/ci.md are stale: run python tools/doc_images.py (needs Chromium)\n"
        + "".join("".join(diff) for diff in stale.values())
    )


@functools.cache
def _image_sources() -> dict[Path, str]:
    """What tools/doc_images.py would draw the pictures from now (two pytest runs and a page)."""
    sources: dict[Path, str] = _tool("doc_images").sources()
    return sources


@pytest.mark.parametrize("name", ["ci-summary.png", "ci-timeline.png"])
def test_the_pictures_are_small(name: str) -> None:
    assert (ROOT / "docs" / "images" / name).stat().st_size < 400 * 1024


def test_the_decoding_page_names_every_source_of_evidence_in_order() -> None:
    """Issue 32: "The evidence, in order" and the `evidence` list left out `ir`, which the kernel
    table prints (`reduction (ir)`)."""
    from pytest_kernelprof.decode import SOURCES

    page = (ROOT / "docs" / "decoding.md").read_text()
    section = page.split("| source | what it reads | example |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `([\w-]+)`(?:, last)? \|", section, re.M)
    assert list(dict.fromkeys(rows)) == list(SOURCES)
    listed = re.search(r"^- `evidence`: per fact, (.*?), or None", page, re.M | re.S)
    assert listed is not None
    assert re.findall(r'`"([\w-]+)"`', listed.group(1)) == list(SOURCES)


def test_the_profile_page_says_which_call_each_figure_comes_from() -> None:
    """Issue 32: the page said a profile was "the first profiled call" with median times, where
    syncs, launches and host figures are one call's and copies may be another call's."""
    page = (ROOT / "docs" / "guide" / "profile.md").read_text()
    assert "is one representative call: the first profiled call" not in page
    table = page.split("| figure | which call it comes from |", 1)[1].split("\n\n", 1)[0]
    for figure in ("kernels", "ops", "memory_ops", "copies", "syncs", "launches", "wall_us", "gpu_busy_us"):
        assert f"`{figure}`" in table, figure


def test_the_pages_name_no_internal_module_for_users_to_call() -> None:
    """Issue 32: docs/rules.md told users to pass ``pytest_kernelprof.checks.rules.parse_rules(...)``
    to ``Profiler``, where its example (and the code) takes the rule lines as strings."""
    internal = re.compile(r"pytest_kernelprof\.(checks|api|model|assemble|capture|reports|traces|health|tables)\b")
    # A ``:::`` line is mkdocstrings' address of what it renders (the page shows the bare name):
    # the kernel_baseline fixture's class has no public module to import it from.
    found = [
        f"{page.relative_to(ROOT)}: {hit[0]}"
        for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
        for hit in internal.finditer(re.sub(r"^:::.*$", "", page.read_text(encoding="utf-8"), flags=re.MULTILINE))
    ]
    assert not found
    assert 'Profiler(forbid=["no-mm: op=aten::mm | use the fused op", ...])' in (ROOT / "docs" / "rules.md").read_text()


def test_no_object_is_documented_twice() -> None:
    """Trial: docs/reference/api.md had ``::: pytest_kernelprof.types.KernelName`` under two
    headings, 13 duplicate anchors in the built page that ``mkdocs build --strict`` lets pass:
    one place per object, a link from any other."""
    seen: dict[str, str] = {}
    twice = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for found in re.finditer(r"^:::[ \t]+(\S+)", text, re.MULTILINE):
            where = f"{page.relative_to(ROOT).as_posix()}:{text.count(chr(10), 0, found.start()) + 1}"
            if found[1] in seen:
                twice.append(f"{found[1]}: {seen[found[1]]} and {where}")
            seen.setdefault(found[1], where)
    assert len(seen) > 30
    assert not twice, "documented twice (keep one, link to it from the other):\n" + "\n".join(twice)


def test_the_baseline_pages_end_of_run_lines_are_those_the_run_prints() -> None:
    """Trial report: docs/baselines.md showed ``written ...: sm90/default`` where the run adds
    `` (new entry)``, and an improved value as ``improved: TEST syncs 12 -> 9``, in words that
    neither the run's end nor an update's listing used any more."""
    from pytest_kernelprof.checks.baseline import UPDATED, WRITTEN, BaselineSession, Improved, Recorded

    path, nodeid = "tests/__kernelprof__/test_m/test_mlp.json", "tests/test_m.py::test_mlp"
    session = BaselineSession()
    session.add_report(nodeid, [Recorded(WRITTEN, path, "sm90", "default"), Recorded(UPDATED, path, "sm90", "x")])
    session.add_report(nodeid, [Improved(nodeid, "default", "syncs", 12, 9)])
    printed = {line for section in session.summary(ROOT, narrowed=True) for line in section}
    # The page's inline code (its fenced blocks left out), its lines joined as Markdown joins them.
    prose = FENCE.sub("", (ROOT / "docs" / "baselines.md").read_text(encoding="utf-8"))
    spans = re.findall(r"`([^`]+)`", re.sub(r"\n\s*", " ", prose))
    told = [
        span for span in spans if re.match(r"(written|updated) tests/|(improved|better): \w+:? [\d,]+ -> .* in ", span)
    ]
    assert len(told) == 3, told
    for span in told:
        line = span.replace("sm90/default", "sm90/x") if span.startswith("updated") else span
        assert line in printed, (span, sorted(printed))


def test_the_sites_install_section_is_the_readmes() -> None:
    # A trial: docs/index.md had its own install section, which left out the [fast] extra, the
    # git+file://localhost form and the install without torch that the README had gained.
    def section(text: str) -> str:
        return text[text.index("## Install\n") : text.index("\n## ", text.index("## Install\n") + 1)]

    readme = section((ROOT / "README.md").read_text(encoding="utf-8"))
    site = section((ROOT / "docs" / "index.md").read_text(encoding="utf-8"))
    assert "[fast]" in readme
    assert site == readme.replace("](docs/", "](")  # the README's links into docs/, from docs/
