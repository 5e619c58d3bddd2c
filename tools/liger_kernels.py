"""Read liger-kernel wheels and print every Triton kernel they ship, for decode/liger.py.

    pip download --no-deps liger-kernel==0.5.0 -d /tmp/liger   # and every version after it
    python tools/liger_kernels.py /tmp/liger/*.whl > tests/data/liger_kernels.tsv

One row per kernel: its name, the first and last version read that ship it, the file that
defines it (in the newest of those versions), the autograd Functions defined beside it, and
the ``tl.`` operations its body uses (what decode/liger.py's kind was decided from). A kernel
is a ``@triton.jit`` function that is launched (``name[grid](...)``) or that no other Triton
function uses; ``@triton.jit`` helpers called from kernels never run on their own. Kernels of
``backends/_ascend`` (Triton for Huawei NPUs) are left out: CUPTI never records them; nor are the
CuTe DSL and cuTile kernels (not Triton). tests/unit/decode/test_liger.py checks decode/liger.py
against the output, offline.
"""

from __future__ import annotations

import ast
import hashlib
import re
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

_VERSION = re.compile(r"liger_kernel-(\d+(?:\.\d+)+)-")
_SKIPPED = ("liger_kernel/ops/backends/_ascend/", "cutedsl", "cutile", "/cute/")
_TL_OPS = re.compile(r"\btl\.(dot|sum|max|min|argmax|argmin|cumsum|cumprod|sort|reduce|associative_scan|atomic_\w+)\b")


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@dataclass
class Found:
    first: str
    last: str
    path: str
    functions: tuple[str, ...]
    ops: tuple[str, ...]
    versions: list[str] = field(default_factory=list)


def _is_triton_jit(decorator: ast.expr) -> bool:
    text = ast.unparse(decorator)
    return re.match(r"^(?:triton\.)?jit\b", text) is not None and not text.startswith("jit_fuser")


def _launched(tree: ast.AST) -> set[str]:
    """Names launched as ``name[grid](...)``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            target = node.func.value
            if isinstance(target, ast.Name):
                names.add(target.id)
            elif isinstance(target, ast.Attribute):
                names.add(target.attr)
    return names


def _used(function: ast.FunctionDef) -> set[str]:
    """Names a function's body uses: the helpers it calls, or passes (a scan's combine function)."""
    return {node.id for statement in function.body for node in ast.walk(statement) if isinstance(node, ast.Name)}


def kernels_of(wheel: Path) -> Iterator[tuple[str, str, tuple[str, ...], tuple[str, ...]]]:
    """(kernel name, path, autograd Functions of its file, tl operations) for one wheel."""
    with zipfile.ZipFile(wheel) as archive:
        sources = {
            name: archive.read(name).decode("utf-8")
            for name in archive.namelist()
            if name.startswith("liger_kernel/") and name.endswith(".py") and not any(s in name for s in _SKIPPED)
        }
    trees = {path: ast.parse(text) for path, text in sources.items()}
    launched: set[str] = set()
    used_in_jit: set[str] = set()
    jitted: dict[str, tuple[str, ast.FunctionDef]] = {}
    for path, tree in trees.items():
        launched |= _launched(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and any(_is_triton_jit(d) for d in node.decorator_list):
                jitted[node.name] = (path, node)
                used_in_jit |= _used(node)
    for name, (path, node) in sorted(jitted.items()):
        if name in used_in_jit and name not in launched:
            continue
        tree = trees[path]
        functions = tuple(
            sorted(
                cls.name
                for cls in ast.walk(tree)
                if isinstance(cls, ast.ClassDef) and any("Function" in ast.unparse(b) for b in cls.bases)
            )
        )
        ops = tuple(sorted(set(_TL_OPS.findall(ast.unparse(node)))))
        yield name, path, functions, ops


def autograd_functions(wheel: Path) -> set[str]:
    """The autograd Functions that one wheel's scanned files define: the ops Liger's kernels run under."""
    names = set()
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith("liger_kernel/") and name.endswith(".py") and not any(s in name for s in _SKIPPED):
                for node in ast.walk(ast.parse(archive.read(name).decode("utf-8"))):
                    if isinstance(node, ast.ClassDef) and any("Function" in ast.unparse(b) for b in node.bases):
                        names.add(node.name)
    return names


def table(wheels: list[Path]) -> dict[str, Found]:
    found: dict[str, Found] = {}
    for wheel in sorted(wheels, key=lambda w: version_key(_version(w))):
        version = _version(wheel)
        for name, path, functions, ops in kernels_of(wheel):
            row = found.setdefault(name, Found(version, version, path, functions, ops))
            row.last, row.path, row.functions, row.ops = version, path, functions, ops
            row.versions.append(version)
    return found


def _version(wheel: Path) -> str:
    matched = _VERSION.search(wheel.name)
    if matched is None:
        raise SystemExit(f"{wheel}: not a liger_kernel-<version>-*.whl file")
    return matched.group(1)


def main(argv: list[str]) -> int:
    wheels = [Path(arg) for arg in argv]
    if not wheels:
        print(__doc__, file=sys.stderr)
        return 2
    versions = sorted({_version(w) for w in wheels}, key=version_key)
    found = table(wheels)
    print("# python tools/liger_kernels.py <wheels>: the Triton kernels of these liger-kernel wheels (PyPI)")
    for wheel in sorted(wheels, key=lambda w: version_key(_version(w))):
        print(f"# {wheel.name} sha256={hashlib.sha256(wheel.read_bytes()).hexdigest()}")
    functions = set().union(*(autograd_functions(w) for w in wheels))
    print(f"# autograd Functions: {','.join(sorted(functions))}")
    print("name\tfirst\tlast\tpath\tfunctions\ttl_ops\tmissing_in")
    for name, row in sorted(found.items()):
        # A kernel absent from a version between its first and last (renamed and back) says so.
        span = [v for v in versions if version_key(row.first) <= version_key(v) <= version_key(row.last)]
        missing = [v for v in span if v not in row.versions]
        print(
            f"{name}\t{row.first}\t{row.last}\t{row.path.removeprefix('liger_kernel/ops/')}\t"
            f"{','.join(row.functions)}\t{','.join(row.ops)}\t{','.join(missing)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
