"""The package's top level (``__init__.py``): exactly the documented public set, and the value
types that moved to ``pytest_kernelprof.types`` still importable from it, with a warning."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

import pytest_kernelprof
from pytest_kernelprof import errors, types

ENTRY_POINTS = {
    "Profiler",
    "profile",
    "load_trace",
    "load_sweep",
    "profile_ranks",
    "Recording",
    "Capture",
    "ProfileSweep",
    "KernelProfile",
}

MOVED = [
    "KINDS",
    "CallProfile",
    "CompileReport",
    "CopyList",
    "Count",
    "Decoder",
    "Evidence",
    "GraphBreak",
    "Kernel",
    "KernelCount",
    "KernelList",
    "KernelName",
    "MemoryOp",
    "MemoryReading",
    "MemoryReport",
    "ModuleTable",
    "ModuleView",
    "Op",
    "OpTable",
    "Overlap",
    "RuntimeCalls",
    "Sync",
    "SyncList",
    "parse_kernel_name",
]


def test_the_top_level_is_the_entry_points_the_profile_and_every_error() -> None:
    error_classes = {
        name
        for name, cls in inspect.getmembers(errors, inspect.isclass)
        if cls.__module__ == errors.__name__ and issubclass(cls, BaseException)
    }
    assert len(error_classes) > 10
    assert sorted(pytest_kernelprof.__all__) == sorted(ENTRY_POINTS | error_classes)
    assert set(pytest_kernelprof.__all__) <= set(dir(pytest_kernelprof))
    assert not set(MOVED) & set(dir(pytest_kernelprof))


@pytest.mark.parametrize("name", MOVED)
def test_a_moved_name_warns_and_is_its_new_home(name: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"use pytest_kernelprof\.types\.{name} ") as caught:
        value = getattr(pytest_kernelprof, name)
    assert value is getattr(types, name)
    assert caught[0].filename == __file__  # the warning points at the line that used the old name
    with pytest.warns(DeprecationWarning, match=rf"pytest_kernelprof\.types\.{name}\b"):
        getattr(pytest_kernelprof, name)  # every use warns, not only the first


def test_an_old_import_statement_warns_at_its_line() -> None:
    with pytest.warns(DeprecationWarning, match=r"pytest_kernelprof\.types\.Kernel") as caught:
        from pytest_kernelprof import Kernel  # the old spelling, on purpose
    assert Kernel is types.Kernel
    assert caught[0].filename == __file__


# Value types that were never importable from the top level.
NEW_IN_TYPES = ["OpTreeNode", "SweepCase"]


def test_the_types_module_is_the_moved_names_and_the_new_ones() -> None:
    assert sorted(types.__all__) == sorted([*MOVED, *NEW_IN_TYPES])
    assert not set(NEW_IN_TYPES) & set(dir(pytest_kernelprof))
    assert importlib.import_module("pytest_kernelprof").types is types


def test_types_is_reachable_as_an_attribute_before_it_is_imported() -> None:
    code = (
        "import sys, pytest_kernelprof as kp\n"
        "assert 'pytest_kernelprof.types' not in sys.modules\n"
        "print(kp.types.Kernel.__module__)\n"
    )
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "pytest_kernelprof.model.kernels"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Kernels'"):
        pytest_kernelprof.Kernels  # type: ignore[attr-defined]  # noqa: B018
