"""What makes a frame the user's and which sync a flagged line belongs to (``decode/sync_calls.py``):
the user's frames of a sync or a kernel under ``stacks=True``, and the exact lines torch's sync
debug mode flagged, paired with their syncs."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from pytest_kernelprof.decode.sync_calls import FlaggedSync, assign_lines, is_user_file, user_frames


@pytest.mark.parametrize(
    ("path", "user"),
    [
        ("train.py", True),  # the profiler writes paths relative to their sys.path entry
        ("tests/test_train.py", True),
        ("examples/test_06_host_syncs.py", True),
        ("torch/nn/modules/module.py", False),
        ("torch/_tensor.py", False),
        ("typing.py", False),  # the standard library
        ("logging/__init__.py", False),
        ("pytest_kernelprof/capture.py", False),
        ("_pytest/python.py", False),
        ("<built-in method item of Tensor object at 0x7f2c4e143f20>", False),
        ("/home/me/project/tests/test_train.py", True),
        ("/home/me/code/email/test_train.py", True),  # stdlib names as plain directories
        ("/usr/lib/python3/site-packages/torch/nn/functional.py", False),
        ("/venv/lib/python3.12/site-packages/transformers/models/llama.py", True),  # a library is user code
        ("/work/checkout/src/pytest_kernelprof/capture/run.py", False),
        (str(Path(warnings.__file__)), False),
    ],
)
def test_user_files(path: str, user: bool) -> None:
    assert is_user_file(path) is user


def test_user_frames_keep_file_frames_of_the_user_in_order() -> None:
    frames = (
        "train.py(40): train_step_item",
        "nn.Module: Linear_0",
        "torch/nn/modules/module.py(1783): _call_impl",
        "<built-in method item of Tensor object at 0x7f2c4e143f20>",
        "helpers.py(12): log_loss",
    )
    assert user_frames(frames) == ("train.py(40): train_step_item", "helpers.py(12): log_loss")


def test_lines_pair_in_order_when_every_sync_was_flagged() -> None:
    flagged = [FlaggedSync("t.py:45", "step"), FlaggedSync("t.py:47", "step")]
    assert assign_lines([("t.py(40): step",), None], flagged) == ["t.py:45", "t.py:47"]


def test_lines_go_to_the_sync_in_the_same_function_or_nowhere() -> None:
    flagged = [FlaggedSync("t.py:45", "step")]
    stacks = [("lib.py(3): library_sync",), ("t.py(40): step",), None]
    assert assign_lines(stacks, flagged) == [None, "t.py:45", None]
    assert assign_lines([None, None], flagged) == [None, None]
