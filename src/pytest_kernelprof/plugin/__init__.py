"""The pytest plugin (entry point ``pytest11: kernelprof``): the hooks (``hooks.py``) and the
fixtures (``fixtures.py``) that pytest finds on this module.

Options and settings are ``settings.py``'s, a GPU per xdist worker ``gpus.py``'s, what a test's
report gets ``report_sections.py``'s, what a failed assertion shows
``assertions.py``'s, the CI outputs' hooks ``ci.py``'s, pytest-benchmark's bridge
``benchmark.py``'s."""

from __future__ import annotations

from .assertions import pytest_assertrepr_compare
from .fixtures import kernel_baseline, kernel_benchmark, kernelprof
from .hooks import (
    pytest_addhooks,
    pytest_addoption,
    pytest_benchmark_update_machine_info,
    pytest_collection_finish,
    pytest_configure,
    pytest_configure_node,
    pytest_report_collectionfinish,
    pytest_report_header,
    pytest_runtest_call,
    pytest_runtest_makereport,
    pytest_runtest_setup,
    pytest_runtest_teardown,
)

__all__ = [
    "kernel_baseline",
    "kernel_benchmark",
    "kernelprof",
    "pytest_addhooks",
    "pytest_addoption",
    "pytest_assertrepr_compare",
    "pytest_benchmark_update_machine_info",
    "pytest_collection_finish",
    "pytest_configure",
    "pytest_configure_node",
    "pytest_report_collectionfinish",
    "pytest_report_header",
    "pytest_runtest_call",
    "pytest_runtest_makereport",
    "pytest_runtest_setup",
    "pytest_runtest_teardown",
]
