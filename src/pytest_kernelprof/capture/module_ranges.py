"""Which ``nn.Module`` launched each kernel: one profiler range per module call.

With ``modules=True``, a forward pre-hook and a forward hook on every module of the profiled
model open and close a range named ``nn.Module: <name>`` around each module call. The ranges
are ordinary profiler events, so they are in exported traces too, and ``load_trace`` gives the
same per-module views. Names are ``named_modules()`` names (``model.layers.3.mlp``, usable
with ``model.get_submodule``); the model itself is named after its class (``LlamaForCausalLM``).

What the hooks cannot see: backward kernels run on the autograd thread, outside any forward
hook, so they belong to no module; inside a ``torch.compile``d region no module hook runs
(Dynamo traced the model's calls when it compiled it), so its kernels belong to the module
that called the compiled region, if any.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from ..model.measured import MODULE_RANGE_PREFIX

# A torch.compile'd module wraps the original under this attribute; its names say it twice.
_COMPILED_WRAPPER = "_orig_mod"


def range_class(torch: Any) -> Callable[[str], Any]:
    """The cheapest range this torch offers: ``_RecordFunctionFast`` (a C++ object, probed:
    private), else ``torch.profiler.record_function``."""
    fast = getattr(getattr(torch._C, "_profiler", None), "_RecordFunctionFast", None)
    return fast if fast is not None else torch.profiler.record_function  # type: ignore[no-any-return]


def model_of(fn: Any, torch: Any) -> Any | None:
    """The nn.Module that ``fn`` is (or whose bound method it is), else None."""
    module_type = torch.nn.Module
    if isinstance(fn, module_type):
        return fn
    owner = getattr(fn, "__self__", None)
    return owner if isinstance(owner, module_type) else None


def resolve_model(fn: Any, modules: object, torch: Any) -> Any | None:
    """The model whose modules get ranges, from ``ProfileOptions.modules``: None for False,
    the nn.Module itself, or ``fn``'s model for True (a TypeError where ``fn`` is none)."""
    if modules is False:
        return None
    if modules is not True:
        return modules  # an nn.Module: ProfileOptions took nothing else
    model = model_of(fn, torch)
    if model is None:
        raise TypeError(
            f"modules=True records the modules of the profiled nn.Module, and {type(fn).__name__} is none: "
            "pass the model itself, modules=model, for a function that calls one"
        )
    return model


def module_names(model: Any) -> list[tuple[str, Any]]:
    """(name, module) of every module of ``model``, each once, the model first."""
    inner = getattr(model, _COMPILED_WRAPPER, None)
    root_name = type(inner if inner is not None else model).__name__
    named: list[tuple[str, Any]] = []
    taken: set[str] = set()
    for qualname, module in model.named_modules():  # each module once, parents first
        parts = [p for p in qualname.split(".") if p and p != _COMPILED_WRAPPER]
        # A compiled submodule and the module it wraps get one name: the wrapper's hooks
        # run (it is called eagerly), the wrapped module's run inside the compiled code.
        name = ".".join(parts) or root_name
        if name not in taken:
            taken.add(name)
            named.append((name, module))
    return named


@contextlib.contextmanager
def module_ranges(model: Any, torch: Any) -> Iterator[int]:
    """Open a range ``nn.Module: <name>`` around every module call in the block.

    Yields the number of modules hooked. The hooks are removed on every path out; a forward
    that raises still closes its range (``always_call=True``).
    """
    make_range = range_class(torch)
    handles = []
    try:
        for name, module in module_names(model):
            pre, post = _hooks(make_range, MODULE_RANGE_PREFIX + name)
            # Ours first in and last out, so that the range covers the user's own hooks too.
            handles.append(module.register_forward_pre_hook(pre, prepend=True))
            handles.append(module.register_forward_hook(post, always_call=True))
        yield len(handles) // 2
    finally:
        for handle in handles:
            handle.remove()


def _hooks(make_range: Callable[[str], Any], label: str) -> tuple[Callable[..., None], Callable[..., None]]:
    open_ranges: list[Any] = []  # per module: a module may call itself

    def pre(module: Any, args: Any) -> None:
        entered = make_range(label)
        entered.__enter__()
        open_ranges.append(entered)

    def post(module: Any, args: Any, output: Any) -> None:
        # Empty where the pre-hook did not run to the end (another pre-hook raised first).
        if open_ranges:
            open_ranges.pop().__exit__(None, None, None)

    return pre, post
