"""Do both ways of starting a session record the same kernels? One workload per process.

    python -m benchmarks.kernel_lists eager|compiled|graphs

Profiles the workload with the session started below torch.profiler.profile (the
autograd profiler) and through it, and prints both kernel lists and whether they match.
"""

from __future__ import annotations

import sys

import torch

from pytest_kernelprof import Profiler
from pytest_kernelprof.capture import profiler as capture


def main(workload: str) -> int:
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)).cuda()
    x = torch.randn(64, 256, device="cuda")
    fn = {
        "eager": mlp,
        "compiled": torch.compile(mlp),
        "graphs": torch.compile(mlp, mode="reduce-overhead"),
    }[workload]
    natural = "direct" if capture._direct_session_is_equivalent(torch) else "torch.profiler.profile"
    lists = {}
    for direct in (True, False, True):
        capture._direct_session_is_equivalent = lambda _torch, d=direct: d  # type: ignore[assignment]
        with torch.no_grad():
            prof = Profiler(warmup=3)(fn, x)
        lists.setdefault(direct, []).append(prof.kernels.names)
    same = all(names == lists[True][0] for runs in lists.values() for names in runs)
    print(f"{workload}: session start left to capture: {natural}; kernels {len(lists[True][0])}; identical={same}")
    for name in lists[True][0]:
        print("   ", name)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
