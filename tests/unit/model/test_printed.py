"""What ``print()`` shows of the model's values: the table IPython shows, while each repr stays
one line (pytest prints reprs in an assertion's "where" lines, a newline there as ``\\n``). A
trial's ``print(prof.kernels)`` gave ``KernelList(4 kernels)``; the table was a method to find."""

from __future__ import annotations

from typing import Any

import pytest

import pytest_kernelprof as kp
from tests.helpers import DATA

CPU = DATA / "cpu_torch2.13.0_calls.json.gz"
UNMEASURED = "no GPU activity recorded"


class _Printer:
    """IPython's pretty printer, as far as ``_repr_pretty_`` uses it."""

    def __init__(self) -> None:
        self.shown: list[str] = []

    def text(self, text: str) -> None:
        self.shown.append(text)


def _pretty(value: Any) -> str:
    printer = _Printer()
    value._repr_pretty_(printer, False)
    return "".join(printer.shown)


def _values(prof: kp.KernelProfile) -> dict[str, Any]:
    return {
        "prof": prof,
        "kernels": prof.kernels,
        "syncs": prof.syncs,
        "copies": prof.copies,
        "ops": prof.ops,
        "call": prof.calls[0],
    }


def test_print_gives_the_table_ipython_shows_and_the_repr_stays_one_line() -> None:
    prof = kp.load_trace(DATA / "h200_copy_dtoh_pageable_nonblocking.json.gz")
    for name, value in _values(prof).items():
        assert "\n" not in repr(value), name
        assert str(value) != repr(value), name
        assert str(value) == _pretty(value), name
        assert "\n" in str(value), name
    assert str(prof) == prof.table()
    assert str(prof.kernels) == prof.kernels.table()
    assert str(prof.ops) == prof.ops.table()
    assert str(prof.syncs) == f"{prof.syncs!r}\n{prof.syncs.table()}"
    assert str(prof.copies) == f"{prof.copies!r}\n{prof.copies.table()}"
    assert str(prof.calls[0]) == f"call 0:\n{prof.calls[0].kernels.table()}"


def test_print_gives_the_module_table_and_a_modules_kernels() -> None:
    prof = kp.load_trace(DATA / "h200_llama_forward_modules.json.gz")
    modules = prof.modules
    assert repr(modules) == "ModuleTable(32 modules)"
    assert str(modules) == modules.table() == _pretty(modules)
    view = prof.module("model.embed_tokens")
    assert repr(view) == "ModuleView(model.embed_tokens: 1 call, 1 kernel, 1.2 us on the GPU)"
    assert str(view) == f"{view!r}:\n{view.kernels.table()}" == _pretty(view)


def test_print_of_a_cpu_only_profile_says_it_measured_nothing_and_does_not_raise() -> None:
    prof = kp.load_trace(CPU)
    assert str(prof.kernels) == repr(prof.kernels) == f"KernelList(unmeasured: {UNMEASURED})"
    assert str(prof.syncs) == repr(prof.syncs) == f"SyncList(unavailable: {UNMEASURED})"
    assert str(prof.calls[0]) == repr(prof.calls[0]) == f"CallProfile(call 0: KernelList(unmeasured: {UNMEASURED}))"
    assert str(prof) == prof.table()
    assert "aten::linear" in str(prof.ops)
    for value in (prof.kernels, prof.syncs, prof.calls[0], prof):
        assert str(value) == _pretty(value)


def test_print_of_modules_not_recorded_says_how_to_record_them() -> None:
    modules = kp.load_trace(CPU).modules
    assert repr(modules) == "ModuleTable(none recorded)"
    assert str(modules).startswith("ModuleTable(none recorded): this profile has no nn.Module ranges")
    assert "modules=True" in str(modules)
    with pytest.raises(kp.ModuleNotRecordedError):
        modules.table()


def test_print_of_an_empty_list_is_its_one_line() -> None:
    prof = kp.load_trace(DATA / "h200_linear_eager.json.gz")
    assert not prof.syncs
    assert str(prof.syncs) == repr(prof.syncs) == _pretty(prof.syncs)


def test_print_of_a_sweep_gives_its_table() -> None:
    sweep = kp.load_sweep(DATA / "h100_sweep_geglu")
    assert "\n" not in repr(sweep)
    assert str(sweep) == sweep.table() == _pretty(sweep)
