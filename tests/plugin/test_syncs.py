"""The plugin's side of host syncs: the stacks ini key reaching the fixture, and what a failing
sync or copy assertion prints (on a trace recorded on an H200). The option and the ini key set
the same setting: tests/plugin/test_options.py."""

from __future__ import annotations

import pytest

from tests.helpers import DATA


def test_failing_sync_and_copy_assertions_print_the_table(cpu_pytester: pytest.Pytester) -> None:
    pytester = cpu_pytester
    pytester.makeini("[pytest]\nkernelprof_stacks = true\n")
    pytester.makepyfile(
        test_syncs=f"""
        import torch
        from pytest_kernelprof import load_trace

        TRACE = {str(DATA / "h200_sync_cpu_copy.json.gz")!r}

        def test_the_ini_key_turns_stacks_on(kernelprof):
            assert kernelprof.stacks is True
            assert kernelprof(torch.relu, torch.randn(4)).ops["aten::relu"].count == 1

        def test_no_syncs():
            assert not load_trace(TRACE).syncs

        def test_no_dtoh_copies():
            assert load_trace(TRACE).copies.count(direction="DtoH") == 0

        def test_syncs_equal_a_list():
            assert load_trace(TRACE).syncs == []
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(
        [
            "*assert not SyncList of 2: cudaMemcpyAsync in aten::copy_; cudaStreamSynchronize in aten::copy_; to fix*",
            "*assert 1 == 0 failed; counted copies with direction='DtoH' of 1",
            "*#  direction  host        bytes     us  op           name",
            "*0  DtoH       pageable  4194304  211.6  aten::copy_  Memcpy DtoH (Device -> Pageable)",
            "*SyncList == list failed; SyncList of 2: cudaMemcpyAsync in aten::copy_*",
            "*#  call                   kind                host us  ops                                      where",
            "*1  cudaStreamSynchronize  stream                  3.6  aten::to > aten::_to_copy > aten::copy_  -",
        ]
    )
