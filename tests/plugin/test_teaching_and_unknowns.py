"""Teaching the decoder (ini kernelprof_kernels, kernelprof.teach), loud unknowns in tests and
rules, --kernelprof-strict-decode, and the end-of-run list of names no evidence placed.

Each project below holds one inner test per behaviour and is run once per configuration
(plain, strict under xdist, taught in the ini, a dtype rule with and without strict decode);
each assertion is tied to its inner test's own failure section, warning or outcome line.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import DATA, section, warnings_of

ZOO_LINEAR_FP32 = DATA / "zoo" / "h100" / "gemm_linear_256_8_b64_fp32.json.gz"

# Kernels of the extension libraries users bring, as real runs named them (names_corpus.tsv;
# fbgemm_gpu's as its sources name the kernel), each with the op that launches it.
FLASH_ATTN = (
    "void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, 0, 0, bfloat16_t, "
    "Flash_kernel_traits<128, 64, 128, 4, bfloat16_t>>, 0, 0, 0, 0, 1, 0, 1, 0>(Flash_fwd_params)"
)
XFORMERS = "fmha_cutlassF_bf16_aligned_64x128_rf_sm80"
VLLM = (
    "void vllm::rms_norm_kernel<c10::BFloat16, 8, 2>(c10::BFloat16*, c10::BFloat16 const*, long, long, long, "
    "long, long, c10::BFloat16 const*, float, int, int)"
)
FBGEMM = "split_embedding_codegen_forward_unweighted_kernel"
MINE = "void my_ext::tiled_matmul<float>(float const*, float const*, float*)"
EXTENSION_KERNELS = (
    ("flash_attn::_flash_attn_forward", FLASH_ATTN),
    ("xformers::efficient_attention_forward_cutlass", XFORMERS),
    ("_C::rms_norm", VLLM),
    ("fbgemm::split_embedding_codegen_lookup_sgd_function", FBGEMM),
    ("my_ext::matmul", MINE),
)


def one_call_trace(kernels: tuple[tuple[str, str], ...]) -> str:
    """A Chrome trace of one profiled call that launches each (op, kernel) in turn."""
    events: list[dict[str, object]] = []

    def x(cat: str, name: str, ts: float, dur: float, tid: int, **args: object) -> None:
        events.append({"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 1, "tid": tid, "args": args})

    x("user_annotation", "ProfilerStep#0", 0, 1000, 1, **{"External id": 1})
    for i, (op, kernel) in enumerate(kernels):
        ident, corr, ts = 10 + i, 100 + i, 10 + 100 * i
        x("cpu_op", op, ts, 50, 1, **{"External id": ident})
        x("cuda_runtime", "cudaLaunchKernel", ts + 10, 5, 1, correlation=corr, **{"External id": ident})
        x("kernel", kernel, ts + 20, 30, 7, correlation=corr, stream=7, device=0, **{"External id": ident})
    trace = {"deviceProperties": [{"name": "Fake GPU", "computeMajor": 8, "computeMinor": 0}], "traceEvents": events}
    return json.dumps(trace)


UNKNOWN_SUITE = """
import pytest

from pytest_kernelprof import LateTeachingWarning


def test_untaught_is_listed(kernelprof):
    prof = kernelprof.load_trace("ext.json")
    assert [k.name for k in prof.kernels.unplaced()] == [prof.kernels[4].name]


def test_kind_question(kernelprof):
    prof = kernelprof.load_trace("ext.json")
    assert prof.kernels.count(kind="gemm") == 0


def test_failed_kind_count(kernelprof):
    prof = kernelprof.load_trace("ext.json")
    assert prof.kernels.count(kind="gemm") == 1


def test_teach(kernelprof):
    before = kernelprof.load_trace("ext.json")
    with pytest.warns(LateTeachingWarning) as late:
        kernelprof.teach("my_ext::*", kind="gemm", family="my-ext")
    assert str(late[0].message).startswith(
        "teach('my_ext::*') after 1 profile loaded: kernels are decoded when a profile is built, "
        "so the profiles already held keep their decoding"
    )
    assert late[0].filename == __file__
    after = kernelprof.load_trace("ext.json")
    assert before.kernels[4].unplaced
    assert (after.kernels[4].kind, after.kernels[4].family) == ("gemm", "my-ext")
    assert after.kernels.count(kind="gemm") == 1
"""

END_OF_RUN_LIST = [
    "*- kernelprof: 1 kernel name no evidence could place (prof.kernels.unplaced()) -*",
    "my_ext::tiled_matmul<float>  (launched by my_ext::matmul; test_unknown.py::{first})",
    "Kind and dtype questions warn about them. Teach the decoder what they are (ini):",
    "  kernelprof_kernels =",
    "      *::tiled_matmul<*: kind=... family=...",
]


@pytest.fixture
def unknown_project(pytester: pytest.Pytester) -> pytest.Pytester:
    """The extension kernels, the last one (my_ext) known to no evidence, and the suite above."""
    (pytester.path / "ext.json").write_text(one_call_trace(EXTENSION_KERNELS))
    pytester.makepyfile(test_unknown=UNKNOWN_SUITE)
    return pytester


def test_unknown_kernels_warn_name_themselves_and_are_listed_at_the_end(unknown_project: pytest.Pytester) -> None:
    result = unknown_project.runpytest_subprocess("-rA")
    result.assert_outcomes(passed=3, failed=1, warnings=2)
    # A kind question that an unknown kernel could change warns, naming it.
    warnings_of(result, "test_unknown.py::test_kind_question").fnmatch_lines(
        [
            "*UndecodedKernelWarning: count(kind='gemm') may not hold: 1 kernel of unknown kind could change it:",
            "*my_ext::tiled_matmul<float>  (kind unknown, launched by my_ext::matmul)",
            "*or kernelprof.teach(GLOB, ...) in the test before taking or loading the profile:",
        ]
    )
    warnings_of(result, "test_unknown.py::test_kind_question").fnmatch_lines([WOULD_BE_AN_ERROR])
    result.stdout.fnmatch_lines(["PASSED test_unknown.py::test_kind_question"])
    # A failed kind count names the unknown kernels that could be it.
    section(result, "test_failed_kind_count").fnmatch_lines(
        [
            "*kernels.count(kind='gemm') matched 0 of 5 kernels",
            "*1 kernel of unknown kind (#4) could be it: teach the decoder",
            "*#  kind *",
        ]
    )
    # kernelprof.teach places the kernel for the profiles taken after it.
    result.stdout.fnmatch_lines(["PASSED test_unknown.py::test_teach"])
    # Untaught, a kernel is listed at the end of the run with how to teach it.
    result.stdout.fnmatch_lines([line.format(first="test_untaught_is_listed") for line in END_OF_RUN_LIST])
    result.stdout.fnmatch_lines(["PASSED test_unknown.py::test_untaught_is_listed"])


# Raised under strict decode, the warning says so first, and not that it would be an error.
STRICT_FAILURE = "failed under --kernelprof-strict-decode: count(kind='gemm') may not hold*"
WOULD_BE_AN_ERROR = "*(an error under --kernelprof-strict-decode)*"


@pytest.mark.parametrize(
    "flags",
    [("-W", "ignore"), ("-W", "ignore::UserWarning"), ("-p", "no:warnings"), ("-o", "filterwarnings=ignore")],
)
def test_strict_decode_holds_whatever_warning_filters_say(
    unknown_project: pytest.Pytester, flags: tuple[str, str]
) -> None:
    """Strict decode made the warning an error through pytest's filters, which a later filter
    (-W ignore) or no warnings plugin at all switched off: the question passed."""
    result = unknown_project.runpytest_subprocess("-rA", "--kernelprof-strict-decode", *flags)
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.no_fnmatch_line(WOULD_BE_AN_ERROR)
    section(result, "test_kind_question").fnmatch_lines(
        [
            '>       assert prof.kernels.count(kind="gemm") == 0',
            f"E       pytest_kernelprof.errors.UndecodedKernelWarning: {STRICT_FAILURE}",
        ]
    )


def test_strict_decode_fails_the_question_at_the_tests_line_under_xdist_too(unknown_project: pytest.Pytester) -> None:
    result = unknown_project.runpytest_subprocess("-rA", "-n", "1", "--kernelprof-strict-decode")
    result.assert_outcomes(passed=2, failed=2)
    section(result, "test_kind_question").fnmatch_lines(
        [
            '>       assert prof.kernels.count(kind="gemm") == 0',
            f"E       pytest_kernelprof.errors.UndecodedKernelWarning: {STRICT_FAILURE}",
        ]
    )
    section(result, "test_failed_kind_count").fnmatch_lines(
        [
            '>       assert prof.kernels.count(kind="gemm") == 1',
            f"E       pytest_kernelprof.errors.UndecodedKernelWarning: {STRICT_FAILURE}",
        ]
    )
    assert "unknowns.py" not in result.stdout.str()
    # Taught, the question has its answer under strict decode.
    result.stdout.fnmatch_lines(["PASSED test_unknown.py::test_teach"])
    # The xdist controller lists the unknown kernels its workers saw.
    result.stdout.fnmatch_lines([line.format(first="test_*") for line in END_OF_RUN_LIST])


SWALLOWING_SUITE = """
import warnings

import pytest

from pytest_kernelprof import UndecodedKernelWarning


def test_recwarn(kernelprof, recwarn):
    prof = kernelprof.load_trace("ext.json")
    assert prof.kernels.count(kind="gemm") == 0
    assert recwarn.pop(UndecodedKernelWarning)


def test_catch_warnings(kernelprof):
    prof = kernelprof.load_trace("ext.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert prof.kernels.count(kind="gemm") == 0


def test_pytest_warns(kernelprof):
    prof = kernelprof.load_trace("ext.json")
    with pytest.warns(UndecodedKernelWarning):
        assert prof.kernels.count(kind="gemm") == 0


@pytest.mark.filterwarnings("ignore")
def test_marked(kernelprof):
    prof = kernelprof.load_trace("ext.json")
    assert prof.kernels.count(kind="gemm") == 0
"""
SWALLOWING_TESTS = ("test_recwarn", "test_catch_warnings", "test_pytest_warns", "test_marked")


@pytest.fixture
def swallowing_project(pytester: pytest.Pytester) -> pytest.Pytester:
    """Tests that record, catch or ignore the warning around their question."""
    (pytester.path / "ext.json").write_text(one_call_trace(EXTENSION_KERNELS))
    pytester.makepyfile(test_swallow=SWALLOWING_SUITE)
    return pytester


@pytest.mark.parametrize("workers", [(), ("-n", "1")])
def test_strict_decode_fails_a_test_that_records_catches_or_ignores_the_warning(
    swallowing_project: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    """Strict decode was a warnings filter, and a test's own recwarn, pytest.warns or
    catch_warnings (set inside it) swallowed the warning: the question passed."""
    result = swallowing_project.runpytest_subprocess("-rA", "--kernelprof-strict-decode", *workers)
    result.assert_outcomes(failed=4)
    for test in SWALLOWING_TESTS:
        section(result, test).fnmatch_lines(
            [
                '>*assert prof.kernels.count(kind="gemm") == 0',
                f"E *pytest_kernelprof.errors.UndecodedKernelWarning: {STRICT_FAILURE}",
            ]
        )
    assert "unknowns.py" not in result.stdout.str()


def test_without_strict_decode_the_question_only_warns(swallowing_project: pytest.Pytester) -> None:
    # Each test records, catches or ignores the warning: none fails and none is reported.
    result = swallowing_project.runpytest_subprocess("-rA")
    result.assert_outcomes(passed=4)


def test_strict_decode_holds_at_collection(pytester: pytest.Pytester) -> None:
    (pytester.path / "ext.json").write_text(one_call_trace(EXTENSION_KERNELS))
    pytester.makepyfile(
        test_module_level="""
        import pytest_kernelprof as kp

        GEMMS = kp.load_trace("ext.json").kernels.count(kind="gemm")

        def test_x():
            assert GEMMS == 0
        """
    )
    result = pytester.runpytest_subprocess("--kernelprof-strict-decode")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"E   *.UndecodedKernelWarning: {STRICT_FAILURE}"])


def test_strict_decode_holds_in_a_thread_the_test_starts(pytester: pytest.Pytester) -> None:
    # The switch is a context variable, which a new thread does not inherit: the question
    # asked in a worker thread passed under strict decode.
    (pytester.path / "ext.json").write_text(one_call_trace(EXTENSION_KERNELS))
    pytester.makepyfile(
        test_threaded="""
        from concurrent.futures import ThreadPoolExecutor

        def test_in_a_thread(kernelprof):
            prof = kernelprof.load_trace("ext.json")
            with ThreadPoolExecutor(1) as pool:
                assert pool.submit(lambda: prof.kernels.count(kind="gemm")).result() == 0
        """
    )
    pytester.makeini("[pytest]\nfilterwarnings =\n    ignore::UserWarning\n")
    assert pytester.runpytest_subprocess().ret == 0  # not strict: the thread's question warns
    result = pytester.runpytest_subprocess("--kernelprof-strict-decode")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["E   *.UndecodedKernelWarning: count(kind='gemm') may not hold*"])


def test_strict_decode_ends_with_its_session(swallowing_project: pytest.Pytester) -> None:
    """Sessions in one process (pytester's in-process runs) each have their own strictness, and
    leave the process's (the test that runs them) as it was."""
    # An in-process run drops the modules it imported after it, and torch cannot be imported twice.
    import torch  # noqa: F401

    from pytest_kernelprof.decode import parse_kernel_name
    from pytest_kernelprof.errors import UndecodedKernelWarning
    from pytest_kernelprof.model.unknowns import decode_strictness, warn_undecided

    swallowing_project.runpytest_inprocess("--kernelprof-strict-decode").assert_outcomes(failed=4)
    with pytest.warns(UndecodedKernelWarning):  # raised, it would not be caught here
        warn_undecided("count(kind='gemm')", [parse_kernel_name("mystery_kernel_v2")])
    # A session that is not strict is not, inside a strict session's test either.
    with decode_strictness(True):
        swallowing_project.runpytest_inprocess().assert_outcomes(passed=4)


def test_ini_lines_teach_the_extension_kernels_users_bring(pytester: pytest.Pytester) -> None:
    (pytester.path / "ext.json").write_text(one_call_trace(EXTENSION_KERNELS))
    pytester.makeini(
        """
        [pytest]
        kernelprof_kernels =
            # earlier lines win; a glob matches with or without "void "
            my_ext::tiled_matmul*: kind=gemm family=my-ext dtype=fp32 layout=nn
            flash_fwd*: family=flash-attn
            fmha_cutlassF_*: family=xformers
            split_embedding_codegen_*: family=fbgemm-tbe
        kernelprof_forbid =
            no-my-ext: family=my-ext dtype=fp16 | the taught family is a family rules may name
        """
    )
    pytester.makepyfile(
        """
        def test_taught(kernelprof):
            prof = kernelprof.load_trace("ext.json")
            facts = [(k.kind, k.family, k.dtype) for k in prof.kernels]
            assert facts == [
                ("attention", "flash-attn", "bf16"),
                ("attention", "xformers", "bf16"),
                ("reduction", "vllm", "bf16"),
                ("indexing", "fbgemm-tbe", None),
                ("gemm", "my-ext", "fp32"),
            ]
            mine = prof.kernels.one(kind="gemm")
            assert (mine.layout, mine.evidence.kind, mine.evidence.dtype) == ("nn", "user", "user")
            assert prof.kernels[0].evidence.family == "user" and prof.kernels[0].evidence.kind == "name"
            assert not prof.kernels.unplaced()
        """
    )
    result = pytester.runpytest_subprocess("-W", "error::pytest_kernelprof.UndecodedKernelWarning")
    result.assert_outcomes(passed=1)
    assert "no evidence could place" not in result.stdout.str()


def test_a_bad_teaching_line_is_a_usage_error_naming_the_line(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nkernelprof_kernels =\n    flash_fwd*: kind=attention\n    my_ext*: kind=matmul\n")
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ini option kernelprof_kernels, line 2: unknown kind 'matmul'; one of: gemm, convolution*"]
    )


RULE_SUITE = f"""
def test_linear(kernelprof):
    # nn.Linear(256, 8) in fp32 at batch 64 ran sgemm_largek_lds64, scal_kernel and cuBLASLt's
    # bias epilogue on an H100 (tests/data/zoo): one GEMM, and the rule sees it.
    kernelprof.load_trace({str(ZOO_LINEAR_FP32)!r})


def test_unknown_dtype(kernelprof):
    # A GEMM whose name says nothing: placed by its op (aten::mm), its dtype unknown.
    prof = kernelprof.load_trace("mm.json")
    assert prof.kernels.one(kind="gemm").evidence.kind == "op"
"""

RULE_INI = "[pytest]\nkernelprof_forbid =\n    fp32-gemm: kind=gemm dtype=fp32 | bf16 models only\n"


@pytest.fixture
def rule_project(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "mm.json").write_text(one_call_trace((("aten::mm", "mystery_tile_op_v3"),)))
    pytester.makepyfile(test_rule=RULE_SUITE)
    return pytester


def test_a_dtype_rule_sees_the_fp32_gemm_and_warns_on_an_unknown_dtype(rule_project: pytest.Pytester) -> None:
    rule_project.makeini(RULE_INI)
    result = rule_project.runpytest_subprocess("-rA")
    result.assert_outcomes(passed=1, failed=1, warnings=1)
    section(result, "test_linear").fnmatch_lines(
        [
            "*kernelprof_forbid rule 'fp32-gemm' (kind=gemm dtype=fp32) is broken: bf16 models only",
            "*1 of 3 kernels per call match:",
            "*gemm*cublas*sgemm_largek_lds64*",
        ]
    )
    # The rule never passes silently on a GEMM whose dtype is unknown.
    warnings_of(result, "test_rule.py::test_unknown_dtype").fnmatch_lines(
        [
            "*UndecodedKernelWarning: kernelprof_forbid rule 'fp32-gemm' (kind=gemm dtype=fp32) may not hold*",
            "*mystery_tile_op_v3  (gemm/unknown, dtype unknown, launched by aten::mm)",
        ]
    )
    result.stdout.fnmatch_lines(["PASSED test_rule.py::test_unknown_dtype"])


def test_strict_decode_in_the_ini_fails_the_rule_on_an_unknown_dtype(rule_project: pytest.Pytester) -> None:
    rule_project.makeini(RULE_INI + "kernelprof_strict_decode = true\n")
    result = rule_project.runpytest_subprocess("-rA")
    result.assert_outcomes(failed=2)
    section(result, "test_unknown_dtype").fnmatch_lines(
        [
            '>       prof = kernelprof.load_trace("mm.json")',
            "E       pytest_kernelprof.errors.UndecodedKernelWarning: failed under --kernelprof-strict-decode:"
            " kernelprof_forbid rule 'fp32-gemm' (kind=gemm dtype=fp32) may not hold*",
        ]
    )
    section(result, "test_linear").fnmatch_lines(
        ["*kernelprof_forbid rule 'fp32-gemm' (kind=gemm dtype=fp32) is broken*"]
    )
    assert "unknowns.py" not in result.stdout.str()
