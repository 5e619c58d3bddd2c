"""What test modules share, so that none imports another: the recorded data's folder,
hand-made Chrome traces (times in us) and the trace readers' test views (replayed Kineto events
are tests/fake_gpu.py's)."""

from __future__ import annotations

import gzip
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelprof import KernelProfile, TraceError, load_trace
from pytest_kernelprof.traces import RawEvent, chrome

DATA = Path(__file__).parent / "data"


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


def user_kernel_trace(path: Path) -> Path:
    """``h200_geglu_liger.json.gz`` as a user's own Triton kernel would record it, written to
    ``path``: its Liger op renamed ``my_ext::geglu``, so that no evidence places the kernel
    ``_geglu_tanh_forward_kernel`` (a name alone never places a Liger kernel)."""
    text = gzip.decompress((DATA / "h200_geglu_liger.json.gz").read_bytes()).decode("utf-8")
    path.write_bytes(gzip.compress(text.replace('"LigerGELUMulFunction"', '"my_ext::geglu"').encode("utf-8")))
    return path


def build(stream: Stream, **kwargs: bool) -> KernelProfile:
    """The profile of the stream, through the path a saved trace takes."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        path.write_text(json.dumps(stream.trace()))
        return load_trace(path, **kwargs)


def kineto_text(trace: dict[str, Any]) -> str:
    """A trace laid out as Kineto writes it: the header, then one event per line."""
    head = "".join(
        f"  {json.dumps(key)}: {json.dumps(value)},\n" for key, value in trace.items() if key != "traceEvents"
    )
    events = ",\n".join("  " + json.dumps(event) for event in trace["traceEvents"])
    return "{\n" + head + '  "traceEvents": [\n' + events + "\n  ]\n}\n"


def fields(events: list[RawEvent]) -> list[tuple[Any, ...]]:
    return [tuple(getattr(event, slot) for slot in RawEvent.__slots__) for event in events]


def read_with(path: Path, reader: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """What ``read_trace`` gives with one reader: the header and every event's fields, or the error.

    As text, so that a NaN in the header compares equal to itself.
    """
    with monkeypatch.context() as patch:
        if reader == "json":
            patch.setattr(chrome, "typed_reader", lambda: None)
        try:
            header, events = chrome.read_chrome_trace(path)
        except TraceError as exc:
            return "error", str(exc)
    return "ok", repr((header, fields(events)))


class TypedKinetoEvent:
    """A ``_KinetoEvent`` of torch 2.12+ (``activity_type``) with the fields a host event is
    read for; ``name=None`` raises as a name cut inside a multi-byte character did live."""

    def __init__(self, name: str | None, start: int, activity: str = "python_function", correlation: int = 0) -> None:
        self._name, self._start, self._activity, self._correlation = name, start, activity, correlation

    def name(self) -> str:
        if self._name is None:
            raise UnicodeDecodeError("utf-8", b"\x94", 0, 1, "invalid start byte")
        return self._name

    def activity_type(self) -> str:
        return self._activity

    def start_ns(self) -> int:
        return self._start

    def duration_ns(self) -> int:
        return 10

    def start_thread_id(self) -> int:
        return 1

    def correlation_id(self) -> int:
        return self._correlation


# What one inner test of a pytester run showed, so that a consolidated run's assertions
# cannot be met by another inner test's output.


def section(result: pytest.RunResult, test: str) -> pytest.LineMatcher:
    """The lines of ``test``'s own failure section (from its ``___ test ___`` header to the next
    header), so that what is asserted on them cannot come from another inner test's failure."""
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if line.strip("_ ") == test and line.startswith("_"))
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith(("___", "===")) or " Captured " in lines[i]),
        len(lines),
    )
    return pytest.LineMatcher(lines[start:end])


def warnings_of(result: pytest.RunResult, nodeid: str) -> pytest.LineMatcher:
    """The lines the warnings summary shows under ``nodeid`` (up to the next blank line)."""
    lines = result.outlines
    start = lines.index(nodeid)
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    return pytest.LineMatcher(lines[start:end])


def failure_sections(result: pytest.RunResult) -> dict[str, pytest.LineMatcher]:
    """Each failed test's section of the report (``____ test_x ____`` to the next), by test name."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in result.outlines:
        header = re.fullmatch(r"_{3,} (test_\w+) _{3,}", line)
        if header:
            current = sections.setdefault(header[1], [])
        elif line.startswith("====="):
            current = None
        elif current is not None:
            current.append(line)
    return {name: pytest.LineMatcher(section) for name, section in sections.items()}


# A machine with GPUs, as far as the plugin can tell, on a CPU-only torch.
FAKE_GPUS_CONFTEST = """
import os
import torch

def _count():
    return len([d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()])

torch.cuda.is_available = lambda: _count() > 0
torch.cuda.device_count = _count
torch.cuda.current_device = lambda: 0
torch.cuda.get_device_capability = lambda index=None: (9, 0)
torch.cuda.get_device_name = lambda index=None: "Fake H100"
"""


def github_step_summary(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run under GitHub Actions whose job summary goes to ``folder/summary.md`` (returned), with
    none of the CI variables that would change what pytest prints (``CI``, ``BUILD_NUMBER``) or
    where paths are read from (``GITHUB_WORKSPACE``)."""
    for name in ("CI", "BUILD_NUMBER", "GITHUB_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    summary = folder / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    return summary
