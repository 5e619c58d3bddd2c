"""What else a profile can hold: launches, GEMM dtypes, and which ops run on the GPU.

* Every kernel has one launch call on the CPU side, and the API depends on the library:
  cuBLAS launches through the driver (``cuLaunchKernelEx``), ATen's own kernels through
  the runtime (``cudaLaunchKernel``), Inductor's Triton kernels through ``cuLaunchKernel``.
  ``prof.runtime`` counts them per call, which is how "compile removes launches" is tested.
* The GEMM's data type is in its name (``tst`` in ``nvjet_sm90_tst_...``: bf16 in, fp32
  accumulate, bf16 out; ``f32f32`` in ``sm80_xmma_gemm_f32f32_...``).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

pytestmark = pytest.mark.gpu

LAUNCH_APIS = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx")


def launches(prof):
    return sum(n for api, n in prof.runtime.items() if api in LAUNCH_APIS)


def test_one_launch_per_kernel(kernelprof):
    def gelu_mul(a, b):
        return F.gelu(a, approximate="tanh") * b

    a, b = (torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    eager = kernelprof(gelu_mul, a, b)
    compiled = kernelprof(torch.compile(gelu_mul), a, b)
    assert launches(eager) == len(eager.kernels) == 2
    assert launches(compiled) == len(compiled.kernels) == 1
    assert compiled.runtime["cuLaunchKernel"] == 1  # Inductor's Triton launcher


@pytest.mark.parametrize(
    ("dtype", "name"), [(torch.bfloat16, "bf16"), (torch.float16, "fp16"), (torch.float32, "fp32")]
)
def test_gemm_dtype_is_decoded_from_the_name(kernelprof, dtype, name):
    torch.backends.cuda.matmul.allow_tf32 = False
    lin = nn.Linear(256, 256, device="cuda", dtype=dtype)
    prof = kernelprof.profile(lin, (torch.randn(512, 256, device="cuda", dtype=dtype),), no_grad=True)
    assert prof.kernels.one(kind="gemm").dtype == name


def test_where_the_gpu_time_goes(kernelprof):
    mlp = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).to("cuda", torch.bfloat16)
    prof = kernelprof.profile(mlp, (torch.randn(8192, 1024, device="cuda", dtype=torch.bfloat16),), no_grad=True)
    gemm_share = prof.kernels.of_kind("gemm").total_us / prof.kernels.total_us
    assert gemm_share > 0.5  # the two GEMMs dominate; the GELU is memory-bound and short
    assert prof.ops["aten::linear"].device_time_us == pytest.approx(
        prof.kernels.of_kind("gemm").total_us, rel=0.05
    )  # both linears' GEMMs, bias included in their epilogues
