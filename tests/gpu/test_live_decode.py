"""The decoder on live profiles (run with ``pytest -m gpu`` on a GPU machine): what the kernel zoo
recorded (tests/data/zoo, tests/unit/decode/test_zoo.py) holds when the kernels are launched for real."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch import nn

import pytest_kernelprof as kp

pytestmark = pytest.mark.gpu


def test_a_small_fp32_linear_is_one_gemm_with_its_helpers(kernelprof: kp.Profiler) -> None:
    # cuBLAS runs sgemm_largek_lds64 between a beta-scaling scal_kernel and a bias epilogue (H100).
    lin = nn.Linear(256, 8, device="cuda")
    x = torch.randn(64, 256, device="cuda")
    prof = kernelprof.profile(lin, (x,), no_grad=True)
    assert prof.kernels.count(kind="gemm") == 1
    assert prof.kernels.one(kind="gemm").dtype == "fp32"
    assert {k.part_of for k in prof.kernels if k.kind != "gemm"} <= {"gemm"}
    assert not prof.kernels.unplaced()


def test_the_fp32_gemm_rule_breaks_on_it(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nkernelprof_forbid =\n    fp32-gemm: kind=gemm dtype=fp32 | bf16 models only\n")
    pytester.makepyfile(
        """
        import torch
        from torch import nn

        def test_linear(kernelprof):
            lin = nn.Linear(256, 8, device="cuda")
            kernelprof.profile(lin, (torch.randn(64, 256, device="cuda"),), no_grad=True)
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*kernelprof_forbid rule 'fp32-gemm' (kind=gemm dtype=fp32) is broken*"])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_a_dot_product_is_one_gemm_of_its_inputs_dtype(kernelprof: kp.Profiler, dtype: torch.dtype) -> None:
    a = torch.randn(4096, device="cuda", dtype=dtype)
    b = torch.randn(4096, device="cuda", dtype=dtype)
    prof = kernelprof.profile(torch.dot, (a, b))
    gemm = prof.kernels.one(kind="gemm")
    assert gemm.dtype == {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}[dtype]
    assert not prof.kernels.unplaced()


@pytest.mark.parametrize(
    "work",
    [
        pytest.param(lambda: torch.fft.rfft(torch.randn(4096, device="cuda")), id="fft"),
        pytest.param(
            lambda: torch.linalg.eigh(torch.randn(64, 64, device="cuda") @ torch.eye(64, device="cuda")), id="eigh"
        ),
        pytest.param(lambda: torch.linalg.qr(torch.randn(128, 64, device="cuda")), id="qr"),
    ],
)
def test_library_work_is_placed_by_name_or_by_its_op(kernelprof: kp.Profiler, work: Callable[[], object]) -> None:
    # Iterative solvers (eigh's Jacobi sweeps) may run a different number of kernels per call.
    prof = kernelprof.profile(work, allow_variation=True)
    # Each call's own: where the calls varied, prof.kernels has no one answer (VariedProfileError;
    # eigh's calls launched 98, 112 and 112 kernels in one run on an H100).
    for call in prof.calls:
        assert not call.kernels.unplaced(), call.kernels.table()
        assert all(k.kind != "other" for k in call.kernels), call.kernels.table()


def test_an_lstm_runs_rnn_kernels(kernelprof: kp.Profiler) -> None:
    lstm = nn.LSTM(64, 64, device="cuda")
    x = torch.randn(16, 8, 64, device="cuda")
    prof = kernelprof.profile(lstm, (x,), no_grad=True)
    assert prof.kernels.count(kind="rnn") >= 1
    assert not prof.kernels.unplaced(), prof.kernels.table()
