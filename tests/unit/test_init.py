"""The package's top level (``__init__.py``): exactly the documented public set, and the value
types of ``pytest_kernelprof.types`` refused there with an error that names their home."""

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
def test_a_value_type_asked_for_at_the_top_level_names_its_home(name: str) -> None:
    # A trial read the DeprecationWarning these gave as a release that never was (0.1.0 is the first).
    with pytest.raises(
        ImportError, match=rf"^{name} is in pytest_kernelprof\.types, .*: from pytest_kernelprof\.types import {name}$"
    ):
        getattr(pytest_kernelprof, name)
    assert getattr(types, name) is not None


def test_a_from_import_of_a_value_type_says_where_it_is() -> None:
    # Python replaces an AttributeError of a from-import with "cannot import name": the error must
    # be the module's own, naming the home.
    with pytest.raises(ImportError, match=r"from pytest_kernelprof\.types import Kernel$"):
        from pytest_kernelprof import Kernel  # noqa: F401  (the top-level spelling, on purpose)
    with pytest.raises(AttributeError, match="has no attribute 'Kernal'"):
        pytest_kernelprof.Kernal  # noqa: B018  (a name that is nowhere stays an AttributeError)


# Value types that were never importable from the top level.
NEW_IN_TYPES = ["KernelBaseline", "OpTreeNode", "SweepCase"]  # the kernel_baseline fixture's value: for annotations


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
