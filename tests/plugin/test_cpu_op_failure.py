"""A failed op assertion on a CPU profile: its section is its op table, shown once, marked."""

from __future__ import annotations

import pytest


def test_a_cpu_profiles_op_table_is_shown_once_with_the_named_op_marked(pytester: pytest.Pytester) -> None:
    # A trial: the section printed the 8-row op table, then "the ops of the 3 calls, * the op the
    # assertion named:" and the same table again with one row starred.
    pytester.makepyfile(
        """
        import torch

        def test_linear(kernelprof):
            prof = kernelprof(torch.nn.Linear(32, 64), torch.randn(8, 32))
            assert prof.ops["aten::addmm"].count == 2
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    section = out[out.index("kernelprof profile 1 of 1") :]
    rows = [line for line in section.splitlines() if line.lstrip("* ").startswith("aten::linear ")]
    assert len(rows) == 1, section
    result.stdout.fnmatch_lines(["*no GPU activity*", "the ops of the 3 calls, * the op the assertion named:"])
    assert any(line.startswith("*") and "aten::addmm" in line for line in section.splitlines())
