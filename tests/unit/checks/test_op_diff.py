"""Two calls' op trees compared place by place (``kernelprof diff --ops``): each op at its path of
op names from a top-level op, its count there on each side; CPU times not compared."""

from __future__ import annotations

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.op_diff import OpCount, diff_op_trees
from pytest_kernelprof.model import OpTreeNode
from tests.helpers import DATA


def node(name: str, count: int, *children: OpTreeNode, cpu_us: float = 1.0) -> OpTreeNode:
    return OpTreeNode(name=name, count=count, cpu_time_us=cpu_us, device_time_us=None, children=children)


def rows(a: tuple[OpTreeNode, ...], b: tuple[OpTreeNode, ...]) -> list[tuple[int, str, int | None, int | None]]:
    return [(row.depth, row.name, row.count_a, row.count_b) for row in diff_op_trees(a, b).rows]


def test_the_same_tree_is_the_same_whatever_its_cpu_times() -> None:
    a = (node("my_block", 1, node("aten::linear", 2, node("aten::addmm", 2))), node("aten::sum", 1))
    b = (
        node("my_block", 1, node("aten::linear", 2, node("aten::addmm", 2, cpu_us=9.0)), cpu_us=50.0),
        node("aten::sum", 1, cpu_us=0.1),
    )
    found = diff_op_trees(a, b)
    assert found.same
    assert found.rows == ()
    assert found.compared == 4


def test_an_op_only_one_side_has_is_none_on_the_other_with_what_is_inside_it() -> None:
    a = (node("my_block", 1, node("aten::relu", 1, node("aten::clamp_min", 1))),)
    b = (node("my_block", 1, node("aten::relu", 1, node("aten::clamp_min", 1)), node("aten::gelu", 1)),)
    assert rows(a, b) == [(0, "my_block", 1, 1), (1, "aten::gelu", None, 1)]
    assert rows(b, a) == [(0, "my_block", 1, 1), (1, "aten::gelu", 1, None)]
    # A renamed op: the old one and its children gone (a's order first), the new one and its added.
    renamed = (node("my_block", 1, node("aten::gelu", 1, node("aten::clamp_min", 1))),)
    assert rows(a, renamed) == [
        (0, "my_block", 1, 1),
        (1, "aten::relu", 1, None),
        (2, "aten::clamp_min", 1, None),
        (1, "aten::gelu", None, 1),
        (2, "aten::clamp_min", None, 1),
    ]
    assert not diff_op_trees(a, b).same
    assert diff_op_trees(a, b).compared == 4


def test_a_count_changed_under_a_parent_shows_with_the_ops_above_it_and_no_others() -> None:
    a = (
        node("outer", 1, node("aten::linear", 2, node("aten::t", 2), node("aten::addmm", 2)), node("aten::mul", 2)),
        node("aten::sum", 1),
    )
    b = (
        node("outer", 1, node("aten::linear", 2, node("aten::t", 2), node("aten::addmm", 3)), node("aten::mul", 2)),
        node("aten::sum", 1),
    )
    found = diff_op_trees(a, b)
    assert [(row.depth, row.name, row.count_a, row.count_b) for row in found.rows] == [
        (0, "outer", 1, 1),
        (1, "aten::linear", 2, 2),
        (2, "aten::addmm", 2, 3),
    ]
    assert found.changed == (OpCount("aten::addmm", 2, 2, 3),)
    assert [row.changed for row in found.rows] == [False, False, True]


def test_ops_are_compared_at_their_places_not_by_their_totals() -> None:
    # aten::as_strided 3 times in all on both sides, at other places: two changes.
    a = (node("aten::t", 1, node("aten::as_strided", 2)), node("aten::expand", 1, node("aten::as_strided", 1)))
    b = (node("aten::t", 1, node("aten::as_strided", 1)), node("aten::expand", 1, node("aten::as_strided", 2)))
    assert rows(a, b) == [
        (0, "aten::t", 1, 1),
        (1, "aten::as_strided", 2, 1),
        (0, "aten::expand", 1, 1),
        (1, "aten::as_strided", 1, 2),
    ]


def test_a_tree_thousands_deep_is_compared_without_recursion() -> None:
    def chain(depth: int, bottom: int) -> tuple[OpTreeNode, ...]:
        made = node("leaf", bottom)
        for _ in range(depth):
            made = node("aten::wrap", 1, made)
        return (made,)

    assert diff_op_trees(chain(5000, 1), chain(5000, 1)).same
    found = diff_op_trees(chain(5000, 1), chain(5000, 2))
    assert len(found.rows) == 5001
    assert found.changed == (OpCount("leaf", 5000, 1, 2),)


def test_the_cpu_traces_of_two_torch_versions_hold_the_same_op_tree() -> None:
    # torch 2.13.0 and 2.12.1 ran the same workload: the same 21 places, at other CPU times.
    a = load_trace(DATA / "cpu_torch2.13.0_calls.json.gz").fastest_call
    b = load_trace(DATA / "cpu_torch2.12.1_calls.json.gz").fastest_call
    assert a.wall_us != b.wall_us
    found = diff_op_trees(a.ops.tree(), b.ops.tree())
    assert found.same
    assert found.compared == 21


def test_a_cpu_trace_against_a_gpu_trace_of_another_workload() -> None:
    cpu = load_trace(DATA / "cpu_torch2.13.0_calls.json.gz").fastest_call.ops.tree()
    gpu = load_trace(DATA / "h200_geglu_eager.json.gz").fastest_call.ops.tree()
    found = diff_op_trees(cpu, gpu)
    assert not found.same
    # At the top: a's ops first, then b's own; aten::linear is at the top in b only.
    top = [(row.name, row.count_a, row.count_b) for row in found.rows if row.depth == 0]
    assert top == [
        ("my_block", 1, None),
        ("aten::numpy_T", 1, None),
        ("aten::matmul", 1, None),
        ("aten::sum", 1, None),
        ("aten::linear", None, 3),
        ("aten::gelu", None, 1),
        ("aten::mul", None, 1),
    ]
    assert found.compared == len(found.rows) == 32


def test_compile_ids_and_graph_hashes_do_not_make_a_place_differ() -> None:
    # Dynamo numbers regions in the order the process compiled them, and a graph's hash changes
    # with torch: the same code, run alone or after other tests, or on another torch, is the same.
    def compiled(region: str, graph: str, mm: int) -> tuple[OpTreeNode, ...]:
        return (
            node(
                f"Torch-Compiled Region: {region}",
                1,
                node(f"## Call CompiledFxGraph {graph} ##", 1, node("aten::mm", mm)),
            ),
        )

    assert diff_op_trees(compiled("2/0", "fadri2gv", 3), compiled("0/0", "cqx7zz1b", 3)).same
    assert rows(compiled("2/0", "fadri2gv", 3), compiled("0/0", "cqx7zz1b", 2)) == [
        (0, "Torch-Compiled Region: 2/0", 1, 1),  # named as a names it
        (1, "## Call CompiledFxGraph fadri2gv ##", 1, 1),
        (2, "aten::mm", 3, 2),
    ]
    # Only those parts: another op's name, or another region's prefix, still differs.
    assert not diff_op_trees((node("my_op: 2/0", 1),), (node("my_op: 0/0", 1),)).same
