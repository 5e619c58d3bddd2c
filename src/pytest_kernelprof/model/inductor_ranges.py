"""The ranges Inductor opens itself around its compiled code: a compiled graph's call and a
kernel's launch. They are CPU ops of a profile (``prof.ops`` has them) but no op of the model:
``Kernel.op`` skips them, ``show --ops`` marks them, the timeline page's op table and an op
lookup's suggestions say what they are."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .ops import Op


def is_launch_range(range_name: str, kernel_name: str) -> bool:
    """Whether a range is the one Inductor opens around a single Triton launch: named after the
    kernel, or after its name in the generated code (``_rms_norm_forward_kernel_0`` for a user
    kernel)."""
    if not range_name.startswith(kernel_name):
        return False
    rest = range_name[len(kernel_name) :]
    return not rest or (rest[0] == "_" and rest[1:].isdigit())


def is_graph_call(range_name: str) -> bool:
    """Inductor's ``## Call CompiledFxGraph <hash> ##`` around a compiled graph: its hash changes
    from run to run, so it is in a kernel's ``ops`` but never its ``op``, not even for the kernels
    a CUDA graph replays, which it launches."""
    return range_name.startswith("## ") and range_name.endswith(" ##")


def is_inductors_range(op: Op) -> bool:
    """Whether ``op`` is a range Inductor opens itself, which ``Kernel.op`` skips, ``show --ops``
    marks and the timeline page's op table leaves out: the call of a compiled graph (its hash
    changes from run to run), or the range around one kernel's launch, named after it (where GPU
    activity was recorded to tell). Their time is in the range around them."""
    return inductors_range(op) is not None


def inductors_range(op: Op) -> str | None:
    """What ``op`` is where Inductor opened it (``"a kernel's launch"``, ``"a compiled graph's
    call"``), None where it is no range of Inductor's (see :func:`is_inductors_range`)."""
    if is_graph_call(op.name):
        return "a compiled graph's call"
    kernels = op.kernels
    if kernels.measured and len(kernels) > 0 and all(is_launch_range(op.name, k.name) for k in kernels):
        return "a kernel's launch"
    return None
