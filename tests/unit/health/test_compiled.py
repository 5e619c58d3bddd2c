"""prof.compile: frames, graph breaks, recompiles and compiled regions; live on the CPU
(torch.compile with the eager backend) and from traces recorded on an H200.

Each live test compiles its own module-level function: dynamo caches compiled code per
code object for the whole process, and these tests must neither reset nor share it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof.capture import compile_watch
from pytest_kernelprof.health import parse_graph_break, parse_recompile_reasons

Trace = Callable[[str], Path]


def breaks_twice(x: torch.Tensor) -> torch.Tensor:
    y = torch.sin(x) * 2
    print("a graph break")
    s = y.sum().item()
    return torch.cos(y) + s


def breaks_twice_again(x: torch.Tensor) -> torch.Tensor:  # the same, a code object of its own
    y = torch.sin(x) * 2
    print("a graph break")
    s = y.sum().item()
    return torch.cos(y) + s


def clean(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x @ x.T) * 2


def _line_of(fn: Callable[..., Any], text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _dynamo_frames_ok() -> int:
    from torch._dynamo.utils import counters

    return int(counters["frames"]["ok"])


def test_graph_breaks_with_reason_and_user_line(capsys: pytest.CaptureFixture[str]) -> None:
    x = torch.randn(8, 8)
    compiled = torch.compile(breaks_twice, backend="eager")
    prof = kp.profile(compiled, x)
    report = prof.compile
    assert report.regions == 3  # the function and the two frames that resume after each break
    assert report.regions_per_call == (3, 3, 3)
    assert report.frames == 3
    assert report.recompiles == 0
    assert report.recompile_reasons == []
    breaks = report.graph_breaks
    assert [(b.file, b.line) for b in breaks] == [
        (__file__, _line_of(breaks_twice, "print(")),
        (__file__, _line_of(breaks_twice, ".item()")),
    ]
    assert "print" in breaks[0].reason
    assert "item" in breaks[1].reason  # torch's words: "Tensor.item" (2.6, 2.7), "Tensor.item() call" later
    assert [b.compile_id for b in breaks] == list(report.region_ids[:2])
    text = str(report)
    assert "graph breaks: 2" in text
    assert f"test_compiled.py:{breaks[1].line}" in text

    # The user's dynamo state is left alone: profiling it again sees the code compiled above,
    # and cannot tell its graph breaks rather than say "none".
    frames_before = _dynamo_frames_ok()
    again = kp.profile(compiled, x).compile
    assert again.regions == 3
    assert again.frames == 0
    with pytest.raises(kp.CannotTellError, match=r"compiled before this profile started.*torch._dynamo.reset\(\)"):
        _ = again.graph_breaks
    assert "graph breaks: cannot tell" in str(again)
    assert _dynamo_frames_ok() == frames_before  # nothing reset, nothing recompiled
    assert "a graph break" in capsys.readouterr().out


def recompiles_per_shape(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) + 1


def test_recompiles_during_the_profiled_calls_with_guard_failures() -> None:
    compiled = torch.compile(recompiles_per_shape, backend="eager", dynamic=False)
    batches = iter([4, 4, 8, 12, 16])  # two warm-up calls, then a new shape per profiled call
    prof = kp.profile(lambda: compiled(torch.randn(next(batches), 3)))
    report = prof.compile
    assert report.frames == 4
    assert report.recompiles == 3
    assert report.regions == 1
    assert all("size mismatch" in reason for reason in report.recompile_reasons)
    assert any("expected 4, actual 8" in reason for reason in report.recompile_reasons)
    assert report.graph_breaks == []
    assert "recompiles during the profiled calls: 3" in str(report)


def test_a_clean_compiled_function_and_an_eager_one() -> None:
    x = torch.randn(16, 16)
    report = kp.profile(torch.compile(clean, backend="eager"), x).compile
    assert (report.regions, report.frames, report.recompiles) == (1, 1, 0)
    assert report.graph_breaks == []  # a list: compares with []

    eager = kp.profile(torch.relu, x).compile
    assert (eager.regions, eager.frames, eager.recompiles, eager.graph_breaks) == (0, 0, 0, [])


def compiled_in_the_block(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x) - 1


def test_a_record_block_counts_every_compile_in_it_as_a_profiled_one() -> None:
    compiled = torch.compile(compiled_in_the_block, backend="eager")
    with kp.Profiler().record() as rec:
        compiled(torch.randn(4))
    report = rec.profile.compile
    assert (report.frames, report.recompiles, report.regions) == (1, 1, 1)
    [reason] = report.recompile_reasons
    assert reason == f"{report.region_ids[0]}: first compile of this frame, in a profiled call"


def test_without_the_structured_trace_dynamo_counters_tell_reasons_without_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(compile_watch, "_trace_log", lambda: None)
    report = kp.profile(torch.compile(breaks_twice_again, backend="eager"), torch.randn(4, 4)).compile
    assert report.facts is not None
    assert report.facts.source == compile_watch.COUNTERS
    assert report.frames == 3
    assert report.recompiles == 0
    assert sorted("print" in b.reason for b in report.graph_breaks) == [False, True]
    assert {b.location for b in report.graph_breaks} == {None}
    assert "(location unknown)" in str(report.graph_breaks[0])


def test_a_torch_that_tells_nothing_raises_instead_of_answering_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compile_watch, "_trace_log", lambda: None)
    monkeypatch.setattr(compile_watch, "_counter_snapshot", lambda utils: None)
    report = kp.profile(torch.relu, torch.randn(3)).compile
    assert report.regions == 0  # from the events: still known
    for field in ("frames", "graph_breaks", "recompiles", "recompile_reasons"):
        with pytest.raises(kp.CannotTellError, match="neither torch._logging's structured trace"):
            getattr(report, field)


# -- offline: traces of the study (H200, torch 2.11, Inductor) --------------------------------


@pytest.mark.parametrize(
    ("name", "regions", "ids"),
    [
        ("compile_graph_break", 3, ("0/0", "1/0", "2/0")),  # print + .item(): three frames per call
        ("compile_clean", 1, ("0/0",)),
        ("compile_clean_train", 1, ("0/0",)),  # forward and backward: still one dynamo frame
        ("linear_eager", 0, ()),
    ],
)
def test_regions_are_read_from_a_trace(trace: Trace, name: str, regions: int, ids: tuple[str, ...]) -> None:
    report = kp.load_trace(trace(name)).compile
    assert report.regions == regions
    assert report.region_ids == ids
    with pytest.raises(kp.CannotTellError, match="loaded from a trace"):
        _ = report.graph_breaks
    with pytest.raises(kp.CannotTellError, match="prof.compile.recompiles: this profile was loaded from a trace"):
        _ = report.recompiles
    assert "cannot tell" in str(report)


def test_the_calls_regions_are_per_call_views(trace: Trace) -> None:
    prof = kp.load_trace(trace("compile_graph_break"))
    assert [c.compiled_regions for c in prof.calls] == [["0/0", "1/0", "2/0"]] * 3


# -- the structured-trace payloads of each torch layout ---------------------------------------

NEW_LAYOUT = """Graph break in user code at /src/model.py:14
Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

Failed to trace builtin operator
  Explanation: Dynamo does not know how to trace builtin operator `print` with argument types ['str']
  Hint: Avoid calling builtin `print` with argument types ['str'].

  Developer debug context: builtin print [<class 'ConstantVariable'>] False

User code traceback:
  File "/src/train.py", line 32, in <module>
    model(x)
  File "/src/model.py", line 14, in forward
    print("here")
"""

# torch 2.6: the same, but for "Reason:" where later ones say "Graph Break Reason:".
LAYOUT_2_6 = """Graph break in user code at /src/model.py:13
Reason: Unsupported: Tensor.item
User code traceback:
  File "/src/model.py", line 13, in torch_dynamo_resume_in_forward_at_12
    return y.sum().item()

Traceback (most recent call last):
  File "/torch/_dynamo/symbolic_convert.py", line 659, in wrapper
    return inner_fn(self, inst)
"""

OLD_LAYOUT = """Graph break: from user code at:
  File "/src/train.py", line 32, in step
    return model(x)
  File "/src/model.py", line 7, in forward
    y = copy.deepcopy(x)

Traceback (most recent call last):
  File "/torch/_dynamo/symbolic_convert.py", line 570, in wrapper
    return inner_fn(self, inst)
  File "/torch/_dynamo/exc.py", line 193, in unimplemented
    raise Unsupported(msg)
torch._dynamo.exc.Unsupported: call_function BuiltinVariable(deepcopy) [TensorVariable()] {}

from user code:
   File "/src/model.py", line 7, in forward
    y = copy.deepcopy(x)
"""


def test_graph_break_payloads_of_new_and_old_torch() -> None:
    new = parse_graph_break(NEW_LAYOUT, "0/0")
    assert (new.file, new.line, new.compile_id) == ("/src/model.py", 14, "0/0")
    assert new.reason.startswith("Failed to trace builtin operator: Dynamo does not know how to trace builtin")
    assert "Hint: Avoid calling" in new.detail

    of_2_6 = parse_graph_break(LAYOUT_2_6, "1/0")
    assert (of_2_6.file, of_2_6.line, of_2_6.reason) == ("/src/model.py", 13, "Tensor.item")

    old = parse_graph_break(OLD_LAYOUT)
    assert (old.file, old.line) == ("/src/model.py", 7)  # the innermost user frame
    assert old.reason == "call_function BuiltinVariable(deepcopy) [TensorVariable()] {}"

    nothing = parse_graph_break("Graph break: skip: from user code at:\n")
    assert (nothing.location, nothing.reason) == (None, "unknown reason")


def test_recompile_reason_payloads() -> None:
    assert parse_recompile_reasons("0/0: tensor 'x' size mismatch") == ["0/0: tensor 'x' size mismatch"]
    assert parse_recompile_reasons('[\n"0/1: a",\n"0/0: b"\n]') == ["0/1: a", "0/0: b"]
    assert parse_recompile_reasons("[not json") == ["[not json"]
    assert parse_recompile_reasons("") == []
