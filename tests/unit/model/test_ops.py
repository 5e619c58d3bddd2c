"""A call's ops and modules by name (``model/ops.py``): names from a trace stay on their line in
every message, and a lookup costs the same however many ops the call ran."""

from __future__ import annotations

import pytest

from pytest_kernelprof import ModuleNotRecordedError, OpNotFoundError, QueryError, load_trace
from pytest_kernelprof.model import Op, OpTable
from pytest_kernelprof.model.ops import op_times_note
from tests.helpers import DATA, Stream, build

HOSTILE_OP = "aten::mul_\n::error::nearest"


def _commands(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip().startswith("::")]


def test_a_missing_ops_nearest_names_stay_on_its_line() -> None:
    s = Stream()
    s.step(0, 0, 100)
    op = s.op(HOSTILE_OP, 1, 20)
    s.launch(op, "my_kernel", 2)
    prof = build(s)
    with pytest.raises(OpNotFoundError) as info:
        prof.ops["aten::mul"]
    message = str(info.value)
    assert r"nearest: aten::mul_\n::error::nearest" in message
    assert not _commands(message), message


def test_a_missing_modules_nearest_names_stay_on_their_line() -> None:
    s = Stream()
    s.step(0, 0, 100)
    op = s.op("nn.Module: layers.0\n::error::module", 1, 20)
    s.launch(op, "my_kernel", 2)
    prof = build(s)
    with pytest.raises(ModuleNotRecordedError) as info:
        prof.modules["layers.1"]
    assert r"nearest: layers.0\n::error::module" in str(info.value)
    assert not _commands(str(info.value))
    view = prof.modules["layers.0\n::error::module"]
    assert "\n" not in repr(view)
    assert r"ModuleView(layers.0\n::error::module: 1 call" in repr(view)
    assert str(view).startswith(f"{view!r}:\n")


class _Name(str):
    """An op name that counts how often it is compared: a lookup that scans the names compares
    the one asked for with each name before it."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _Name.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_a_lookup_does_not_scan_the_names() -> None:
    """A trace of one call with 40,000 user ranges took 12 s to show (``--ops``): each lookup
    compared the name with every name before it."""
    count = 2_000
    names = [_Name(f"range_{i}") for i in range(count)]
    ops = OpTable(lambda: (names, lambda name: Op(name, 1, 1.0, 1.0, (), kernels=None)))  # type: ignore[arg-type]
    _Name.compared = 0
    for name in names:
        asked = str(name)  # the user's own string, equal but not the same object
        assert asked in ops
        assert ops[asked].name == name
    assert "range_x" not in ops
    assert len(ops) == count
    assert _Name.compared <= 3 * count, f"{_Name.compared} comparisons for {count} lookups"


def test_a_cpu_only_profile_shows_no_kernel_count_as_it_shows_no_device_time() -> None:
    # A trial: `device us -` beside `kernels 0` read as a measured zero.
    *rows, note = load_trace(DATA / "cpu_torch2.13.0_calls.json.gz").ops.table().splitlines()[1:]
    assert rows
    assert note == op_times_note(medians=3)
    assert all(row.split()[-2:] == ["-", "-"] for row in rows)
    assert load_trace(DATA / "h200_linear_eager.json.gz").ops.table().splitlines()[1].split()[-1].isdigit()


def test_an_op_tables_time_headers_say_whose_times_they_are() -> None:
    # A trial: a failure's table of medians and the page's call 1 both read `cpu us (all)`, under
    # a heading "(times: each one's median over the 3 calls)" and a note "the sum ... in the call".
    prof = load_trace(DATA / "h200_geglu_eager.json.gz")
    medians, call = prof.ops.table().splitlines(), prof.calls[1].ops.table().splitlines()
    assert medians[0].split()[2:] == ["median", "cpu", "us", "(all)", "median", "device", "us", "(all)", "kernels"]
    assert call[0].split()[2:] == ["call", "1", "cpu", "us", "(all)", "call", "1", "device", "us", "(all)", "kernels"]
    assert medians[-1] == (
        "(all: each op's occurrences in a call summed, its children included; median: over the 3 calls; "
        "device time: its kernels, memcpys and memsets)"
    )
    assert call[-1] == medians[-1].replace(" median: over the 3 calls;", "")
    assert (prof.ops.heading, prof.calls[1].ops.heading) == ("the ops of the 3 calls", "the ops of call 1")


# Trust (issue 34): `"aten::*" not in prof.ops` passed on a profile full of aten ops.
def test_in_never_reads_a_pattern_as_an_op_or_module_name() -> None:
    s = Stream()
    s.step(0, 0, 100)
    for i, name in enumerate(["nn.Module: layers.0", "aten::mm", "aten::add", "step[0]"]):
        s.launch(s.op(name, 1 + 10 * i, 5), f"kernel_{i}", 2 + 10 * i)
    prof = build(s)
    with pytest.raises(QueryError, match=r"^'aten::\*' is no op's name, but as a glob it matches 2 op names"):
        assert "aten::*" not in prof.ops
    instead = r"any\(fnmatch\.fnmatchcase\(name, 'layers\.\*'\) for name in prof\.modules\)"
    with pytest.raises(QueryError, match=instead):
        assert "layers.*" not in prof.modules
    assert "prims::*" not in prof.ops  # matches no op: no op has that name either
    assert "step[0]" in prof.ops  # an exact name, glob characters and all
    assert "aten::mm" in prof.ops
    assert 3 not in prof.ops


# What a missing op's message says where Inductor's compiled graph ran in the call.
COMPILED = (
    "torch.compile ran this code: the ops Inductor compiled are its kernels, not ops (a Triton kernel's "
    "name lists the ops fused into it); ask prof.kernels. "
)
GELU_LAUNCH = "triton_poi_fused__unsafe_view_gelu_mul_0 (Inductor's range: a kernel's launch, not an op)"


@pytest.mark.parametrize(
    ("trace", "asked", "nearest", "why"),
    [
        # Compared whole, every name shares "aten::": the typo came out near aten::t and aten::addmm.
        ("h200_linear_eager", "aten::linearr", "aten::linear", ""),
        ("h200_linear_eager", "linear", "aten::linear", ""),  # the namespace left out
        ("h200_geglu_eager", "aten::gelu_", "aten::gelu", ""),  # not aten::mul, aten::view
        ("h200_train_compiled", "aten::addmm", "aten::add_, aten::mm", COMPILED),
        # Where it went: the kernel it was fused into, whose launch range is no op of that name (a trial).
        ("h200_geglu_compiled", "aten::gelu", GELU_LAUNCH, COMPILED),
    ],
)
def test_a_missing_op_names_the_ops_near_it_without_the_namespace(
    trace: str, asked: str, nearest: str, why: str
) -> None:
    ops = load_trace(DATA / f"{trace}.json.gz").ops
    with pytest.raises(OpNotFoundError) as raised:
        ops[asked]
    # Where it did not run, and what asks "it must not run" (a trial wrote ops[name].count == 0).
    absent = f"To assert that it does not run: assert {asked!r} not in prof.ops"
    assert str(raised.value) == f"op {asked!r} did not run in the 3 profiled calls; nearest: {nearest}. {why}{absent}"
    with pytest.raises(OpNotFoundError) as raised:
        load_trace(DATA / f"{trace}.json.gz").calls[2].ops[asked]
    assert str(raised.value).startswith(f"op {asked!r} did not run in call 2; nearest: {nearest}. {why}")
    assert str(raised.value).endswith(f"assert {asked!r} not in prof.calls[2].ops")


def test_a_missing_op_with_none_near_it_names_the_first_ops_that_ran() -> None:
    # A trial: "op 'aten::matmul' did not run in the 3 profiled calls" and no word of what did.
    prof = load_trace(DATA / "h200_linear_eager.json.gz")
    first = "aten::linear, aten::t, aten::transpose, aten::as_strided, aten::addmm"
    assert len(prof.ops) == 5
    with pytest.raises(OpNotFoundError) as raised:
        prof.ops["aten::matmul"]
    assert f"did not run in the 3 profiled calls; ops that ran: {first}. To assert" in str(raised.value)
    with pytest.raises(OpNotFoundError) as raised:
        prof.calls[0].ops["aten::matmul"]
    assert f"did not run in call 0; ops that ran: {first}. To assert" in str(raised.value)


def test_the_ops_that_ran_are_cut_after_the_first_few() -> None:
    s = Stream()
    s.step(0, 0, 1000)
    for i in range(7):
        s.op(f"my_range_{i}", 10 + 100 * i, 50)
    with pytest.raises(OpNotFoundError) as raised:
        build(s).ops["aten::zzzz"]
    assert "; ops that ran: my_range_0, my_range_1, my_range_2, my_range_3, my_range_4, .... " in str(raised.value)


def test_a_graph_call_suggested_is_said_to_be_inductors() -> None:
    ops = load_trace(DATA / "h200_geglu_compiled.json.gz").ops
    graph = next(name for name in ops if name.startswith("## Call CompiledFxGraph "))
    with pytest.raises(
        OpNotFoundError, match=r"nearest: ## Call CompiledFxGraph \w+ ## \(Inductor's range: a compiled "
    ):
        ops["CompiledFxGraph"]
    assert graph in ops  # the range is in the table all the same


def test_get_refuses_a_glob_as_in_does() -> None:
    # An adversarial probe: prof.ops.get("aten::m*") returned None (read as "no such op") while
    # `"aten::m*" in prof.ops` raised.
    from pytest_kernelprof import QueryError, load_trace
    from tests.helpers import DATA

    ops = load_trace(DATA / "h200_geglu_eager.json.gz").ops
    with pytest.raises(QueryError):
        ops.get("aten::m*")
    assert ops.get("aten::mm") is ops["aten::mm"]
    assert ops.get("aten::nothing") is None
    assert ops.get("aten::nothing*", 1) == 1
