"""Record the real-model traces under tests/data/ on a GPU, and report each workload's kernels by kind.

    python -m tools.record_models OUTDIR        (from the repository root; needs the examples extra)

Each workload runs through pytest_kernelprof's own capture (2 warm-up calls, 1 profiled call:
the traces stay small) with ``modules=True`` where the callable is a model, and its trace is
written as ``OUTDIR/<card>_<workload>.json.gz`` (``h100_``, ``h200_``). The script checks that
the profile loaded from the trace equals the live one in what the offline tests read (kernels,
families, ops, op chains, modules), and prints, for every workload, its kernels by kind and the
names still ``other``: the closing numbers of issue 15.
"""

from __future__ import annotations

import collections
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from examples.models import (
    liger_patched_llama,
    llama_ids,
    llama_layer_inputs,
    resnet50,
    resnet_input,
    tiny_llama,
)
from pytest_kernelprof import KernelProfile, Profiler, load_trace

Workload = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any], dict[str, Any]]


def card_prefix() -> str:
    name = torch.cuda.get_device_name()
    for card in ("H100", "H200", "A100", "B200"):
        if card in name:
            return card.lower() + "_"
    return "gpu_"


def workloads() -> dict[str, tuple[bool, Workload]]:
    """name -> (saved as a trace?, (fn, args, kwargs, profile options))."""
    out: dict[str, tuple[bool, Workload]] = {}
    llama = tiny_llama()
    ids = llama_ids()
    out["llama_forward_modules"] = (True, (llama, (ids,), {}, {"no_grad": True, "modules": True}))
    layer = llama.model.layers[0]  # type: ignore[union-attr, index]
    hidden, layer_kwargs = llama_layer_inputs(llama)
    compiled = torch.compile(layer)
    out["llama_layer_compiled_modules"] = (
        True,
        (compiled, (hidden,), layer_kwargs, {"no_grad": True, "modules": True}),
    )
    train_model = tiny_llama()
    train_model.train()
    optimizer = torch.optim.AdamW(train_model.parameters(), lr=1e-4, fused=True)

    def train_step() -> None:
        train_model(input_ids=ids, labels=ids).loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    out["llama_train_adamw_fused"] = (False, (train_step, (), {}, {"modules": train_model}))
    out["resnet50_forward_cl_modules"] = (
        True,
        (resnet50(channels_last=True), (resnet_input(channels_last=True),), {}, {"no_grad": True, "modules": True}),
    )
    out["resnet50_forward_nchw"] = (
        False,
        (resnet50(channels_last=False), (resnet_input(channels_last=False),), {}, {"no_grad": True}),
    )
    resnet_train = resnet50(channels_last=True).train()
    x = resnet_input(channels_last=True)
    labels = torch.randint(0, 1000, (2,), device="cuda")

    def resnet_step() -> None:
        F.cross_entropy(resnet_train(x), labels).backward()

    out["resnet50_train_cl"] = (False, (resnet_step, (), {}, {}))
    return out


def report(name: str, prof: KernelProfile) -> None:
    kinds = collections.Counter(k.kind for k in prof.kernels)
    families = collections.Counter(k.family for k in prof.kernels)
    others = collections.Counter((k.name, k.family) for k in prof.kernels if k.kind == "other")
    print(f"## {name}: {len(prof.kernels)} kernels; by kind {dict(kinds.most_common())}")
    print(f"   by family {dict(families.most_common())}; still other: {sum(others.values())}")
    for (kernel, family), count in others.items():
        print(f"   other x{count} ({family}): {kernel[:120]}")


def same(live: KernelProfile, offline: KernelProfile) -> bool:
    def modules(prof: KernelProfile) -> list[str]:
        try:
            return list(prof.modules)
        except KeyError:
            return []

    return (
        [(k.name, k.family, k.op, k.ops) for k in live.kernels]
        == [(k.name, k.family, k.op, k.ops) for k in offline.kernels]
        and live.ops.names == offline.ops.names
        and modules(live) == modules(offline)
    )


def record(name: str, save: bool, workload: Workload, outdir: Path) -> bool:
    """Profile one workload, report it, save its trace; whether all went well."""
    fn, args, kwargs, options = workload
    profiler = Profiler(warmup=2, calls=1)
    try:
        prof = profiler.profile(fn, args, kwargs, **options)
    except Exception as exc:  # noqa: BLE001 - one workload's failure is reported, the rest run
        print(f"## {name}: FAILED {exc!r}")
        return False
    report(name, prof)
    if not save:
        return True
    path = outdir / f"{card_prefix()}{name}.json.gz"
    profiler.captures[-1].export_trace(path)
    agrees = same(prof, load_trace(path))
    print(f"   trace {path.name}: {path.stat().st_size} bytes, live == trace: {agrees}")
    return agrees


def main() -> int:
    outdir = Path(sys.argv[1])
    outdir.mkdir(parents=True, exist_ok=True)
    print(f"card: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    ok = [record(name, save, workload, outdir) for name, (save, workload) in workloads().items()]
    # Liger's patch replaces transformers' RoPE function for every Llama while it is on.
    with liger_patched_llama():
        model = tiny_llama()
        workload: Workload = (model, (llama_ids(),), {}, {"no_grad": True, "modules": True})
        ok.append(record("liger_llama_forward_modules", True, workload, outdir))
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
