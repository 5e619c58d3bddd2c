"""Record the Chrome traces under tests/data/ on a real GPU (run on an H100/H200).

    python -m tools.record_traces OUTDIR [--dump-kineto]    (from the repository root)

Each workload runs through pytest_kernelprof's own capture (2 warm-up calls, 3 profiled
calls), so the offline tests read exactly what the live fixture sees. The script also
checks that the profile built from the live Kineto events equals the one built from the
exported trace, which is the claim that makes the offline tests worth having.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from torch import nn

from examples.models import BF16, GeGLUMLP, geglu_input, liger_geglu_mlp
from pytest_kernelprof import load_trace
from pytest_kernelprof.api import capture_profile
from pytest_kernelprof.capture import kineto_events
from pytest_kernelprof.options import ProfileOptions


def workloads() -> dict[str, tuple[object, tuple[object, ...], dict[str, object]]]:
    bf16 = BF16
    torch.manual_seed(0)
    lin = nn.Linear(32, 64, **bf16)
    x_lin = torch.randn(1024, 32, **bf16)
    lin32 = nn.Linear(32, 64, device="cuda")
    x_lin32 = torch.randn(1024, 32, device="cuda")
    w = torch.randn(32, 64, **bf16)
    b = torch.randn(64, **bf16)

    def matmul_add(x: torch.Tensor) -> torch.Tensor:
        return torch.add(torch.matmul(x, w), b)

    mlp = GeGLUMLP().to(**bf16)
    x_mlp = geglu_input()
    out: dict[str, tuple[object, tuple[object, ...], dict[str, object]]] = {
        "linear_eager": (lin, (x_lin,), {"no_grad": True}),
        "linear_compiled": (torch.compile(lin), (x_lin,), {"no_grad": True}),
        "linear_fp32": (lin32, (x_lin32,), {"no_grad": True}),
        "matmul_add_eager": (matmul_add, (x_lin,), {"no_grad": True}),
        "matmul_add_compiled": (torch.compile(matmul_add), (x_lin,), {"no_grad": True}),
        "geglu_eager": (mlp, (x_mlp,), {"no_grad": True}),
        "geglu_compiled": (torch.compile(mlp), (x_mlp,), {"no_grad": True}),
    }
    compiled_train = torch.compile(GeGLUMLP().to(**bf16))
    x_train = geglu_input(requires_grad=True)

    def train_step_compiled() -> None:
        compiled_train(x_train).sum().backward()

    out["train_compiled"] = (train_step_compiled, (), {})
    try:
        liger = liger_geglu_mlp()
    except ImportError as exc:
        print("liger-kernel missing:", exc)
    else:
        out["geglu_liger"] = (liger, (x_mlp,), {"no_grad": True})

        def train_step_liger() -> None:
            liger(x_train).sum().backward()

        out["train_liger"] = (train_step_liger, (), {})
    return out


def dump_kineto(capture: object, path: Path) -> None:
    rows = []
    for ev in kineto_events(capture.torch_profiler):  # type: ignore[attr-defined]
        row = {}
        for attr in (
            "name",
            "activity_type",
            "device_type",
            "correlation_id",
            "linked_correlation_id",
            "external_id",
            "start_ns",
            "duration_ns",
            "start_thread_id",
            "device_index",
            "device_resource_id",
            "is_user_annotation",
            "is_async",
            "metadata_json",
        ):
            try:
                row[attr] = str(getattr(ev, attr)())
            except Exception as exc:  # noqa: BLE001 - a probe of what this torch offers
                row[attr] = f"<{type(exc).__name__}>"
        rows.append(row)
    path.write_text(json.dumps(rows, indent=0))


def main() -> int:
    outdir = Path(sys.argv[1])
    outdir.mkdir(parents=True, exist_ok=True)
    failures = 0
    for name, (fn, args, options) in workloads().items():
        capture = capture_profile(fn, args, options=ProfileOptions(**options))  # type: ignore[arg-type]
        path = outdir / f"{name}.json.gz"
        capture.export_trace(path)
        offline = load_trace(path)
        live = capture.profile
        same = (
            live.kernels.names == offline.kernels.names
            and [k.op for k in live.kernels] == [k.op for k in offline.kernels]
            and dict(live.runtime) == dict(offline.runtime)
            and live.ops.names == offline.ops.names
            and [len(c.memory_ops) for c in live.calls] == [len(c.memory_ops) for c in offline.calls]
        )
        failures += not same
        print(f"=== {name}: {path.stat().st_size} bytes, live == trace: {same}")
        print(live.table())
        print("runtime:", dict(live.runtime))
        print("memory ops per call:", [len(c.memory_ops) for c in live.calls])
        if not same:
            print("--- from trace:\n" + offline.table(), "\nruntime:", dict(offline.runtime))
        if "--dump-kineto" in sys.argv and name in ("linear_eager", "geglu_liger", "train_compiled"):
            dump_kineto(capture, outdir / f"{name}.kineto.json")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
