"""Check the package's import graph: no cycle, and no upward import along the pipeline.

    python tools/import_graph.py          # prints the graph; exit 1 on a cycle or an upward import

Nodes are the modules of ``src/pytest_kernelprof`` and its packages (``capture/``, ``traces/``,
``decode/``, ``assemble/``, ``model/``, ``health/``, ``checks/``, ``api/``, ``reports/``,
``plugin/``) as one node each; edges are the relative imports (``from .x import``, also inside
functions). ``LAYERS`` orders the pipeline, lowest first: a module may import only from its own
layer's packages or lower ones.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "pytest_kernelprof"

# Lowest first: the leaf modules, then the pipeline's stages in the order they may import each
# other (decode and traces know nothing of profiles; model owns the interfaces it loads through;
# assemble builds model values from traces and decode; capture runs a callable and hands its
# session on; checks read profiles; api assembles; reports render; plugin and cli sit on top, and
# so does types, the public face of the value types).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "paths", "tables", "options", "running"),
    ("decode",),
    ("traces",),
    ("health",),
    ("model",),
    ("assemble",),
    ("capture",),
    ("checks",),
    ("api",),
    ("reports",),
    ("plugin", "cli", "__main__", "__init__", "types"),
)
_IMPORT = re.compile(r"^\s*from (\.+)([\w.]*) import ([\w, ()\n]+?)(?:$|#)", re.M)


def node(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source, depth = node(path), len(path.relative_to(PACKAGE).parts) - 1
        for dots, module, names in _IMPORT.findall(path.read_text()):
            if len(dots) - 1 < depth:
                continue  # within its own package
            targets = [module.split(".")[0]] if module else re.findall(r"\w+", names)
            edges.setdefault(source, set()).update(t for t in targets if t != source)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    found: list[list[str]] = []
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        for target in sorted(edges.get(name, ())):
            if target in path:
                found.append([*path[path.index(target) :], target])
            elif target not in done:
                visit(target, [*path, target])
        done.add(name)

    for name in sorted(edges):
        visit(name, [name])
    return found


def upward(edges: dict[str, set[str]]) -> list[str]:
    layer = {name: i for i, names in enumerate(LAYERS) for name in names}
    return [
        f"{source} -> {target}"
        for source, targets in sorted(edges.items())
        for target in sorted(targets)
        if source in layer and target in layer and layer[target] > layer[source]
    ]


def main() -> int:
    edges = graph()
    for source in sorted(edges):
        print(f"{source} -> {', '.join(sorted(edges[source]))}")
    found, up = cycles(edges), upward(edges)
    print("cycles:", found or "none")
    print("upward imports:", up or "none")
    return 1 if found or up else 0


if __name__ == "__main__":
    sys.exit(main())
