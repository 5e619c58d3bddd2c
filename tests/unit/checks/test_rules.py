"""kernelprof_forbid rules: the syntax, its errors, and what breaks a rule, on H200 traces."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof.checks.rules import Rule, check_rules, parse_rule, parse_rules, violation
from pytest_kernelprof.types import Kernel

Trace = Callable[[str], Path]

ISSUE_RULES = [
    "fp32-gemm: kind=gemm dtype=fp32      | bf16 models must not run fp32 GEMMs",
    "math-sdpa: op=aten::_scaled_dot_product_attention_math",
    "",
    "# a comment",
    "no-breaks: graph_breaks>0 | compile the model whole",
    "big: peak_bytes>=2GiB",
]


def test_the_rules_of_the_issue_parse() -> None:
    fp32, math, breaks, big = parse_rules(ISSUE_RULES)
    assert (fp32.name, fp32.sort, fp32.fields, fp32.reason) == (
        "fp32-gemm",
        "kernel",
        (("kind", ("gemm",)), ("dtype", ("fp32",))),
        "bf16 models must not run fp32 GEMMs",
    )
    assert (math.sort, math.reason, math.conditions) == ("op", "", "op=aten::_scaled_dot_product_attention_math")
    assert (breaks.sort, breaks.metric, breaks.comparison, breaks.limit) == ("metric", "graph_breaks", ">", 0)
    assert (big.metric, big.comparison, big.limit, big.conditions) == (
        "peak_bytes",
        ">=",
        2 * 2**30,
        "peak_bytes>=2147483648",
    )
    assert parse_rule("x: dtype=fp32,tf32 name=*gemm* op=aten::addmm").fields[0] == ("dtype", ("fp32", "tf32"))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("kind=gemm dtype=fp32", "expected 'NAME: CONDITION ... | REASON'"),
        ("op=aten::mm", "expected 'NAME: CONDITION"),
        ("empty:   | no conditions", "has no condition"),
        ("k: kind=gem", "kind=gem is not one of gemm, convolution"),
        ("d: dtype=float32", "dtype=float32 is not one of fp64, fp32"),
        ("f: family=cublaslt", "family=cublaslt is not one of"),
        ("x: colour=red", "unknown field 'colour'; the fields are kind, family, dtype, layout, name, op"),
        ("s: syncz>0", "unknown metric 'syncz'; the metrics are syncs, dtoh_copies, launches, graph_breaks"),
        ("g: graph_breaks=0", "graph_breaks is a metric, compared with"),
        ("g: graph_breaks>1MiB", "graph_breaks> takes a number, got '1MiB'"),
        ("p: peak_bytes>lots", "peak_bytes> takes a number, got 'lots' (a size may end in KiB"),
        ("m: graph_breaks>0 kind=gemm", "a metric rule has one comparison and nothing else"),
        ("m: graph_breaks>0 recompiles>0", "a metric rule has one comparison and nothing else"),
        ("d: kind=gemm kind=pointwise", "names a field twice; list alternatives as field=a,b"),
        ("w: kind=gemm what?", "'what?' is not a condition"),
    ],
)
def test_a_bad_line_says_what_is_wrong(line: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_rule(line)


def test_parse_rules_names_the_line_and_refuses_a_second_rule_of_a_name() -> None:
    with pytest.raises(ValueError, match=r"^line 3 'a: kind=gem': rule 'a': kind=gem"):
        parse_rules(["a: kind=gemm", "", "a: kind=gem"])
    with pytest.raises(ValueError, match="line 2 'a: kind=pointwise': a second rule named 'a'"):
        parse_rules(["a: kind=gemm", "a: kind=pointwise"])


def test_a_forgotten_fp32_linear_breaks_the_fp32_gemm_rule(trace: Trace) -> None:
    rules = parse_rules(["fp32-gemm: kind=gemm dtype=fp32 | bf16 models must not run fp32 GEMMs"])
    prof = kp.load_trace(trace("bf16_mlp_fp32_linear"))  # H200: the fp32 layer runs a CUTLASS SIMT sgemm
    with pytest.raises(kp.ForbiddenError) as info:
        check_rules(prof, rules)
    message = str(info.value)
    assert message.startswith(
        "kernelprof_forbid rule 'fp32-gemm' (kind=gemm dtype=fp32) is broken: bf16 models must not run fp32 GEMMs\n"
        "1 of 7 kernels per call match:\n"
        "#  kind  family   dtype  layout  fused ops  median us  launched by  name"  # medians over the calls
    )
    assert (
        "3  gemm  cutlass  fp32   tn      bias (op)        6.8  aten::addmm  "
        "cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>" in message
    )
    assert "nvjet" not in message  # the bf16 GEMMs are not listed
    assert "@pytest.mark.kernelprof_allow('fp32-gemm')" in message
    assert isinstance(info.value, AssertionError)

    check_rules(kp.load_trace(trace("geglu_eager")), rules)  # a bf16 model: nothing to say
    assert violation(prof, parse_rule("addmm-fp32: dtype=fp32 op=aten::addmm")) is not None  # op: the launching op
    assert violation(prof, parse_rule("mm-fp32: dtype=fp32 op=aten::mm")) is None
    assert violation(prof, parse_rule("simt: name=*simt_sgemm*")) is not None


def test_the_sdpa_math_fallback_breaks_an_op_rule(trace: Trace) -> None:
    rule = parse_rule("math-sdpa: op=aten::_scaled_dot_product_attention_math | use a fused SDPA kernel")
    found = violation(kp.load_trace(trace("sdpa_math")), rule)
    assert found is not None
    assert found.startswith("ran in call 0:")
    assert "aten::_scaled_dot_product_attention_math      1" in found
    assert "aten::matmul" in found  # its children
    assert violation(kp.load_trace(trace("sdpa_default")), rule) is None  # cuDNN attention on the H200
    assert violation(kp.load_trace(trace("sdpa_default")), parse_rule("any-sdpa: op=aten::_scaled_dot_*")) is not None


def test_metric_rules_and_every_broken_rule_in_one_failure(trace: Trace) -> None:
    leak = kp.load_trace(trace("memory_leak"))
    rules = parse_rules(
        ["mallocs: malloc_calls>0 | the caching allocator should serve it", "few: kernels>=1", "k: kernels>1"]
    )
    with pytest.raises(kp.ForbiddenError) as info:
        check_rules(leak, rules)
    message = str(info.value)
    assert (
        "rule 'mallocs' (malloc_calls>0) is broken: the caching allocator should serve it\nmalloc_calls = 1" in message
    )
    assert "rule 'few' (kernels>=1) is broken\nkernels = 1" in message
    assert "rule 'k'" not in message
    assert "kernelprof_allow('mallocs', 'few')" in message
    check_rules(kp.load_trace(trace("memory_steady")), rules[:1])


def test_sync_copy_and_launch_rules(trace: Trace) -> None:
    item = kp.load_trace(trace("compile_graph_break"))  # .item() between two compiled graphs
    found = violation(item, parse_rule("no-sync: syncs>0 | no host syncs in the step"))
    assert found is not None
    assert found.startswith("syncs = 1:\n")
    assert "cudaStreamSynchronize" in found
    assert violation(item, parse_rule("d: dtoh_copies>=1")) is not None
    assert violation(item, parse_rule("l: launches>3")) is None
    assert violation(item, parse_rule("l: launches>2")) == f"launches = 3:\n{item.kernels.table()}"
    assert violation(kp.load_trace(trace("geglu_compiled")), parse_rule("no-sync: syncs>0")) is None


def test_rules_a_profile_cannot_be_checked_against_do_not_apply_to_it(trace: Trace) -> None:
    loaded = kp.load_trace(trace("compile_graph_break"))
    # A trace cannot tell graph breaks, nor peak bytes: not "broken", not "passed" either, just not applied.
    assert violation(loaded, parse_rule("b: graph_breaks>0")) is None
    assert violation(loaded, parse_rule("p: peak_bytes>0")) is None
    assert violation(loaded, parse_rule("r: regions>1")) == "regions = 3"
    cpu = kp.profile(torch.relu, torch.randn(3))
    if cpu.has_device_activity:
        pytest.skip("needs a machine without CUDA")
    # Metric rules that break on any profile they apply to (the parser refuses them as typos).
    every = [Rule(m, f"{m}>=0", "", metric=m, comparison=">=", limit=0.0) for m in ("malloc_calls", "kernels", "syncs")]
    check_rules(cpu, (parse_rule("g: kind=gemm"), *every))
    assert violation(cpu, parse_rule("relu: op=aten::relu")) is not None  # CPU ops are there


@pytest.mark.parametrize(
    ("rule", "metric"),
    [("r: syncs>-1", "syncs"), ("r: peak_bytes<=-2GiB", "peak_bytes"), ("r: launches==-0.5", "launches")],
)
def test_a_negative_limit_is_told_as_such(rule: str, metric: str) -> None:
    with pytest.raises(ValueError, match=f"{metric} is never negative: compare it with 0 or more") as info:
        parse_rule(rule)
    assert "takes a number" not in str(info.value)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ('no-vec: name="*vectorized* | no eager pointwise', 'name="*vectorized* has an unbalanced'),
        ('q: name=a"b', 'name=a"b has an unbalanced double quote'),
        ("r: syncs<0", "syncs<0 never breaks (syncs is never negative); did you mean syncs>0"),
        ("r: launches>=0", "launches>=0 breaks on every profile"),
    ],
)
def test_a_rule_that_could_never_or_would_always_break_is_refused(rule: str, message: str) -> None:
    # An adversarial probe: an unclosed quote made a rule that matched nothing, and syncs<0 one
    # that never broke, both accepted in silence (syncs>-1 was refused).
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_rule(rule)


def test_a_quoted_name_may_hold_the_reasons_bar() -> None:
    rule = parse_rule('no-or: name="a|b*" | no such kernels')
    assert (rule.fields, rule.reason) == ((("name", ("a|b*",)),), "no such kernels")
    assert parse_rule("r: syncs<=0").limit == 0
    assert parse_rule("r: syncs>0").comparison == ">"


def test_a_limit_that_is_not_a_number_still_says_so() -> None:
    with pytest.raises(ValueError, match="syncs> takes a number, got 'many'"):
        parse_rule("r: syncs>many")


def test_a_kind_rule_for_templates_matches_kernels_generated_from_one() -> None:
    template = Kernel(name="triton_tem_fused_mm_0", kind="gemm", family="inductor", template=True)
    cublas = Kernel(name="sgemm_largek_lds64", kind="gemm", family="cublas")
    rule = parse_rule("no-templates: kind=template | no max-autotune GEMMs here")
    assert (rule.matches_kernel(template), rule.matches_kernel(cublas)) == (True, False)
    assert parse_rule("gemms: kind=gemm").matches_kernel(template)
    assert parse_rule("liger: family=liger").fields == (("family", ("liger",)),)  # a family rules may name


def test_a_name_in_double_quotes_is_one_value_spaces_and_commas_included() -> None:
    shown = "at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, array<char*, 3ul> >"
    rule = parse_rule(f'no-add: name="{shown}" kind=pointwise | no eager add')
    assert rule.fields == (("name", (shown,)), ("kind", ("pointwise",)))
    assert parse_rule("r: name=a,b").fields == (("name", ("a", "b")),)
    add = Kernel(name=f"void {shown}(int)", kind="pointwise", family="aten")
    assert rule.matches_kernel(add)


def test_an_op_field_holds_the_kernels_launched_anywhere_under_the_op(trace: Trace) -> None:
    # An adversarial probe: `op=aten::linear kind=gemm dtype=fp32` never broke on an fp32 linear:
    # its GEMM's launching op is the aten::addmm inside aten::linear.
    prof = kp.load_trace(trace("linear_fp32"))
    gemm = prof.kernels.one(kind="gemm")
    assert gemm.op == "aten::addmm"
    assert "aten::linear" in gemm.ops
    assert violation(prof, parse_rule("fp32-linear: op=aten::linear kind=gemm dtype=fp32")) is not None
    assert violation(prof, parse_rule("fp32-mm: op=aten::mm kind=gemm")) is None  # no mm anywhere above it


def test_count_rules_break_on_any_call_of_a_profile_whose_calls_differ() -> None:
    # An adversarial probe: with allow_variation=True, kernels>2 and launches>2 read call 0 (one
    # kernel) and passed while call 2 launched five; kernel rules and syncs read every call.
    from tests.helpers import Stream, build

    s = Stream()
    for i, kernels in enumerate((1, 1, 5)):
        t = 100.0 * i
        s.step(i, t, 60)
        mm = s.op("aten::mm", t + 1, 50)
        for n in range(kernels):
            s.launch(mm, f"nvjet_sm90_tst_64x8_64x16_1x2_h_bz_NNT_{n}", t + 2 + 5 * n)
    prof = build(s, allow_variation=True)
    assert prof.varied
    assert [len(c.kernels) for c in prof.calls] == [1, 1, 5]
    for rule in ("many-kernels: kernels>2", "many-launches: launches>2"):
        broken = violation(prof, parse_rule(rule))
        assert broken is not None
        assert broken.startswith(f"{rule.split(': ')[1][:-2]} = 5")


@pytest.mark.parametrize(
    "rule",
    [
        "r: syncs==0.5",
        "r: syncs!=0.5",
        "r: kernels>2.5",
        "r: launches<=1.25",
        "r: peak_bytes==1.5",
        "r: peak_bytes!=0.0001KB",
    ],
)
def test_a_limit_that_is_no_whole_number_is_refused(rule: str) -> None:
    # An adversarial probe: syncs==0.5 never broke and syncs!=0.5 always did (counts are whole).
    metric = re.split(r"[<>=!]", rule.split(": ")[1])[0]
    with pytest.raises(ValueError, match=f"{metric} is a (count|number of bytes), always a whole number"):
        parse_rule(rule)


def test_a_size_in_units_may_be_fractional_as_a_bound() -> None:
    assert parse_rule("r: peak_bytes>1.5GiB").limit == 1.5 * 2**30
    assert parse_rule("r: syncs==1.0").limit == 1
    assert parse_rule("r: peak_bytes==0.1KB").limit == 100


@pytest.mark.parametrize("digits", ["\u0663", "\uff13", "\u09e9", "1\u0660"])
def test_a_limit_of_other_scripts_digits_is_refused(digits: str) -> None:
    # An adversarial probe: syncs>٣ (an Arabic-Indic 3) was read as syncs>3.
    with pytest.raises(ValueError, match="takes a number"):
        parse_rule(f"r: syncs>{digits}")
