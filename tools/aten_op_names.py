"""Write decode/aten_op_names.py: the op names Inductor joins into a kernel's name, read from torch.

    python tools/aten_op_names.py            # add the installed torch's names to the module
    python tools/aten_op_names.py --check    # exit 1 if the installed torch has a name it lacks

Inductor names a kernel ``triton_<kind>_fused_<ops>_<n>`` (torch/_inductor/utils.py,
``get_fused_kernel_name`` with ``config.triton.descriptive_names = "original_aten"``): ``<ops>``
is the sorted, deduplicated ``_overloadpacket.__name__`` of each origin's ATen op (``add``,
``_unsafe_view``, ``_scaled_dot_product_cudnn_attention``) or ``name()`` of a higher-order op
(``flex_attention``), joined with ``_``. decode/inductor.py splits that text back against these
names without importing torch. The module only grows: a name a newer torch dropped still names
kernels in traces recorded with an older one. Run it with each new torch (and each torch the suite
runs on: the module records the versions it read, FROM_TORCH):
tests/unit/decode/test_fused_ops.py fails while the module lags behind the installed torch.
"""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

MODULE = Path(__file__).resolve().parents[1] / "src" / "pytest_kernelprof" / "decode" / "aten_op_names.py"
# Names of no torch op that Inductor kernels are named after in tests and pages: the flex
# decoding template (Inductor's name for flex attention's decode kernel in a test's name).
EXTRA = ("flex_decoding",)


def torch_names() -> set[str]:
    """Every ATen overload packet's name (all of them are registered in the CPU build too) and
    every higher-order op's."""
    # Dynamo and Inductor register higher-order ops of their own as they are imported (trace_wrapped,
    # triton_kernel_wrapper_mutation, control_deps): a process that compiled has them, one that
    # did not has not, so the names are read with both imported, as a compiled run has them.
    import torch
    import torch._dynamo  # noqa: F401
    import torch._inductor.compile_fx  # noqa: F401
    from torch import _ops

    names = {
        qualified.split("::", 1)[1].split(".", 1)[0]
        for qualified in torch._C._dispatch_get_all_op_names()
        if qualified.startswith("aten::")
    }
    return names | set(_ops._higher_order_ops) | set(EXTRA)


def shipped_names() -> set[str]:
    if not MODULE.exists():
        return set()
    tree = ast.parse(MODULE.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "_NAMES":
            return set(ast.literal_eval(node.value).split())
    raise SystemExit(f"{MODULE}: no _NAMES string")


def shipped_versions() -> set[str]:
    """The torch versions whose names the module holds (its ``FROM_TORCH``)."""
    if not MODULE.exists():
        return set()
    tree = ast.parse(MODULE.read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            target = node.target
        elif isinstance(node, ast.Assign):
            target = node.targets[0]
        else:
            continue
        if getattr(target, "id", None) == "FROM_TORCH" and node.value is not None:
            return set(ast.literal_eval(node.value))
    return set()


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:3] if part.isdigit())


def render(names: set[str], versions: set[str]) -> str:
    lines = textwrap.wrap(" ".join(sorted(names)), 116, break_long_words=False, break_on_hyphens=False)
    body = "\n".join(lines)
    quoted = ", ".join(f'"{version}"' for version in sorted(versions, key=_version_key))
    return (
        '"""The names of the ops Inductor joins into a kernel\'s name: every ATen overload packet and\n'
        "higher-order op of the torch versions in ``FROM_TORCH``. Written by tools/aten_op_names.py; "
        'do not edit."""\n\n'
        "from __future__ import annotations\n\n"
        f"FROM_TORCH: tuple[str, ...] = ({quoted}{',' if len(versions) == 1 else ''})\n\n"
        f'_NAMES = """\n{body}\n"""\n\n'
        "ATEN_OP_NAMES: frozenset[str] = frozenset(_NAMES.split())\n"
    )


def main(argv: list[str]) -> int:
    import torch

    current, shipped = torch_names(), shipped_names()
    missing = current - shipped
    if "--check" in argv:
        if missing:
            print(f"{MODULE.name} lacks {len(missing)} names of torch {torch.__version__}: {sorted(missing)[:20]}")
            print("run: python tools/aten_op_names.py")
            return 1
        return 0
    MODULE.write_text(render(shipped | current, shipped_versions() | {torch.__version__.split("+")[0]}))
    print(f"{MODULE}: {len(shipped | current)} names ({len(missing)} new)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
