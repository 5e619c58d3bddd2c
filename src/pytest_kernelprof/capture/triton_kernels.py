"""Which kernels are Triton kernels: learned while profiling, because their names do not say.

Inductor's kernels say so by name (``triton_poi_...``); a hand-written ``@triton.jit`` kernel
(Liger-Kernel's ``_rms_norm_forward_kernel``, a user's own) is named after its Python function
and nothing else. Two sources, both probed, and Triton is never imported here: a process that
has not imported it has launched no Triton kernel.

- Triton's launch hook, installed for the profiled calls only: it sees each launch through
  Triton's own launcher, with the kernel's name as CUPTI records it (Triton 3.6 on an H200:
  under 1 us a launch). Triton 3.5+ has a chain of hooks (``triton.knobs.runtime.launch_enter_hook``,
  ``.add``/``.remove``); Triton 3.4 a single one on ``triton.knobs.runtime``; older versions a
  class attribute ``triton.compiler.CompiledKernel.launch_enter_hook``.
- A scan of the compiled-kernel caches of the ``JITFunction`` objects that modules hold (17.6 ms
  on that machine): for a Triton without a launch hook, and for launches the hook did not see.
  It runs only when kernels of the profile are still unaccounted for.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..decode.triton_ir import IrFacts, facts_from_ttir

LaunchHook = Callable[[Any], None]


def _launch_name(metadata: Any) -> str | None:
    """The kernel name of a launch hook's argument (a ``LazyDict`` since Triton 3.0).

    Its ``data`` holds the name without evaluating the kernel's ``launch_metadata`` extras,
    which ``get()`` would run on every launch.
    """
    data = getattr(metadata, "data", None)
    if not isinstance(data, dict):
        get = getattr(metadata, "get", None)
        data = get() if callable(get) else None
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else None


class TritonWatch:
    """The names of the Triton kernels launched while it is installed (``names``)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def hook(self, metadata: Any) -> None:
        # Called by Triton's launcher before every launch: an exception here would fail the
        # user's kernel launch, so nothing may escape.
        try:
            name = _launch_name(metadata)
        except Exception:  # noqa: BLE001
            return
        if name is not None:
            self.names.add(name)


def _install(triton: Any, hook: LaunchHook) -> Callable[[], None] | None:
    """Install ``hook`` on the launch hook this Triton has; the function that removes it, or None."""
    runtime = getattr(getattr(triton, "knobs", None), "runtime", None)
    chain: Any = getattr(runtime, "launch_enter_hook", None)
    if callable(getattr(chain, "add", None)) and callable(getattr(chain, "remove", None)):
        chain.add(hook)
        return lambda: chain.remove(hook)
    if runtime is not None and hasattr(runtime, "launch_enter_hook"):
        return _install_attribute(runtime, hook)
    compiled_kernel = getattr(getattr(triton, "compiler", None), "CompiledKernel", None)
    if compiled_kernel is not None and hasattr(compiled_kernel, "launch_enter_hook"):
        return _install_attribute(compiled_kernel, hook)
    return None


def _install_attribute(owner: Any, hook: LaunchHook) -> Callable[[], None]:
    """A single-hook Triton: call a hook already there (a profiler's, say) after ours."""
    previous = owner.launch_enter_hook
    if previous is None:
        installed = hook
    else:

        def installed(metadata: Any) -> None:
            hook(metadata)
            previous(metadata)

    owner.launch_enter_hook = installed

    def remove() -> None:
        # Someone who replaced the hook meanwhile keeps theirs.
        if owner.launch_enter_hook is installed:
            owner.launch_enter_hook = previous

    return remove


@contextlib.contextmanager
def watch_triton_launches() -> Iterator[TritonWatch]:
    """Collect the names of Triton launches in the block; the hook is removed on every path out."""
    watch = TritonWatch()
    triton = sys.modules.get("triton")
    remove = _install(triton, watch.hook) if triton is not None else None
    try:
        yield watch
    finally:
        if remove is not None:
            remove()


def _compiled(jit_function: Any) -> Iterator[tuple[str, Any]]:
    """(kernel name, compiled kernel) in one JITFunction's caches of compiled kernels, every device."""
    caches = getattr(jit_function, "device_caches", None)  # Triton 3.2+: device -> (kernels, ...)
    if caches is None:
        caches = getattr(jit_function, "cache", None)  # older: device -> kernels
    if not isinstance(caches, dict):
        return
    for entry in list(caches.values()):
        kernels = entry[0] if isinstance(entry, tuple) and entry else entry
        if not isinstance(kernels, dict):
            continue
        for compiled in list(kernels.values()):
            name = getattr(compiled, "name", None) or getattr(getattr(compiled, "metadata", None), "name", None)
            if isinstance(name, str):
                yield name, compiled


def _jit_functions(modules: Iterable[Any] | None) -> Iterator[Any]:
    """The ``@triton.jit`` functions that modules hold, each once.

    Autotuned and heuristic kernels wrap their JITFunction (``.fn``). Types are tested with
    ``type()``, not ``isinstance``: a module may hold a dead ``weakref.proxy``, and
    ``isinstance`` on one raises ReferenceError.
    """
    jit = sys.modules.get("triton.runtime.jit")
    jit_function = getattr(jit, "JITFunction", None)
    interface = getattr(jit, "KernelInterface", jit_function)
    if not isinstance(jit_function, type) or not isinstance(interface, type):
        return
    seen: set[int] = set()
    for module in list(sys.modules.values()) if modules is None else modules:
        if not issubclass(type(module), types.ModuleType):
            continue
        for value in list(vars(module).values()):
            if not issubclass(type(value), interface):
                continue
            while value is not None and not issubclass(type(value), jit_function):
                value = getattr(value, "fn", None)
            if value is None or id(value) in seen:
                continue
            seen.add(id(value))
            yield value


def scan_jit_caches(modules: Iterable[Any] | None = None) -> set[str]:
    """Names of the kernels compiled by the ``@triton.jit`` functions that modules hold."""
    return {name for function in _jit_functions(modules) for name, _ in _compiled(function)}


def _ttir(compiled: Any) -> str | None:
    asm = getattr(compiled, "asm", None)
    text = asm.get("ttir") if isinstance(asm, dict) else None
    return text if isinstance(text, str) else None


# Facts read from a kernel name's compiled IR, once per process: the scan costs milliseconds, the
# reading less, and a name that was read needs neither again.
_IR_READ: dict[str, IrFacts | None] = {}


def ir_facts(names: Iterable[str], scan: Callable[[], Iterator[tuple[str, Any]]] | None = None) -> dict[str, IrFacts]:
    """What the compiled IR of each named Triton kernel shows (decode/triton_ir.py), for the
    names the JIT caches hold. A name compiled more than once (one per dtype or shape
    specialization) keeps the facts its compilations agree on: a kind they share, a dtype they share."""
    names = tuple(names)
    wanted = {name for name in names if name not in _IR_READ}
    if wanted and "triton" in sys.modules:
        compiled_by_name: dict[str, list[IrFacts | None]] = {}
        pairs = scan() if scan is not None else (p for f in _jit_functions(None) for p in _compiled(f))
        for name, compiled in pairs:
            if name in wanted:
                text = _ttir(compiled)
                compiled_by_name.setdefault(name, []).append(facts_from_ttir(text) if text else None)
        for name in wanted:  # one not found stays unread: a later capture does not scan for it again
            _IR_READ[name] = agreed(compiled_by_name.get(name, []))
    found = {name: _IR_READ[name] for name in names if name in _IR_READ}
    return {name: facts for name, facts in found.items() if facts is not None}


def agreed(read: list[IrFacts | None]) -> IrFacts | None:
    """The facts every compilation of one name shows: None where one shows none or their kinds
    differ; no dtype where their dtypes differ."""
    if not read or any(facts is None for facts in read):
        return None
    kinds = {facts.kind for facts in read if facts is not None}
    dtypes = {facts.dtype for facts in read if facts is not None}
    if len(kinds) != 1:
        return None
    return IrFacts(kinds.pop(), dtypes.pop() if len(dtypes) == 1 else None)


class _Missed:
    """Names a scan did not find, while ``sys.modules`` holds as many modules as it did then.

    A profile of cuBLAS kernels (``sgemm_largek_lds64``, ``cublasLt::epilogue...``: no known
    family) in a process that imported Triton would otherwise scan on every capture. A kernel
    that ran was compiled before it ran, so a later scan finds it only through a JIT function
    that a module came to hold since: a new module (Inductor's generated code is one) starts over.
    """

    key: tuple[Callable[[], set[str]], int] | None = None
    names: set[str] = set()


def learn_triton_kernels(
    launched: set[str], unaccounted: set[str], scan: Callable[[], set[str]] = scan_jit_caches
) -> frozenset[str]:
    """The Triton kernels of a profile: those the launch hook saw, and, where kernels are
    still ``unaccounted`` for (their names decode to no known family), those of them that
    the JIT caches hold. The scan costs milliseconds, so it runs only then, and not again
    for names it did not find (see ``_Missed``)."""
    rest = unaccounted - launched
    if rest and "triton" in sys.modules:
        key = (scan, len(sys.modules))
        if _Missed.key != key:
            _Missed.key, _Missed.names = key, set()
        rest -= _Missed.names
        if rest:
            found = scan() & rest
            _Missed.names |= rest - found
            launched = launched | found
    return frozenset(launched)
