"""Numbers from options, ini values and the environment (counts, percentages, GPU specs): ASCII digits only."""

from __future__ import annotations

import pytest

from pytest_kernelprof.errors import GpuSpecError
from pytest_kernelprof.plugin.gpus import parse_gpu_spec, visible_gpus, worker_index
from pytest_kernelprof.plugin.settings import parse_count, parse_percent


def test_a_count_of_other_scripts_digits_is_refused() -> None:
    # An adversarial probe: int() reads "٣" (an Arabic-Indic 3) as 3, which no one typed as a number.
    with pytest.raises(pytest.UsageError, match="takes an integer"):
        parse_count("--kernelprof-calls", "\u0663", 1)
    assert parse_count("--kernelprof-calls", "3", 1) == 3
    assert parse_count("--kernelprof-calls", 3, 1) == 3


def test_a_percentage_of_other_scripts_digits_is_refused() -> None:
    # float() reads "٥" (an Arabic-Indic 5) as 5, where the counts refuse such digits.
    with pytest.raises(pytest.UsageError, match="--kernelprof-memory-tolerance takes a percentage such as 5%"):
        parse_percent("--kernelprof-memory-tolerance", "\u0665")
    with pytest.raises(pytest.UsageError, match="takes a percentage"):
        parse_percent("--kernelprof-memory-tolerance", "\u0665%")
    assert parse_percent("--kernelprof-memory-tolerance", "5%") == pytest.approx(0.05)


@pytest.mark.parametrize("spec", ["\u0663", "0,\u0661", "\u0663,"])
def test_a_gpu_spec_of_other_scripts_digits_is_refused(spec: str) -> None:
    with pytest.raises(GpuSpecError, match="takes auto, a count N or indices"):
        parse_gpu_spec(spec)
    assert parse_gpu_spec("3").count == 3


def test_other_scripts_digits_name_no_visible_gpu_nor_worker() -> None:
    # CUDA stops at the first CUDA_VISIBLE_DEVICES entry that names no device.
    assert visible_gpus("1,\u0663,0", 4) == ["1"]
    with pytest.raises(GpuSpecError, match="unexpected xdist worker id"):
        worker_index("gw\u0663")
    assert worker_index("gw3") == 3


@pytest.mark.parametrize("text", ["1_0", "1e1", "nan", "inf", "0x5", "5.5.5", "%"])
def test_a_percentage_that_is_not_plain_decimal_digits_is_refused(text: str) -> None:
    # float() reads "1_0" as 10 and "1e1" as 10: a typo would set a tolerance nobody wrote.
    with pytest.raises(pytest.UsageError, match="takes a percentage such as 5%"):
        parse_percent("--kernelprof-memory-tolerance", text)


@pytest.mark.parametrize(("text", "fraction"), [(".5", 0.005), ("5.", 0.05), ("+5%", 0.05), ("007", 0.07)])
def test_a_plain_decimal_percentage_is_read(text: str, fraction: float) -> None:
    assert parse_percent("--kernelprof-memory-tolerance", text) == pytest.approx(fraction)
