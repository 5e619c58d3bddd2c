"""Wrong answers a baseline must not give (issue 34): a kernel of a family the user taught
swapped for another kernel of theirs, a check name and a sweep bucket sharing an entry, and
two bucket keys of different types sharing one."""

from __future__ import annotations

import json

import pytest

from tests.helpers import DATA

SWAPPED = """
import gzip, json, os
from pathlib import Path

DATA = Path({data!r})


def user_kernels(kernelprof, tmp_path, name):
    # The recorded Linear's kernels as the user's own: a name no library's grammar knows, and a
    # launching op that does not place them.
    trace = json.load(gzip.open(DATA / "h200_linear_eager.json.gz"))
    for event in trace["traceEvents"]:
        if event.get("cat") == "kernel":
            event["name"] = name
        elif event.get("name") == "aten::addmm":
            event["name"] = "aten::nope"
    path = tmp_path / "user.json"
    path.write_text(json.dumps(trace))
    return kernelprof.load_trace(path)  # decoded with what the ini taught


def test_swap(kernelprof, kernel_baseline, tmp_path):
    kernel_baseline.check(user_kernels(kernelprof, tmp_path, os.environ["KERNEL_NAME"]))
"""


@pytest.mark.parametrize(
    ("ini", "shown"),
    [
        # Unplaced (no kind taught): removed and added, no rename of one unknown kernel into another.
        ("", "*- other/unknown ?*acme_fused_v2"),
        # This run's kernel on the ~ line (as on = lines), the baseline's name below it.
        ("kernelprof_kernels = acme_*: kind=pointwise family=acme\n", "*~ pointwise/acme ?*acme_unfused_fallback"),
        # A family name of the user's own with the kind taught elsewhere: the name still decides.
        ("kernelprof_kernels =\n    acme_*: family=acme-kernels\n", "*- other/acme-kernels ?*acme_fused_v2"),
    ],
    ids=["untaught", "taught", "taught family only"],
)
def test_a_kernel_of_a_taught_family_swapped_for_another_fails(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ini: str, shown: str
) -> None:
    # A trial: teaching a family, as every undecoded-kernel warning asks, took the kernel out of
    # the families whose names stable mode compares, and any other kernel of the user's passed.
    cpu_pytester.makeini(f"[pytest]\nfilterwarnings = ignore::pytest_kernelprof.UndecodedKernelWarning\n{ini}")
    cpu_pytester.makepyfile(test_u=SWAPPED.format(data=str(DATA)))
    monkeypatch.setenv("KERNEL_NAME", "acme_fused_v2")
    cpu_pytester.runpytest("--kernelprof-update").assert_outcomes(passed=1)
    cpu_pytester.runpytest().assert_outcomes(passed=1)

    monkeypatch.setenv("KERNEL_NAME", "acme_unfused_fallback")
    result = cpu_pytester.runpytest()

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*kernel signature differs from the baseline sm90/default*", shown])


def test_a_kernel_taught_a_library_family_compares_as_that_library_does(
    cpu_pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Taught cuBLAS's own family, a kernel is cuBLAS's to the baseline: its name may drift.
    cpu_pytester.makeini("[pytest]\nkernelprof_kernels = acme_*: kind=gemm family=cublas\n")
    cpu_pytester.makepyfile(test_u=SWAPPED.format(data=str(DATA)))
    monkeypatch.setenv("KERNEL_NAME", "acme_fused_v2")
    cpu_pytester.runpytest("--kernelprof-update").assert_outcomes(passed=1)
    monkeypatch.setenv("KERNEL_NAME", "acme_unfused_fallback")
    cpu_pytester.runpytest().assert_outcomes(passed=1)


SHARED = """
from pytest_kernelprof import load_sweep, load_trace

SWEEP = load_sweep({sweep!r})


def test_both(kernel_baseline):
    kernel_baseline.check(load_trace({trace!r}), name={name!r})
    kernel_baseline.check_sweep(SWEEP, by=lambda case: "1")
"""


@pytest.mark.parametrize("name", ["sweep[1]", "other[all]"])
def test_a_check_name_of_a_sweep_buckets_form_is_refused(cpu_pytester: pytest.Pytester, name: str) -> None:
    # A trial: check(name="sweep[1]") and check_sweep's bucket "1" wrote one entry, the update
    # said "2 written", and the next run failed with a raw "ValueError: kernels is missing".
    cpu_pytester.makepyfile(
        test_k=SHARED.format(
            sweep=str(DATA / "h100_sweep_sdpa"), trace=str(DATA / "h100_sweep_sdpa" / "case-00.json.gz"), name=name
        )
    )
    result = cpu_pytester.runpytest("--kernelprof-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"E*ValueError: kernel_baseline.check() name={name!r} has the form of a check_sweep bucket's entry "
            "(name[[]bucket]), which is reserved for check_sweep*".replace("[1]", "[[]1]").replace("[all]", "[[]all]")
        ]
    )
    assert not (cpu_pytester.path / "__kernelprof__").exists()


READ_AS = """
from pytest_kernelprof import load_sweep, load_trace

SWEEP = load_sweep({sweep!r})


def test_sweep(kernel_baseline):
    kernel_baseline.check_sweep(SWEEP, name="cases")


def test_single(kernel_baseline):
    kernel_baseline.check(load_trace({trace!r}), name="cases")
"""


def test_an_entry_of_the_other_kind_fails_as_a_baseline_error_naming_it(cpu_pytester: pytest.Pytester) -> None:
    sweep = DATA / "h100_sweep_sdpa"
    cpu_pytester.makepyfile(test_k=READ_AS.format(sweep=str(sweep), trace=str(sweep / "case-00.json.gz")))
    folder = cpu_pytester.path / "__kernelprof__" / "test_k"
    cpu_pytester.runpytest("--kernelprof-update").assert_outcomes(passed=2)
    single, swept = folder / "test_single.json", folder / "test_sweep.json"
    # Each file's entry put where the other kind is looked for (a hand edit, or a test rewritten
    # from one method to the other).
    one, buckets = json.loads(single.read_text()), json.loads(swept.read_text())
    one["archs"]["sm90"]["cases"] = buckets["archs"]["sm90"].pop("cases[all]")
    buckets["archs"]["sm90"]["cases[all]"] = json.loads(single.read_text())["archs"]["sm90"]["cases"]
    single.write_text(json.dumps(one))
    swept.write_text(json.dumps(buckets))

    result = cpu_pytester.runpytest()

    result.assert_outcomes(failed=2)
    # Each named relative to the rootdir, as the job summary names it.
    single, swept = (path.relative_to(cpu_pytester.path) for path in (single, swept))
    result.stdout.fnmatch_lines_random(
        [
            f"E*BaselineError: {single}: entry sm90/cases holds a check_sweep bucket's ranges, not one profile's "
            "kernels: *",
            f"E*BaselineError: {swept}: entry sm90/cases[[]all[]] holds one profile's kernels, not a check_sweep "
            "bucket's ranges: *",
        ]
    )
    assert "ValueError" not in result.stdout.str()


KEYS = """
from pytest_kernelprof import load_sweep

SWEEP = load_sweep({sweep!r})


def test_keys(kernel_baseline):
    kernel_baseline.check_sweep(SWEEP, by={by})
"""


@pytest.mark.parametrize(
    ("by", "error"),
    [
        (
            'lambda c: 1 if c["seq_len"] < 64 else "1"',
            "E*TypeError: check_sweep(by=...): the bucket keys 1 (int) and '1' (str) both name the entry sweep[[]1[]]*",
        ),
        (
            'lambda c: True if c["seq_len"] < 64 else "True"',
            "E*TypeError: check_sweep(by=...): the bucket keys True (bool) and 'True' (str) both name the entry "
            "sweep[[]True[]]*",
        ),
        (
            'lambda c: (c["seq_len"] < 64, "x")',
            "E*TypeError: check_sweep(by=...) gave the case seq_len=1 the bucket key (True, 'x'), a tuple: a bucket "
            "key is a str, an int, a float or a bool*",
        ),
        ("lambda c: None", "E*TypeError: check_sweep(by=...) gave the case seq_len=1 the bucket key None, a NoneType*"),
    ],
    ids=["int and str", "bool and str", "tuple", "None"],
)
def test_bucket_keys_that_would_share_an_entry_are_refused(cpu_pytester: pytest.Pytester, by: str, error: str) -> None:
    # A trial: 1 and "1" both printed as sweep[1], and one entry held the cases of both buckets.
    cpu_pytester.makepyfile(test_b=KEYS.format(sweep=str(DATA / "h100_sweep_sdpa"), by=by))
    result = cpu_pytester.runpytest("--kernelprof-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([error])
    assert not (cpu_pytester.path / "__kernelprof__").exists()


def test_bucket_keys_of_each_accepted_type_get_entries_of_their_own(cpu_pytester: pytest.Pytester) -> None:
    by = 'lambda c: {1: 1, 2: "2", 3: True, 64: 2.5}.get(c["seq_len"], "long")'
    cpu_pytester.makepyfile(test_b=KEYS.format(sweep=str(DATA / "h100_sweep_sdpa"), by=by))
    cpu_pytester.runpytest("--kernelprof-update").assert_outcomes(passed=1)
    stored = json.loads((cpu_pytester.path / "__kernelprof__" / "test_b" / "test_keys.json").read_text())
    assert sorted(stored["archs"]["sm90"]) == ["sweep[1]", "sweep[2.5]", "sweep[2]", "sweep[True]", "sweep[long]"]
    cpu_pytester.runpytest().assert_outcomes(passed=1)


def test_a_second_sweep_into_the_same_entries_is_refused(cpu_pytester: pytest.Pytester) -> None:
    cpu_pytester.makepyfile(
        test_b=KEYS.format(sweep=str(DATA / "h100_sweep_sdpa"), by="None")
        + "\n\ndef test_twice(kernel_baseline):\n"
        + "    kernel_baseline.check_sweep(SWEEP, by=lambda c: 'short' if c['seq_len'] < 64 else 'long')\n"
        + "    kernel_baseline.check_sweep(SWEEP, by=lambda c: 'long')\n"
    )
    result = cpu_pytester.runpytest("--kernelprof-update", "-k", "twice")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["E*ValueError: kernel_baseline.check_sweep() of a second sweep into the entries 'sweep[[]long]' in one test*"]
    )
