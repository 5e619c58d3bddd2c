"""Hand-made Chrome traces for tests (times in us): not a test module, so that test modules
share these without importing each other."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_kernelprof import KernelProfile, load_trace


class Stream:
    """Writes a Chrome-trace event list one call at a time."""

    def __init__(self) -> None:
        self.events: list[dict[str, object]] = []
        self.next_id = 1

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    def x(self, cat: str, name: str, ts: float, dur: float, tid: int = 1, **args: object) -> None:
        self.events.append(
            {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 1, "tid": tid, "args": args}
        )

    def step(self, index: int, ts: float, dur: float) -> None:
        self.x("user_annotation", f"ProfilerStep#{index}", ts, dur, **{"External id": self._id()})
        self.x("gpu_user_annotation", f"ProfilerStep#{index}", ts, dur, tid=7, **{"External id": self._id()})

    def op(self, name: str, ts: float, dur: float) -> int:
        ident = self._id()
        self.x("cpu_op", name, ts, dur, **{"External id": ident})
        return ident

    def launch(
        self,
        op_id: int,
        kernel: str,
        ts: float,
        *,
        api: str = "cudaLaunchKernel",
        record: bool = True,
        dur: float = 2.0,
        cat: str = "kernel",
        records: int = 1,
    ) -> int:
        corr = 1000 + self._id()
        self.x("cuda_runtime", api, ts, 1.0, correlation=corr, **{"External id": op_id})
        for i in range(records if record else 0):
            self.x(
                cat,
                kernel if records == 1 else f"{kernel}_{i}",
                ts + 5 + 3 * i,
                dur,
                tid=7,
                correlation=corr,
                stream=7,
                device=0,
                **{"External id": op_id},
            )
        return corr

    def trace(self) -> dict[str, object]:
        device = {"name": "Fake GPU", "computeMajor": 9, "computeMinor": 0}
        return {"deviceProperties": [device], "traceEvents": self.events}


def write(tmp_path: Path, stream: Stream, **top: Any) -> Path:
    trace = stream.trace()
    trace.update(top)
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    return path


def triton_trace(tmp_path: Path, **top: Any) -> KernelProfile:
    """A call of a Liger (Triton) kernel, a cuBLAS GEMM and a custom CUDA kernel."""
    s = Stream()
    s.step(0, 0, 100)
    op = s.op("LigerRMSNormFunction", 1, 20)
    s.launch(op, "_rms_norm_forward_kernel", 2)
    mm = s.op("aten::mm", 30, 20)
    s.launch(mm, "nvjet_sm90_tst_64x8_64x16_2x4_h_bz_TNT", 31)
    cuda = s.op("my_ext::fused", 60, 20)
    s.launch(cuda, "my_fused_cuda_kernel", 61)
    return load_trace(write(tmp_path, s, **top))
