"""Record the sweeps under tests/data/ on a real GPU (run on an H100/H200).

    python -m tools.record_sweeps OUTDIR [--probe]    (from the repository root)

Each sweep runs through the plugin's own ``Profiler.sweep`` (2 warm-up calls, 3 profiled calls
per case) and is written with ``ProfileSweep.export`` into ``OUTDIR/<card>_sweep_<name>/``; the
script checks that each case's live profile equals the one ``load_sweep`` reads back, and prints
each sweep's table. ``--probe`` also prints which SDPA backend ran at each of a range of sequence
lengths (what examples/test_11_sdpa_sweep.py asserts).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from examples.models import GeGLUBreakingOddBatches, attention_case, geglu_cases
from pytest_kernelprof import Profiler, load_sweep


def main() -> int:
    outdir = Path(sys.argv[1])
    card = "h100" if "H100" in torch.cuda.get_device_name() else "h200"
    geglu = dict(hidden=[1024, 4096], batch=[2, 3, 16, 33])
    sweeps = {
        "geglu": (geglu_cases(), geglu, True),
        "geglu_odd_break": (geglu_cases(GeGLUBreakingOddBatches), geglu, True),
        "sdpa": (attention_case, dict(seq_len=[1, 2, 3, 64, 1024]), False),
    }
    failures = 0
    with torch._dynamo.config.patch(recompile_limit=64):
        for name, (build, cases, no_grad) in sweeps.items():
            sweep = Profiler(no_grad=no_grad).sweep(build, cases, keep_traces=True)
            folder = outdir / f"{card}_sweep_{name}"
            sweep.export(folder)
            loaded = load_sweep(folder)
            same = all(
                live.profile.kernels.names == read.profile.kernels.names
                and live.profile.ops.names == read.profile.ops.names
                and live.compiled == read.compiled
                and read.profile.has_device_activity
                for live, read in zip(sweep, loaded, strict=True)
            )
            failures += not same
            size = sum(p.stat().st_size for p in folder.iterdir())
            print(f"=== {folder.name}: {len(sweep)} cases, {size} bytes, live == loaded: {same}")
            print(sweep.table())
    if "--probe" in sys.argv:
        probe = Profiler(warmup=1, calls=1)
        for seq_len in (1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 63, 64, 65, 127, 128, 129, 255, 256, 1000, 2048, 4096):
            prof = probe.profile(attention_case(seq_len))
            ops = [op for op in prof.ops.names if "attention" in op and op != "aten::scaled_dot_product_attention"]
            families = sorted({k.family for k in prof.kernels.of_kind("attention")})
            print(f"sdpa seq_len={seq_len}: {ops[:1]} {families}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
