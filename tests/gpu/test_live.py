"""Live profiles on a real GPU (run with ``pytest -m gpu`` on an H100/H200 or any CUDA GPU).

The same facts are checked offline in test_recorded_traces.py; here the live path, the
Kineto events of a running session, must agree with them and with its own exported trace.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

import pytest_kernelprof as kp
from pytest_kernelprof.capture import profiler_running

pytestmark = pytest.mark.gpu

BF16 = {"device": "cuda", "dtype": torch.bfloat16}


@pytest.fixture
def mlp_input(mlp: nn.Module, x: torch.Tensor) -> tuple[nn.Module, torch.Tensor]:
    return mlp, x  # the root conftest's study MLP and its input


def test_linear_live(kernelprof: kp.Profiler) -> None:
    lin = nn.Linear(32, 64, **BF16)
    prof = kernelprof.profile(lin, (torch.randn(1024, 32, **BF16),), no_grad=True)
    gemm = prof.kernels.one(kind="gemm")
    assert gemm.layout == "tn"
    assert gemm.fused_ops == ("bias",)
    assert gemm.op == "aten::addmm"
    assert len(prof.kernels) == 1
    assert prof.ops["aten::t"].device_time_us == 0
    assert prof.ops["aten::linear"].children == ["aten::t", "aten::addmm"]
    assert "aten::add" not in prof.ops
    assert prof.device == torch.cuda.get_device_name()
    major, minor = torch.cuda.get_device_capability()
    assert prof.arch == f"sm{major}{minor}"


def test_an_fp32_linear_is_one_gemm_whose_bias_its_op_tells(kernelprof: kp.Profiler) -> None:
    # cuBLAS's fp32 GEMM names say nothing of an epilogue (sm80_xmma_gemm_f32f32_...): the bias
    # is read from aten::addmm, which launches no add kernel of its own.
    lin = nn.Linear(32, 64, device="cuda")
    prof = kernelprof.profile(lin, (torch.randn(1024, 32, device="cuda"),), no_grad=True)
    gemm = prof.kernels.one(kind="gemm")
    assert (gemm.dtype, gemm.op, gemm.fused_ops) == ("fp32", "aten::addmm", ("bias",))
    assert gemm.evidence.fused_ops in ("name", "op")
    assert prof.kernels.count(kind="pointwise") == 0  # no separate bias add


def test_live_profile_equals_its_exported_trace(
    kernelprof: kp.Profiler, mlp_input: tuple[nn.Module, torch.Tensor], tmp_path: Path
) -> None:
    live = kernelprof.profile(mlp_input[0], mlp_input[1:], no_grad=True)
    path = tmp_path / "geglu.json.gz"
    kernelprof.captures[-1].export_trace(path)
    offline = kp.load_trace(path)
    assert live.kernels.names == offline.kernels.names
    assert [k.op for k in live.kernels] == [k.op for k in offline.kernels]
    assert live.ops.names == offline.ops.names
    assert dict(live.runtime) == dict(offline.runtime)
    assert [len(c.memory_ops) for c in live.calls] == [len(c.memory_ops) for c in offline.calls]


def test_eager_geglu_five_kernels_memsets_apart(
    kernelprof: kp.Profiler, mlp_input: tuple[nn.Module, torch.Tensor]
) -> None:
    prof = kernelprof.profile(mlp_input[0], mlp_input[1:], no_grad=True)
    assert len(prof.kernels) == 5
    assert [k.fused_ops for k in prof.kernels.of_kind("pointwise")] == [("gelu",), ("mul",)]
    assert all(m.kind in ("memset", "memcpy") for m in prof.memory_ops)


def test_compiled_geglu_fuses(kernelprof: kp.Profiler, mlp_input: tuple[nn.Module, torch.Tensor]) -> None:
    mlp, x = mlp_input
    prof = kernelprof.profile(torch.compile(mlp), (x,), no_grad=True)
    assert prof.kernels.count("triton_poi_fused_*gelu*mul*") == 1
    assert [k.kind for k in prof.kernels].count("gemm") == 3
    assert len(prof.kernels) == 4


def test_liger_geglu(kernelprof: kp.Profiler, liger_mlp: nn.Module, x: torch.Tensor) -> None:
    prof = kernelprof.profile(liger_mlp, (x,), no_grad=True)
    assert prof.kernels.count("_geglu_tanh_forward_kernel") == 1
    assert len(prof.kernels) == 4


def test_cuda_graph_replay_is_not_a_false_alarm(kernelprof: kp.Profiler) -> None:
    # One cudaGraphLaunch correlates with every kernel of the graph: a completeness check
    # that expects one GPU record per launch would raise here.
    x = torch.randn(4096, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.relu(x) * 2 + 1  # warm up the kernels outside the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        torch.relu(x) * 2 + 1
    prof = kernelprof(graph.replay)
    assert prof.runtime["cudaGraphLaunch"] == 1
    assert prof.kernels.count(kind="pointwise") == 3
    assert len(prof.kernels) == 3


# The plugin's own sessions start below torch.profiler.profile, so this test's session may be the
# first to give torch's once-per-process "Profiler clears events" warning.
@pytest.mark.filterwarnings("ignore:.*Profiler clears events:UserWarning")
def test_a_running_profiler_is_refused_on_gpu() -> None:
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA, torch.profiler.ProfilerActivity.CPU]):
        with pytest.raises(kp.ProfilerBusyError):
            kp.profile(torch.relu, torch.randn(8, device="cuda"))
        assert profiler_running()
    assert not profiler_running()


def test_a_raising_callable_leaves_a_clean_profiler_on_gpu() -> None:
    def boom(x: torch.Tensor) -> None:
        torch.relu(x)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        kp.Profiler(warmup=0)(boom, torch.randn(8, device="cuda"))
    assert not profiler_running()
    prof = kp.profile(torch.relu, torch.randn(8, device="cuda"))
    assert prof.kernels.count(kind="pointwise") == 1


def test_varying_kernel_sequences_fail_unless_allowed() -> None:
    state = {"n": 0}

    def alternating(x: torch.Tensor) -> torch.Tensor:
        state["n"] += 1
        return torch.relu(x) if state["n"] % 2 else torch.sigmoid(x)

    x = torch.randn(1024, device="cuda")
    with pytest.raises(kp.KernelSequenceMismatchError, match="different kernel sequences"):
        kp.Profiler(warmup=0, calls=2)(alternating, x)
    prof = kp.Profiler(warmup=0, calls=2, allow_variation=True)(alternating, x)
    assert prof.varied
    assert prof.calls[0].kernels.names != prof.calls[1].kernels.names


def test_cpu_tensors_on_a_gpu_machine_raise_no_activity() -> None:
    prof = kp.profile(torch.relu, torch.randn(8))
    with pytest.raises(kp.NoDeviceActivityError, match="launched no GPU work"):
        len(prof.kernels)


def test_header_and_failure_table_on_gpu(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_fail="""
        import pytest, torch
        pytestmark = pytest.mark.gpu

        def test_wrong_count(kernelprof):
            prof = kernelprof(torch.relu, torch.randn(64, device="cuda"))
            assert len(prof.kernels) == 2
        """
    )
    result = pytester.runpytest_subprocess("--kernelprof-require-gpu")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["kernelprof: NVIDIA * (sm*), CUDA *, torch *", "*kernelprof profile 1 of 1*", "0  pointwise  aten  *"]
    )


def test_kernel_benchmark_live(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pytest_benchmark")
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # or pytest-benchmark switches off
    pytester.makepyfile(
        test_b="""
        import pytest, torch
        from torch import nn

        @pytest.mark.gpu
        def test_linear(kernel_benchmark):
            lin = nn.Linear(32, 64, device="cuda", dtype=torch.bfloat16)
            x = torch.randn(1024, 32, device="cuda", dtype=torch.bfloat16)
            with torch.no_grad():
                kernel_benchmark.profile(lin, (x,), rounds=10, end_to_end=True)
        """
    )
    result = pytester.runpytest_subprocess("-p", "benchmark", "--benchmark-json=out.json", "--kernelprof-require-gpu")
    result.assert_outcomes(passed=1)
    import json

    bench = json.loads((pytester.path / "out.json").read_text())
    stats, info = bench["benchmarks"][0]["stats"], bench["benchmarks"][0]["extra_info"]
    assert stats["rounds"] == 10
    assert 0 < stats["min"] < 1e-3  # one small GEMM: microseconds, not the host's milliseconds
    assert info["kernel_count"] == 1
    assert info["host_wall_median_us"] > stats["median"] * 1e6  # the host pays launch overhead on top
    assert bench["machine_info"]["kernelprof"]["gpu"] == torch.cuda.get_device_name()
    assert bench["machine_info"]["kernelprof"]["cublas"]
