"""MkDocs hooks (mkdocs.yml ``hooks:``): the API reference as a user reads it, from docstrings
written for readers of the source.

The docstrings of ``src/`` use Sphinx roles (``:class:`ForbiddenError```, ``:meth:`~a.B.c```),
and public signatures name module constants as defaults (``warmup: int = DEFAULT_WARMUP``).
mkdocstrings renders both as written; here a role becomes the code span it marks (``~a.B.c`` shown
as ``c``), and a default that names a constant shows the constant's value (``warmup: int = 2``),
read from the package itself, so that renaming the constant changes nothing on the page.

What this cannot render fails the build (CI builds with ``--strict``) instead of reaching a
page: a role left on any page, a named default that is no constant of the package or whose
value has no short spelling. ``tests/plugin/test_api_page.py`` runs these functions on samples
of the built HTML and on every signature the API page shows.
"""

from __future__ import annotations

import html
import importlib
import re
import sys
from pathlib import Path
from typing import Any

try:
    from mkdocs.exceptions import PluginError as BuildError  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # the test suite runs these functions without MkDocs
    BuildError = ValueError  # type: ignore[assignment,misc,unused-ignore]

# The Python domain's roles, as the docstrings write them (``:class:`` or ``:py:class:``).
ROLE_NAMES = ("attr", "class", "const", "data", "exc", "func", "meth", "mod", "obj")
_ROLE = rf":(?:py:)?(?:{'|'.join(ROLE_NAMES)}):"
# Markdown made the role's target a code span: ``:class:<code>X</code>``.
ROLE = re.compile(_ROLE + r"<code>(?P<target>[^<]*)</code>")
LEFT_ROLE = re.compile(_ROLE)

# mkdocstrings' signatures, highlighted by Pygments: a bare name after ``=`` (a parameter's
# default, ``field(default=NAME)``, an attribute's value) and before ``,``, ``)`` or the end.
SIGNATURE = re.compile(r'<div class="doc-signature highlight">.*?</div>', re.DOTALL)
NAMED_DEFAULT = re.compile(
    r'(?P<equals><span class="o">=</span>\s*)<span class="n">(?P<name>[A-Za-z_]\w*)</span>'
    r'(?=\s*(?:<span class="p">[,)]|</code>))'
)

PACKAGE = "pytest_kernelprof"


def shown(target: str) -> str:
    """What Sphinx shows for a role's target: the title of ``title <target>``, the last part of
    ``~a.b.C``, the target itself otherwise (``!`` only turns off the link)."""
    titled = re.fullmatch(r"(?P<title>.*?)\s*&lt;[^&]*&gt;", target, re.DOTALL)
    if titled is not None:
        return titled["title"]
    target = target.removeprefix("!")
    if target.startswith("~"):
        return target[1:].rsplit(".", 1)[-1]
    return target


def render_roles(text: str) -> str:
    """Every role of the HTML ``text`` as the code span of what it names."""
    return ROLE.sub(lambda found: f"<code>{shown(found['target'])}</code>", text)


def _package_modules() -> list[Any]:
    """The package's modules that hold what the API page documents: every public name loaded."""
    package = importlib.import_module(PACKAGE)
    types = importlib.import_module(f"{PACKAGE}.types")
    for module in (package, types):
        for name in module.__all__:
            getattr(module, name)
    return [module for name, module in sorted(sys.modules.items()) if name.split(".")[0] == PACKAGE]


def spelling(value: object) -> str | None:
    """A short spelling of a default's value, or None: a literal as Python writes it; an object
    that is what its class makes without arguments as ``Class()`` (the built-in ``Decoder()``)."""
    if value is None or isinstance(value, bool | int | float | str):
        return repr(value)
    if isinstance(value, tuple) and all(spelling(item) == repr(item) for item in value):
        return repr(value)
    cls = type(value)
    try:
        fresh = cls()
    except Exception:
        return None
    return f"{cls.__name__}()" if fresh == value or repr(fresh) == repr(value) else None


def default_value(name: str) -> str:
    """How the page shows a default named ``name``: the spelling of the package's constant."""
    values = {
        id(module.__dict__[name]): module.__dict__[name] for module in _package_modules() if name in module.__dict__
    }
    if not values:
        raise BuildError(f"docs/hooks.py: a signature's default {name} is no name of {PACKAGE}'s modules")
    spellings = {spelling(value) for value in values.values()}
    if len(spellings) > 1:
        raise BuildError(
            f"docs/hooks.py: the modules of {PACKAGE} give {name} different values: {sorted(map(str, spellings))}"
        )
    [spelled] = spellings
    if spelled is None:
        raise BuildError(
            f"docs/hooks.py: the default {name} has no short spelling to show; give spelling() one, or make the "
            "default a literal"
        )
    return spelled


def _span(spelled: str) -> str:
    kind = "mi" if re.fullmatch(r"-?\d+", spelled) else "mf" if re.fullmatch(r"-?[\d.e+-]+", spelled) else "n"
    return f'<span class="{kind}">{html.escape(spelled, quote=False)}</span>'


def render_defaults(text: str) -> str:
    """Each default of the signatures in ``text`` that names a constant, as the constant's value."""

    def signature(found: re.Match[str]) -> str:
        return NAMED_DEFAULT.sub(lambda named: named["equals"] + _span(default_value(named["name"])), found[0])

    return SIGNATURE.sub(signature, text)


def render(text: str) -> str:
    """A built page's HTML as the user reads it; raises where something would be left as written."""
    text = render_defaults(render_roles(text))
    left = [text[max(0, found.start() - 60) : found.end() + 60] for found in LEFT_ROLE.finditer(text)]
    if left:
        raise BuildError("docs/hooks.py: a Sphinx role it cannot render:\n" + "\n".join(left))
    return text


def on_config(config: Any) -> Any:
    """The package is read from the checkout, as mkdocstrings reads it (``paths: [src]``)."""
    src = str(Path(config.config_file_path).parent / "src")
    if src not in sys.path:
        sys.path.insert(0, src)
    return config


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    return render(html)
