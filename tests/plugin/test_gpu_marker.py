"""The gpu marker and --kernelprof-require-gpu where CUDA is not available, through pytester:
gpu tests skip at their own location (issue 21), or fail under --kernelprof-require-gpu, and
the header says which.

Where the option and its ini key come from is tests/plugin/test_options.py's; gpu tests with
GPUs (faked) are tests/plugin/test_gpu_skips.py's, under xdist tests/plugin/test_gpus.py's.
"""

from __future__ import annotations

import importlib.metadata

import pytest

# The decorators of test_one_gpu start on line 3, those of test_two_gpus on line 7.
GPU_TESTS = """
import pytest

@pytest.mark.gpu
def test_one_gpu():
    pass

@pytest.mark.gpu(count=2)
def test_two_gpus():
    pass

def test_plain():
    pass
"""


@pytest.fixture
def cpu_only(cpu_pytester: pytest.Pytester) -> pytest.Pytester:
    cpu_pytester.makepyfile(test_gpu=GPU_TESTS)
    return cpu_pytester


def test_without_cuda_gpu_tests_skip_at_their_own_location_and_say_why(cpu_only: pytest.Pytester) -> None:
    result = cpu_only.runpytest("-rs", "--strict-markers", "-v")
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(["kernelprof: no CUDA GPU, gpu tests skip; torch *, triton *"])
    result.stdout.fnmatch_lines(["test_gpu.py::test_plain PASSED*"])
    result.stdout.fnmatch_lines(
        [
            "SKIPPED [[]1[]] test_gpu.py:3: needs a CUDA GPU: torch.cuda.is_available() is False",
            "SKIPPED [[]1[]] test_gpu.py:7: needs 2 CUDA GPUs, found 0",
        ]
    )
    assert "plugin.py" not in result.stdout.str()


def test_require_gpu_turns_each_skip_into_a_failure(cpu_only: pytest.Pytester) -> None:
    result = cpu_only.runpytest("--kernelprof-require-gpu")
    result.assert_outcomes(passed=1, errors=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["kernelprof: no CUDA GPU, gpu tests error in setup (--kernelprof-require-gpu); torch *"]
    )
    # Why CUDA is missing depends on the machine's torch (the cases: the tests below).
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at setup of test_one_gpu _*",
            "gpu test without CUDA: torch * (--kernelprof-require-gpu)",
            "to fix: *, or drop --kernelprof-require-gpu to let gpu tests skip",
            "*_ ERROR at setup of test_two_gpus _*",
            "needs 2 CUDA GPUs, found 0: torch * (--kernelprof-require-gpu)",
            "to fix: *, or drop --kernelprof-require-gpu to let gpu tests skip",
        ],
        consecutive=True,
    )


# A torch as the machine's might be, whatever this one's is: its build, its CUDA and what
# initialising CUDA says; put back as the session ends.
FAKED_TORCH = """
import torch

_real = {{}}

def _fake(owner, name, value):
    _real[(owner, name)] = getattr(owner, name, None)
    setattr(owner, name, value)

def _init():
    raise RuntimeError({init_error!r})

def pytest_configure(config):
    _fake(torch.version, "cuda", {cuda!r})
    _fake(torch.version, "hip", None)
    _fake(torch.cuda, "is_available", lambda: False)
    _fake(torch.cuda, "device_count", lambda: 0)
    _fake(torch.cuda, "init", _init)

def pytest_unconfigure(config):
    for (owner, name), value in _real.items():
        setattr(owner, name, value)
"""

# torch's version as its wheel gives it, which torch.__version__ is (2.13.0+cpu): torch imported
# here would be taken out of sys.modules with the test's pytester, and imported again breaks.
# A pattern: PyPI's CUDA wheels say 2.6.0 where torch.__version__ says 2.6.0+cu124.
TORCH = importlib.metadata.version("torch").split("+")[0] + "*"
NO_DRIVER = (
    "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from "
    "http://www.nvidia.com/Download/index.aspx"
)


def _faked(pytester: pytest.Pytester, cuda: str | None) -> pytest.Pytester:
    pytester.makeconftest(FAKED_TORCH.format(cuda=cuda, init_error=NO_DRIVER))
    pytester.makepyfile(test_gpu=GPU_TESTS)
    return pytester


def test_require_gpu_on_a_cpu_build_of_torch_says_so_and_what_to_install(pytester: pytest.Pytester) -> None:
    # A trial: "gpu test on a machine where CUDA is not available" said neither why (the header
    # knew the torch was 2.13.0+cpu) nor what to do.
    result = _faked(pytester, None).runpytest("--kernelprof-require-gpu", "-k", "one_gpu")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at setup of test_one_gpu _*",
            f"gpu test without CUDA: torch {TORCH} is a CPU-only build (--kernelprof-require-gpu)",
            "to fix: install a CUDA build of torch (https://pytorch.org/get-started/locally/), "
            "or drop --kernelprof-require-gpu to let gpu tests skip",
            "=*=",
        ],
        consecutive=True,
    )


def test_require_gpu_on_a_cuda_build_without_a_driver_says_what_torch_cuda_says(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nkernelprof_require_gpu = true\n")
    result = _faked(pytester, "12.8").runpytest()
    result.assert_outcomes(passed=1, errors=2)
    said = f"torch {TORCH} (a CUDA 12.8 build) finds no GPU: torch.cuda says: {NO_DRIVER}"
    fix = "to fix: check the NVIDIA driver and the GPU with nvidia-smi, or set kernelprof_require_gpu = false"
    result.stdout.fnmatch_lines(
        [
            "*_ ERROR at setup of test_one_gpu _*",
            f"gpu test without CUDA: {said} (--kernelprof-require-gpu)",
            f"{fix} to let gpu tests skip",
            "*_ ERROR at setup of test_two_gpus _*",
            f"needs 2 CUDA GPUs, found 0: {said} (--kernelprof-require-gpu)",
            f"{fix} to let gpu tests skip",
        ],
        consecutive=True,
    )


def test_require_gpu_where_cuda_visible_devices_hides_every_gpu_names_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    result = _faked(pytester, "12.8").runpytest("--kernelprof-require-gpu", "-k", "one_gpu")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "gpu test without CUDA: CUDA_VISIBLE_DEVICES='-1' hides every GPU (--kernelprof-require-gpu)",
            "to fix: unset CUDA_VISIBLE_DEVICES or name a GPU in it, or drop --kernelprof-require-gpu to let gpu "
            "tests skip",
        ],
        consecutive=True,
    )


def test_the_marker_is_registered(pytester: pytest.Pytester) -> None:
    markers = pytester.parseconfigure().getini("markers")
    assert any(line.startswith("gpu: the test needs a CUDA GPU") for line in markers)
