"""Counts from options and ini values: ASCII digits only."""

from __future__ import annotations

import pytest

from pytest_kernelprof.plugin.settings import parse_count


def test_a_count_of_other_scripts_digits_is_refused() -> None:
    # An adversarial probe: int() reads "٣" (an Arabic-Indic 3) as 3, which no one typed as a number.
    with pytest.raises(pytest.UsageError, match="takes an integer"):
        parse_count("--kernelprof-calls", "\u0663", 1)
    assert parse_count("--kernelprof-calls", "3", 1) == 3
    assert parse_count("--kernelprof-calls", 3, 1) == 3
