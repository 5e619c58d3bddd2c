"""The Public API page as a user reads it: docs/hooks.py, mkdocs.yml's hook, on the built HTML.

The trial: docs/reference/api.md, rendered from docstrings written for readers of the source, showed
~32 Sphinx roles as text (``:meth:`profile```, ``:class:`ForbiddenError```) and signatures with
``warmup: int = DEFAULT_WARMUP`` where a user needs the 2 it is. The hook renders both; what it
cannot render fails the build, which CI runs with ``--strict`` (the suite has no MkDocs: these
tests run the hook's functions on samples of the built page and on every signature it shows).
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import importlib
import importlib.util
import inspect
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs" / "reference").glob("*.md"))


@pytest.fixture(scope="module")
def hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ in docs/
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = writes
    return module


def test_mkdocs_runs_the_hook_and_publishes_no_source() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "\nhooks:\n  - docs/hooks.py\n" in config
    assert re.search(r"^exclude_docs: \|\n  /hooks\.py\n  __pycache__/\n", config, re.MULTILINE)


# As the built page had them: Markdown made each role's target a code span.
PROSE = (
    "<p><code>profiler(fn, *args, **kwargs)</code> forwards every extra argument to <code>fn</code>; options go\n"
    "through :meth:<code>profile</code>. Every profile is checked against <code>forbid</code>\n"
    "and raises :class:<code>ForbiddenError</code> when it breaks one.</p>"
)


def test_a_role_becomes_the_code_span_of_what_it_names(hooks: ModuleType) -> None:
    assert hooks.render(PROSE) == (
        "<p><code>profiler(fn, *args, **kwargs)</code> forwards every extra argument to <code>fn</code>; options go\n"
        "through <code>profile</code>. Every profile is checked against <code>forbid</code>\n"
        "and raises <code>ForbiddenError</code> when it breaks one.</p>"
    )
    shown = {
        ":meth:<code>~pytest_kernelprof.types.KernelList.count</code>": "<code>count</code>",
        ":py:func:<code>load_trace</code>": "<code>load_trace</code>",
        ":func:<code>the loader &lt;load_trace&gt;</code>": "<code>the loader</code>",
        ":class:<code>!Kernel</code>": "<code>Kernel</code>",
        ":data:<code>KINDS</code>,": "<code>KINDS</code>,",
        ":mod:<code>pytest_kernelprof.types</code>": "<code>pytest_kernelprof.types</code>",
    }
    assert {text: hooks.render(text) for text in shown} == shown


def test_a_role_it_cannot_render_fails_the_build(hooks: ModuleType) -> None:
    # A role whose target is no code span (written in raw HTML, say) would stay as text.
    with pytest.raises(hooks.BuildError, match="Sphinx role it cannot render:\n<p>see :attr:<b>calls</b></p>"):
        hooks.render("<p>see :attr:<b>calls</b></p>")


def _roles_in(text: str) -> set[str]:
    return set(re.findall(r":(?:py:)?([a-z]+):`", text))


def test_every_role_the_docstrings_write_is_one_the_hook_renders(hooks: ModuleType) -> None:
    used = set().union(*(_roles_in(path.read_text(encoding="utf-8")) for path in (ROOT / "src").rglob("*.py")))
    assert {"class", "meth", "func"} <= used
    assert used <= set(hooks.ROLE_NAMES)


# Profiler's signature and a dataclass field's, as mkdocstrings and Pygments wrote them.
SIGNATURE = "\n".join(
    [
        '<div class="doc-signature highlight"><pre><span></span><code><span class="nf">Profiler</span>'
        '<span class="p">(</span>',
        '    <span class="o">*</span><span class="p">,</span>',
        '    <span class="n">warmup</span><span class="p">:</span> <span class="nb">int</span>'
        ' <span class="o">=</span> <span class="n">DEFAULT_WARMUP</span><span class="p">,</span>',
        '    <span class="n">calls</span><span class="p">:</span> <span class="nb">int</span>'
        ' <span class="o">=</span> <span class="n">DEFAULT_CALLS</span><span class="p">,</span>',
        '    <span class="n">no_grad</span><span class="p">:</span> <span class="nb">bool</span>'
        ' <span class="o">=</span> <span class="kc">False</span><span class="p">,</span>',
        '    <span class="n">decoder</span><span class="p">:</span> <span class="n">Decoder</span>'
        ' <span class="o">=</span> <span class="n">BUILT_IN</span><span class="p">,</span>',
        '<span class="p">)</span>',
        "</code></pre></div>",
        '<div class="doc-signature highlight"><pre><span></span><code><span class="n">evidence</span>'
        '<span class="p">:</span> <span class="n">Evidence</span> <span class="o">=</span>'
        ' <span class="n">field</span><span class="p">(</span>',
        '    <span class="n">default</span><span class="o">=</span><span class="n">NO_EVIDENCE</span>'
        '<span class="p">,</span> <span class="n">compare</span><span class="o">=</span>'
        '<span class="kc">False</span>',
        '<span class="p">)</span>',
        "</code></pre></div>",
    ]
)


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def test_a_default_that_names_a_constant_shows_its_value(hooks: ModuleType) -> None:
    from pytest_kernelprof import Profiler

    shown = _text(hooks.render(SIGNATURE))
    defaults = inspect.signature(Profiler).parameters
    assert f"warmup: int = {defaults['warmup'].default}," in shown
    assert f"calls: int = {defaults['calls'].default}," in shown
    assert "decoder: Decoder = Decoder()," in shown
    assert "field(\n    default=Evidence(), compare=False\n)" in shown
    assert "no_grad: bool = False," in shown
    # The page's prose is no signature: a name there is left alone.
    assert hooks.render("<p>= <code>DEFAULT_WARMUP</code></p>") == "<p>= <code>DEFAULT_WARMUP</code></p>"


def test_a_default_it_cannot_show_fails_the_build(hooks: ModuleType) -> None:
    with pytest.raises(hooks.BuildError, match="default DEFAULT_WARMUPS is no name of pytest_kernelprof's modules"):
        hooks.render(SIGNATURE.replace("DEFAULT_WARMUP", "DEFAULT_WARMUPS"))
    # A constant with no short spelling: the package's table of where each public name lives.
    with pytest.raises(hooks.BuildError, match="the default _HOMES has no short spelling"):
        hooks.render(SIGNATURE.replace("DEFAULT_WARMUP", "_HOMES"))


def _documented() -> Iterator[Any]:
    """Each object a ``:::`` line of the reference pages renders."""
    for page in PAGES:
        for path in re.findall(r"^:::[ \t]+(\S+)", page.read_text(encoding="utf-8"), re.MULTILINE):
            module, name = path.rsplit(".", 1)
            yield getattr(importlib.import_module(module), name)


def _named_defaults(node: ast.AST) -> Iterator[tuple[str, ast.expr]]:
    """(where, default) for each default of a public signature of the class or function ``node``:
    its parameters', a public method's, and a class's fields (``= X``, ``field(default=X)``)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        if node.name.startswith("_") and node.name != "__init__":
            return
        positional = [*node.args.posonlyargs, *node.args.args]
        pairs = zip(positional[len(positional) - len(node.args.defaults) :], node.args.defaults, strict=True)
        keywords = zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True)
        for arg, default in [*pairs, *keywords]:
            if default is not None:
                yield f"{node.name}({arg.arg}=...)", default
    elif isinstance(node, ast.ClassDef):
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
                value = item.value
                if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "field":
                    value = next((k.value for k in value.keywords if k.arg == "default"), None)  # type: ignore[assignment]
                if value is not None:
                    yield f"{node.name}.{item.target.id}", value
            yield from _named_defaults(item)


def test_every_default_the_reference_shows_by_name_shows_its_value(hooks: ModuleType) -> None:
    """Every default of the documented signatures that is a name (``DEFAULT_WARMUP``, under
    whatever name it has now) shows the value it has where the source writes it."""
    checked = {}
    for obj in _documented():
        if not inspect.isclass(obj) and not inspect.isfunction(obj):
            continue
        module = sys.modules[obj.__module__]
        for where, default in _named_defaults(ast.parse(textwrap.dedent(inspect.getsource(obj))).body[0]):
            assert not (isinstance(default, ast.Attribute) and ast.unparse(default).startswith("pytest_kernelprof")), (
                f"{where}: the hook shows a default named by a bare name, not {ast.unparse(default)}"
            )
            # A builtin (``shown: ... = str``) is Pygments' ``nb``, no name the hook looks up.
            if isinstance(default, ast.Name) and not hasattr(builtins, default.id):
                value = module.__dict__[default.id]
                assert hooks.default_value(default.id) == hooks.spelling(value), where
                checked[f"{obj.__name__}: {where}"] = hooks.default_value(default.id)
    from pytest_kernelprof import Profiler

    assert checked["Profiler: __init__(warmup=...)"] == repr(inspect.signature(Profiler).parameters["warmup"].default)
    assert len(checked) >= 6, checked  # the counts and bounds (a decoder= defaults to None, no name)


API_PAGE = ROOT / "docs" / "reference" / "api.md"


def _filters() -> dict[str, list[str]]:
    """Each ``:::`` object of the API page and the ``filters`` its own options give (the global ones otherwise)."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    default = ast.literal_eval(re.search(r"^ +filters: (\[.*\])$", config, re.MULTILINE)[1])  # type: ignore[index]
    found = {}
    for block in re.split(r"^(?=::: )", API_PAGE.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]:
        own = re.search(r"^ +filters: (\[.*\])$", block.split("\n\n", 1)[0], re.MULTILINE)
        found[block.split()[1]] = ast.literal_eval(own[1]) if own else default
    return found


def _shown(name: str, filters: list[str]) -> bool:
    """Whether mkdocstrings lists a member ``name`` under these filters (``!`` excludes a match)."""
    return all(
        (re.search(f[1:], name) is None) if f.startswith("!") else (re.search(f, name) is not None) for f in filters
    )


def _has(path: str, name: str) -> bool:
    """Whether the object at ``path`` has a member ``name``: a class attribute, a field or an instance attribute."""
    module, attr = path.rsplit(".", 1)
    cls = getattr(importlib.import_module(module), attr)
    return hasattr(cls, name) or name in inspect.get_annotations(cls) or f"self.{name} = " in inspect.getsource(cls)


# The trial found these on the page, listed as public: what the plugin's reports call.
HIDDEN = {
    "pytest_kernelprof.types.OpTable": ("whose", "heading", "time_headers", "times_note"),
    "pytest_kernelprof.types.Count": ("noun", "fixes", "explain", "query"),
    "pytest_kernelprof.KernelProfile": ("compile_facts", "memory_from"),
    "pytest_kernelprof.types.KernelBaseline": ("explanation", "legacy_path"),
}
# What a test calls: still on the page.
SHOWN = {
    "pytest_kernelprof.types.KernelList": ("count", "one", "matching", "of_kind", "table", "unplaced"),
    "pytest_kernelprof.types.OpTable": ("names", "tree", "table", "call", "medians"),
    "pytest_kernelprof.types.Count": ("total", "table", "times"),
    "pytest_kernelprof.KernelProfile": ("kernels", "ops", "syncs", "copies", "compile", "memory", "table"),
    "pytest_kernelprof.types.KernelBaseline": ("check", "check_sweep"),
    "pytest_kernelprof.Profiler": ("profile", "teach", "sweep", "record", "load_trace"),
}


def test_the_page_lists_what_a_test_calls_and_not_the_reports_helpers() -> None:
    filters = _filters()
    for path, names in HIDDEN.items():
        for name in names:
            assert _has(path, name), f"{path}.{name}: a filter for a name the object no longer has"
            assert not _shown(name, filters[path]), f"{path}.{name} is listed"
    for path, names in SHOWN.items():
        for name in names:
            assert _has(path, name), f"{path}.{name}"
            assert _shown(name, filters[path]), f"{path}.{name} is hidden"


def test_each_profiler_setting_has_a_line_with_its_type() -> None:
    """Trial: ``warmup``, ``calls``, ``no_grad``... were a bare name each: the class docstring's
    Attributes table gives each a type and a line, and the bare entries are hidden."""
    from pytest_kernelprof import Profiler
    from pytest_kernelprof.options import ProfileOptions

    doc = inspect.getdoc(Profiler) or ""
    settings = [field.name for field in dataclasses.fields(ProfileOptions)]
    filters = _filters()["pytest_kernelprof.Profiler"]
    for name in [*settings, "options", "captures"]:
        assert re.search(rf"^:vartype {name}: \S", doc, re.MULTILINE), name
        assert re.search(rf"^:ivar {name}: \S", doc, re.MULTILINE), name
        # griffe reads the type only when it comes before its line.
        assert doc.index(f":vartype {name}:") < doc.index(f":ivar {name}:"), name
        assert not _shown(name, filters), name


def test_objects_are_one_heading_level_below_their_section() -> None:
    """Trial: the section "Profiling" and the class "Profiler" were both h2."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.search(r"^ +heading_level: 3$", config, re.MULTILINE)
    page = API_PAGE.read_text(encoding="utf-8")
    assert "heading_level" not in page
    assert re.findall(r"^(#+) ", page, re.MULTILINE) == ["#", *["##"] * page.count("\n## ")]


def test_the_kernel_baseline_fixtures_object_has_a_section() -> None:
    page = API_PAGE.read_text(encoding="utf-8")
    section = page.split("\n## Kernel baselines\n", 1)[1].split("\n## ", 1)[0]
    assert "::: pytest_kernelprof.types.KernelBaseline" in section
    assert "`kernel_baseline` fixture" in section
    assert "](../baselines.md)" in section
    from pytest_kernelprof.checks.baseline import KernelBaseline

    doc = inspect.getdoc(KernelBaseline) or ""
    assert "assert prof == kernel_baseline" in doc
    assert "legacy_path" not in doc  # the fixture's arguments are __init__'s docstring, off the page
