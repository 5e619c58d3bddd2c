"""What Inductor's Triton kernels compute, read from the objects that launch them.

Inductor compiles its kernels through ``triton.compile``, not a ``@triton.jit`` function's JIT
cache, and launches them through its own static CUDA launcher, which Triton's launch hook does
not see: ``triton_kernels.py`` finds neither. Each kernel is a ``CachingAutotuner``
(``torch._inductor.runtime.triton_heuristics``) that the generated code's modules hold, with
the signature the kernel was compiled with (``triton_meta["signature"]``: ``{"in_ptr0": "*bf16",
...}``) and, where Triton's own launcher runs it, the compiled kernel and its TTIR
(``compile_results[i].kernel.asm["ttir"]``; torch 2.11 with Triton 3.6 on an H100 launches
statically and keeps none). Every attribute is probed: an Inductor without them gives no facts,
and nothing is imported (a process that has not imported Inductor's runtime ran none of its kernels).

Kernels of different graphs share names (every graph numbers its kernels from 0: a bf16 and an
fp32 graph of one function both have a ``triton_poi_fused_gelu_mul_0``), and a profile records
only the name. So a name gets the facts that every autotuner of that name in the process
agrees on; where they differ, those that the graphs compiled during the capture agree on,
where the profile ran the name under one compiled graph alone; else none.
"""

from __future__ import annotations

import bisect
import sys
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..decode import parse_kernel_name
from ..decode.triton_ir import IrFacts, dtype_from_signature, facts_from_ttir
from ..traces import KERNEL, OP, RUNTIME, RawEvent
from .triton_kernels import agreed

HEURISTICS_MODULE = "torch._inductor.runtime.triton_heuristics"
# Where Inductor's code cache puts the modules it loads (the generated kernels, the graphs'
# wrappers): ``torch._inductor.runtime.compile_tasks.<key>`` in torch 2.11 and 2.13; the package's
# prefix, not that module's, allows for where an older torch's loader lived. Scanning these alone
# took 2.9 ms where every module took 17 ms (257 of 2830 modules, H100).
GENERATED_PREFIX = "torch._inductor."
GRAPH_CALL_PREFIX = "## Call CompiledFxGraph "  # the range Inductor opens around a compiled graph's call


def _autotuner_type() -> type | None:
    found = getattr(sys.modules.get(HEURISTICS_MODULE), "CachingAutotuner", None)
    return found if isinstance(found, type) else None


def _generated(items: Iterable[tuple[str, Any]]) -> list[Any]:
    return [module for name, module in items if name.startswith(GENERATED_PREFIX)]


def autotuners(modules: Iterable[Any], autotuner: type) -> Iterator[Any]:
    """The ``autotuner`` objects that ``modules`` hold, each once. Types are tested with
    ``type()``: ``isinstance`` on a dead ``weakref.proxy`` raises."""
    seen: set[int] = set()
    for module in modules:
        if not issubclass(type(module), types.ModuleType):
            continue
        for value in list(vars(module).values()):
            if issubclass(type(value), autotuner) and id(value) not in seen:
                seen.add(id(value))
                yield value


def kernel_names(tuner: Any) -> set[str]:
    """The names CUPTI may record for ``tuner``'s kernel: its Triton function's, and the one
    Inductor gave it (the same for Inductor's own kernels)."""
    names = {getattr(getattr(tuner, "fn", None), "__name__", None)}
    meta = getattr(tuner, "inductor_meta", None)
    if isinstance(meta, Mapping):
        names.add(meta.get("kernel_name"))
    return {name for name in names if isinstance(name, str) and name}


def _ttirs(tuner: Any) -> Iterator[str]:
    """The TTIR of each compiled kernel ``tuner`` keeps: its compile results' kernels, and the
    binaries its launchers call (Triton's ``CompiledKernel.asm``; a statically launched kernel keeps none)."""
    holders = [getattr(result, "kernel", None) for result in list(getattr(tuner, "compile_results", None) or ())]
    holders += [getattr(launcher, "bin", None) for launcher in list(getattr(tuner, "launchers", None) or ())]
    for holder in holders:
        asm = getattr(holder, "asm", None)
        text = asm.get("ttir") if isinstance(asm, Mapping) else None
        if isinstance(text, str):
            yield text


def _signature(tuner: Any) -> list[tuple[str, str]] | None:
    """``(argument, type)`` in order, from ``triton_meta["signature"]``: keyed by name, or by
    position (older Inductor), then named from the Triton function's ``arg_names``."""
    meta = getattr(tuner, "triton_meta", None)
    signature = meta.get("signature") if isinstance(meta, Mapping) else None
    if not isinstance(signature, Mapping):
        return None
    arg_names = getattr(getattr(tuner, "fn", None), "arg_names", None)
    pairs = []
    for key, spelled in signature.items():
        if isinstance(key, int) and isinstance(arg_names, list) and 0 <= key < len(arg_names):
            key = arg_names[key]
        if not isinstance(spelled, str):
            return None
        pairs.append((str(key), spelled))
    return pairs


def tuner_facts(name: str, tuner: Any) -> IrFacts | None:
    """What ``tuner``'s kernel, called ``name``, computes: its TTIR's facts, with the kind the
    name says where the name places it; else the kind the name says and its signature's dtype;
    None where neither tells (a template that names no op, without its TTIR)."""
    decoded = parse_kernel_name(name)
    named_kind = None if decoded.unplaced else decoded.kind
    for ttir in _ttirs(tuner):
        facts = facts_from_ttir(ttir)
        if facts is not None:
            return IrFacts(named_kind or facts.kind, facts.dtype)
    signature = _signature(tuner)
    if named_kind is None or signature is None:
        return None
    return IrFacts(named_kind, dtype_from_signature(signature))


def _read(names: set[str], modules: Iterable[Any], autotuner: type) -> dict[str, list[IrFacts | None]]:
    read: dict[str, list[IrFacts | None]] = {}
    for tuner in autotuners(modules, autotuner):
        for name in kernel_names(tuner) & names:
            read.setdefault(name, []).append(tuner_facts(name, tuner))
    return read


class _Read:
    """What the autotuners of each name read showed (the facts they agree on, and whether they
    differ), while ``sys.modules`` holds as many modules as it did then: a new graph's modules
    may hold more of a name."""

    modules: int | None = None
    facts: dict[str, tuple[IrFacts | None, bool]] = {}


def inductor_ir_facts(
    names: Iterable[str], events: Sequence[RawEvent], since: int, modules: Sequence[tuple[str, Any]] | None = None
) -> dict[str, IrFacts]:
    """The facts of each named kernel (see the module's docstring). ``events``: the profile's;
    ``since``: how many modules ``sys.modules`` held when the capture began (those loaded
    after it are the capture's graphs'); ``modules`` (tests): ``sys.modules``'s items."""
    names = set(names)
    autotuner = _autotuner_type()
    if not names or autotuner is None:
        return {}
    count = len(sys.modules) if modules is None else len(modules)
    if _Read.modules != count:
        _Read.modules, _Read.facts = count, {}
    wanted = names - _Read.facts.keys()
    loaded: Sequence[tuple[str, Any]] = ()
    if wanted:
        loaded = list(sys.modules.items()) if modules is None else modules
        for name, read in _read(wanted, _generated(loaded), autotuner).items():
            _Read.facts[name] = (agreed(read), len(set(read)) > 1)
        for name in wanted - _Read.facts.keys():
            _Read.facts[name] = (None, False)
    facts = {name: _Read.facts[name][0] for name in names}
    differ = {name for name in names if _Read.facts[name][1] and not getattr(facts[name], "dtype", None)}
    if differ and count > since:
        graphs = launching_graphs(events, differ)
        alone = {name for name in differ if len(graphs.get(name, ())) == 1 and None not in graphs[name]}
        if alone:
            loaded = loaded or (list(sys.modules.items()) if modules is None else modules)
            for name, read in _read(alone, _generated(loaded[since:]), autotuner).items():
                facts[name] = agreed(read)
    return {name: found for name, found in facts.items() if found is not None}


def launching_graphs(events: Sequence[RawEvent], names: set[str]) -> dict[str, set[str | None]]:
    """The compiled graphs whose calls launched each named kernel: the ``## Call CompiledFxGraph
    <key> ##`` range around the launching runtime call on its thread (None where there is none)."""
    ranges: dict[int, list[RawEvent]] = {}
    launches: dict[int, RawEvent] = {}
    for e in events:
        if e.category == OP and e.name.startswith(GRAPH_CALL_PREFIX):
            ranges.setdefault(e.thread, []).append(e)
        elif e.category == RUNTIME and e.correlation:
            launches[e.correlation] = e
    starts = {}
    for thread, calls in ranges.items():
        calls.sort(key=lambda e: e.start)
        starts[thread] = [e.start for e in calls]
    graphs: dict[str, set[str | None]] = {}
    for kernel in events:
        if kernel.category != KERNEL or kernel.name not in names:
            continue
        launch, graph = launches.get(kernel.correlation), None
        if launch is not None and launch.thread in ranges:
            at = bisect.bisect_right(starts[launch.thread], launch.start) - 1
            call = ranges[launch.thread][at] if at >= 0 else None
            if call is not None and launch.end <= call.end:
                graph = call.name
        graphs.setdefault(kernel.name, set()).add(graph)
    return graphs
