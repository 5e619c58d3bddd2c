"""The timeline page without a browser: values filled once and escaped for where they land,
the host records read in one pass over the events, and the call the page opens on.
(``test_timeline_browser.py`` draws the page in headless Chromium.)"""

from __future__ import annotations

import html
import json
import re
import threading
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.assemble.optree import is_inductors_range
from pytest_kernelprof.checks.baseline.signature import BaselineKernel
from pytest_kernelprof.checks.diff import diff_kernels, render_diff
from pytest_kernelprof.reports.lanes import LANE_KEYS
from pytest_kernelprof.reports.timeline import (
    NOT_MEASURED,
    baseline_table,
    fill,
    host_records,
    render_page,
    script_json,
    shown_call,
    write_page,
)
from pytest_kernelprof.tables import display_name
from tests.helpers import DATA
from tests.unit.reports.test_timeline_browser import HOSTILE_KERNELS, HOSTILE_OPS, synthetic_trace


class _Page(HTMLParser):
    """The page's tags, its text, and the JSON data block's text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []
        self.data = ""
        self._in_data = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._in_data = tag == "script" and ("id", "data") in attrs

    def handle_endtag(self, tag: str) -> None:
        self._in_data = False

    def handle_data(self, data: str) -> None:
        if self._in_data:
            self.data += data
        else:
            self.text.append(data)


def test_script_json_holds_no_markup_and_parses_back() -> None:
    value = {"names": [*HOSTILE_KERNELS, "</script>", "a\u2028b\u2029c", "&lt;"]}
    text = script_json(value)
    assert json.loads(text) == value
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}


def test_a_value_is_never_searched_for_placeholders() -> None:
    assert fill("<h1>%TITLE%</h1><p>%DATA%</p>", TITLE="%DATA%", DATA="x") == "<h1>%DATA%</h1><p>x</p>"
    assert fill("%A%%B%", A="%B%", B="%A%") == "%B%%A%"


def test_hostile_names_and_title_stay_text(tmp_path: Path) -> None:
    trace = synthetic_trace(tmp_path / "t.json.gz", 10, names=HOSTILE_KERNELS, ops=HOSTILE_OPS)
    title = "%DATA% <b>%OPS%</b> %ROWS%"
    text = render_page(load_trace(trace), title=title, trace=trace)
    page = _Page()
    page.feed(text)
    data = json.loads(page.data)
    assert data["title"] == title
    assert set(data["strings"]) >= {*HOSTILE_KERNELS, *HOSTILE_OPS}
    assert page.tags.count("script") == 2  # the data block and the page's own script, no other
    assert not {"b", "img"} & set(page.tags)
    assert "svg" in page.tags
    assert page.text.count(title) == 1  # the heading, as it is
    outside = text.replace(page.data, "")
    # The template's placeholders all filled: what is left is the title's, in <title> and <h1>,
    # and the op named "%DATA%" in the op table.
    assert re.findall(r"%[A-Z]+%", outside) == ["%DATA%", "%OPS%", "%ROWS%"] * 2 + ["%DATA%"]


def test_names_that_are_not_unicode_are_written_as_escapes(tmp_path: Path) -> None:
    # JSON's "\ud800" is a lone surrogate, which no UTF-8 file can hold; a path's undecodable
    # byte (b"\xff") arrives as one too. Both reached the page, which was not written.
    trace = synthetic_trace(tmp_path / "t.json.gz", 4, names=["k\ud800"], ops=["op\udfff"])
    page = tmp_path / "page.html"
    write_page(page, load_trace(trace), title="trace\udcff.json", trace=trace)
    text = page.read_text(encoding="utf-8")
    assert "<td>op\\udfff</td>" in text
    assert "<title>trace\\udcff.json - kernelprof</title>" in text
    parsed = _Page()
    parsed.feed(text)
    assert json.loads(parsed.data)["strings"].count("k\ud800") == 1


def test_a_reader_never_sees_half_a_page(tmp_path: Path) -> None:
    # The page was written in place: a reader (a browser, an artifact upload, a second run writing
    # the same test's page) saw it cut short most times it looked while a page was written.
    prof = load_trace(synthetic_trace(tmp_path / "t.json.gz", 1_000))
    page = tmp_path / "page.html"
    write_page(page, prof, title="first")
    writing = threading.Thread(target=lambda: [write_page(page, prof, title=f"page {i}") for i in range(20)])
    writing.start()
    seen = []
    while writing.is_alive():
        seen.append(page.read_text(encoding="utf-8"))
    writing.join()
    assert seen
    assert all(text.endswith("</script></body></html>\n") for text in seen)


def _reference_host_records(trace: Path) -> list[dict[str, list[list[Any]]]]:
    """The page's host records as the first version found them: every step tried for each
    event (quadratic in calls), which the bisection must match."""
    import gzip

    raw = trace.read_bytes()
    events = [e for e in json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)["traceEvents"]]
    events = [e for e in events if e.get("ph") == "X"]
    steps = sorted(
        (float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)))
        for e in events
        if e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith("ProfilerStep#")
    )
    calls: list[dict[str, list[list[Any]]]] = [{"launches": [], "copies": [], "ops": []} for _ in steps]
    for e in events:
        cat, name = e.get("cat"), str(e.get("name", ""))
        ts, dur = float(e["ts"]), float(e.get("dur", 0))
        if cat in ("cuda_runtime", "cuda_driver", "runtime", "driver") and name.startswith(
            ("cudaLaunch", "cuLaunch", "cudaGraphLaunch", "cuGraphLaunch")
        ):
            key, record = "launches", [ts, round(dur, 3)]
        elif cat in ("gpu_memcpy", "memcpy", "gpu_memset", "memset"):
            stream = (e.get("args") or {}).get("stream", e.get("tid", 0))
            key, record = "copies", [ts, round(dur, 3), int(str(stream)) if str(stream).isdigit() else 0, name]
        elif cat in ("cpu_op", "operator") or (cat == "user_annotation" and not name.startswith("ProfilerStep#")):
            key, record = "ops", [ts, ts + dur, name]
        else:
            continue
        for index, (start, end) in enumerate(steps):
            if start <= ts <= end or (key == "copies" and index == len(steps) - 1 and ts > start):
                record[0] = round(ts - start, 3)
                if key == "ops":
                    record[1] = round(record[1] - start, 3)
                calls[index][key].append(record)
                break
    return calls


@pytest.mark.parametrize(
    "name", ["h200_sync_item_stacks", "h200_copy_dtoh_pinned_nonblocking", "h200_decode_compiled", "h200_compile_clean"]
)
def test_host_records_find_each_event_its_call(name: str) -> None:
    trace = DATA / f"{name}.json.gz"
    found = host_records(trace)
    reference = _reference_host_records(trace)
    # The ops are events (op_rows reads them): compared by name and by their start in the call,
    # within 2 ns (the reference's from the JSON's microseconds, theirs from whole nanoseconds).
    ops = [[(e.name, (e.start - call["origin_ns"]) / 1000) for e in call.pop("ops")] for call in found]
    expected = [[(name, start) for start, _, name in call.pop("ops")] for call in reference]
    assert [[name for name, _ in call] for call in ops] == [[name for name, _ in call] for call in expected]
    for call, wanted in zip(ops, expected, strict=True):
        assert [start for _, start in call] == pytest.approx([start for _, start in wanted], abs=2e-3)
    assert all(call.pop("origin_ns") for call in found)
    assert found == reference
    assert sum(len(call["launches"]) for call in found) > 0
    assert all(ops)


def test_host_records_of_a_trace_that_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"traceEvents": [')
    assert host_records(tmp_path / "bad.json") == []
    assert host_records(tmp_path / "missing.json") == []


def test_the_page_opens_on_the_fastest_call() -> None:
    prof = load_trace(DATA / "h200_decode_compiled.json.gz")
    walls = [call.wall_us for call in prof.calls]
    assert walls[0] == max(walls)  # the profiler's start-up
    opened = shown_call(prof)
    assert opened == 1  # not the last: of this trace, call 1 was the fastest
    assert min(walls) == walls[opened]
    page = _Page()
    page.feed(render_page(prof, title="decode"))
    assert json.loads(page.data)["open"] == opened
    assert f"showing call {opened}, the fastest call by host span" in "".join(page.text)


def _page_data(trace: str) -> tuple[dict[str, Any], str]:
    path = DATA / f"h200_{trace}.json.gz"
    text = render_page(load_trace(path), title=trace, trace=path)
    page = _Page()
    page.feed(text)
    return json.loads(page.data), text


def test_the_kernel_table_shows_names_as_every_output_does() -> None:
    # Trial report (B): the page showed raw names cut by CSS, "void at::native::vectorized_elementwise_kernel<8,
    # at::native::GeluCUDAKernelImpl(at::TensorIter...", so that add, fill and copy rows read alike.
    data, text = _page_data("decode_eager")
    strings = data["strings"]
    rows = [row for call in data["calls"] for row in call["kernels"]]
    for row in rows:
        assert strings[row[8]] == display_name(strings[row[5]])  # the cell; the whole name is its title
    shown = {strings[row[8]] for row in rows}
    assert len(shown) == len({strings[row[5]] for row in rows}) == 5  # add, tanh, mul, gemv, softmax
    assert not shown & {strings[row[5]] for row in rows}
    assert "text-overflow" not in text  # no name cut by the page either


@pytest.mark.parametrize(("trace", "modules"), [("geglu_eager", False), ("llama_forward_modules", True)])
def test_the_page_has_a_module_column_where_a_kernel_has_a_module(trace: str, modules: bool) -> None:
    # Trial report: on a trace recorded without modules (modules=False, most traces), the kernel
    # table's module column and the tip's module line were "-" for every kernel.
    # The flag the script draws them by (the browser tests read the table it draws).
    data, _ = _page_data(trace)
    prof = load_trace(DATA / f"h200_{trace}.json.gz")
    assert any(k.module for call in prof.calls for k in call.kernels) == modules
    assert data["modules"] is modules


@pytest.mark.parametrize("trace", ["decode_graphs", "geglu_compiled"])
def test_the_op_table_leaves_out_inductors_own_ranges(trace: str) -> None:
    # Trial report (C): the op table listed "## Call CompiledFxGraph <hash> ##" and a range per
    # Triton kernel as ops; the kernels' op is the compiled region, and so is the table's.
    _, text = _page_data(trace)
    ops = re.findall(r"<tr><td>([^<]*)</td><td>\d+</td>", text)
    assert any(op.startswith("Torch-Compiled Region") for op in ops)
    assert not [op for op in ops if op.startswith(("## ", "triton_"))]


def test_the_op_table_has_the_headers_and_note_of_kernelprof_show_ops() -> None:
    # Issue 32: the page said "device us (subtree)", `kernelprof show --ops` "device us", and
    # neither said the figures sum each op's occurrences in the call, its children included.
    _, text = _page_data("geglu_eager")
    assert "<p>(all: each op's occurrences in a call summed, its children included; " in text
    assert "device time: its kernels, memcpys and memsets)</p>" in text


def test_the_op_table_says_its_times_are_its_calls() -> None:
    # A trial: the page's call 1 and a failure's medians both read `cpu us (all)`, aten::clamp_min
    # 13.5 in one and 13.9 in the other.
    _, text = _page_data("geglu_eager")
    assert "<th>call 2 cpu us (all)</th><th>call 2 device us (all)</th></tr>" in text
    assert "median" not in text[text.index("<h2>Ops of call") : text.index('<script id="data"')]


@pytest.mark.parametrize(
    ("trace", "outer", "inner"),
    [("geglu_compiled", "Torch-Compiled Region: 2/0", "aten::mm"), ("geglu_eager", "aten::linear", "aten::matmul")],
)
def test_the_op_table_says_its_column_does_not_add_up(trace: str, outer: str, inner: str) -> None:
    # Trial: the compiled region's 224.4us and its aten::mm's 168.9us stood as peers, and nothing
    # above the table said an op's row holds the rows of the ops inside it.
    _, text = _page_data(trace)
    table = text[text.index("<h2>Ops of call") :]
    rows = dict(re.findall(r"<tr><td>([^<]*)</td><td>\d+</td><td>[^<]*</td><td>([^<]*)</td>", table))
    assert float(rows[outer]) >= float(rows[inner]) > 0
    assert table.startswith("<h2>Ops of call 2 (by device time, the ops inside each op included)</h2>")
    said = html.unescape(re.sub(r"<[^>]+>", "", table.split("<table>", 1)[0].split("</h2>", 1)[1]))
    assert said == (
        f"Each op's time includes the ops inside it ({outer} holds {inner}): "
        "an op and the ops inside it are rows alike, and the column does not add up."
    )


def test_the_page_shades_the_idle_spans_the_idle_share_counts() -> None:
    trace = DATA / "h200_geglu_eager.json.gz"
    prof = load_trace(trace)
    page = _Page()
    page.feed(render_page(prof, title="geglu", trace=trace))
    calls = json.loads(page.data)["calls"]
    for drawn, call in zip(calls, prof.calls, strict=True):
        assert drawn["idle"] == [[round(a, 3), round(b - a, 3)] for a, b in call.gpu_idle_spans]
        assert drawn["idle"][0][0] == 0.0  # the wait for the first kernel is idle time
        assert sum(d for _, d in drawn["idle"]) == pytest.approx(call.wall_us - call.gpu_busy_us, abs=0.01)
        assert len(drawn["copies"]) == len(call.memory_ops) == 2  # the two memsets are drawn


def _side_rows(side: str) -> list[tuple[str, str, str]]:
    """The side-by-side table's rows: (class, baseline cell, this run's cell), as text."""
    rows = re.findall(r'<tr class="(\w+)"><td>(.*?)</td><td>(.*?)</td></tr>', side)
    return [
        (cls, html.unescape(re.sub("<[^>]*>", "", a)), html.unescape(re.sub("<[^>]*>", "", b))) for cls, a, b in rows
    ]


def test_the_baseline_table_tells_a_fusion_as_the_text_diff_does() -> None:
    # Trial report (issue 32): the page put the baseline's mul and the run's fused Triton kernel on
    # one yellow row and the gelu on a red row of its own, with no legend and no "fused:" line: it
    # read as "mul was renamed", where the text diff says gelu + mul were fused into the Triton kernel.
    eager = [BaselineKernel.of(k) for k in load_trace(DATA / "h200_geglu_eager.json.gz").kernels]
    compiled = list(load_trace(DATA / "h200_geglu_compiled.json.gz").kernels)
    side = baseline_table(eager, compiled)
    told = render_diff(diff_kernels(eager, compiled, by=lambda k: (k.kind, k.family, display_name(k.name))))
    fused = [line for line in told if line.startswith("fused: ")]
    assert fused == ["fused: gelu (aten pointwise) + mul (aten pointwise) -> triton_poi_fused__unsafe_view_gelu_mul_0"]
    assert _told(side) == ["count changes: pointwise: 2 -> 1", *fused, *_unknown_dtype_line()]
    rows = _side_rows(side)
    assert [cls for cls, _, _ in rows] == ["same", "fus", "same", "fus", "add", "same"]
    triton = "triton_poi_fused__unsafe_view_gelu_mul_0"
    assert [b for cls, _, b in rows if cls == "fus"] == [f"fused into {triton}"] * 2
    assert ["GeluCUDAKernelImpl" in a for cls, a, _ in rows if cls == "fus"] == [True, False]
    assert [(a, b.endswith(triton)) for cls, a, b in rows if cls == "add"] == [("fuses gelu + mul", True)]
    legend = re.findall(r'<span class="(\w+)"><i></i>([^<]*)</span>', side)
    assert [cls for cls, _ in legend] == ["same", "add", "fus"]  # the colours the table has, each told
    assert dict(legend)["fus"] == "fused into a kernel of this run"
    # The reverse, compiled baseline and eager run: the Triton kernel split into the eager two.
    rows = _side_rows(baseline_table([BaselineKernel.of(k) for k in compiled], eager))
    assert [cls for cls, _, _ in rows] == ["same", "add", "same", "spl", "add", "same"]
    assert rows[3][2] == "split into gelu + mul"
    assert [a for cls, a, _ in rows if cls == "add"] == [f"part of {triton}"] * 2


def _told(side: str) -> list[str]:
    """The lines above a side-by-side table."""
    lines = re.search(r'<div class="told">(.*?)</div><div class="sidelegend">', side)
    assert lines
    return [html.unescape(line) for line in re.findall(r"<div>(.*?)</div>", lines.group(1))]


def _unknown_dtype_line() -> list[str]:
    return [
        "note: pointwise kernels of unknown dtype (?): 0 in the baseline, 1 in this run; left out of the dtype "
        "comparison (a limit of what is compared, not a change)"
    ]


def test_the_side_by_side_tells_every_line_the_text_diff_tells_above_its_kernels(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Trial report: a GEMM gone fp32 showed as one red and one green row, without the text diff's
    # `dtype changes: gemm: bf16 1 -> 0, fp32 0 -> 1`, the line that says it; and the heading read
    # `baseline (1 kernels)`.
    from pytest_kernelprof.cli import main

    bf16, fp32 = (DATA / f"h200_linear_{name}.json.gz" for name in ("eager", "fp32"))
    side = baseline_table([BaselineKernel.of(k) for k in load_trace(bf16).kernels], list(load_trace(fp32).kernels))
    assert _told(side) == ["dtype changes: gemm: bf16 1 -> 0, fp32 0 -> 1"]
    assert "<th>baseline (1 kernel)</th><th>this run (1 kernel)</th>" in side
    # Each of them, as `kernelprof diff` prints it (the lines before its kernels, after its figures).
    for a, b in ((bf16, fp32), (DATA / "h200_decode_eager.json.gz", DATA / "h200_decode_compiled.json.gz")):
        assert main(["diff", str(a), str(b)]) == 1
        out = capsys.readouterr().out.splitlines()
        told = [line for line in out if line.startswith(("count changes: ", "dtype changes: "))]
        told += [line for line in out if line.startswith(("fused: ", "split: ", "note: "))]
        # The note names each side, as the page names them.
        told = [line.replace(" in a, ", " in the baseline, ").replace(" in b;", " in this run;") for line in told]
        side = baseline_table([BaselineKernel.of(k) for k in load_trace(a).kernels], list(load_trace(b).kernels))
        assert told
        assert _told(side) == told
    assert "<th>baseline (49 kernels)</th><th>this run (24 kernels)</th>" in side


def test_a_kernel_whose_dtype_moved_tells_it_under_its_row_as_the_text_diff_does() -> None:
    # A trial: the page showed the bf16 -> fp32 Inductor kernel as a changed row without the
    # `dtype: ...` line that `kernelprof diff` and the baseline failure print under it.
    bf16 = list(load_trace(DATA / "h100_inductor_geglu_bf16.json.gz").kernels)
    fp32 = list(load_trace(DATA / "h100_inductor_geglu_fp32.json.gz").kernels)
    side = baseline_table(bf16, fp32)
    rows = re.findall(r'<tr class="chg">(.*?)</tr>', side)
    assert len(rows) == 1
    assert "triton_poi_fused_gelu_mul_0" in rows[0]
    assert '<div class="why">dtype: bf16 in the baseline, fp32 in this run</div>' in rows[0]
    text = render_diff(diff_kernels(bf16, fp32), "the baseline", "this run")
    assert "    dtype: bf16 in the baseline, fp32 in this run" in text


def test_each_row_reads_as_the_text_diffs_line_for_its_kernel() -> None:
    # Trial report: the rows said `pointwise/aten bf16 at::native::...` where `kernelprof diff` and
    # the baseline failure say `- pointwise/aten bf16 [gelu]  at::native::...`: no layout, and no
    # sign of which ops the fused Triton kernel took over.
    eager = [BaselineKernel.of(k) for k in load_trace(DATA / "h200_geglu_eager.json.gz").kernels]
    compiled = list(load_trace(DATA / "h200_geglu_compiled.json.gz").kernels)
    for before, after in ((eager, compiled), (compiled, eager)):
        diff = diff_kernels(before, after, by=lambda k: (k.kind, k.family, display_name(k.name)))  # as the page aligns
        lines = render_diff(diff, "baseline", "this run")
        told = [line[2:] for line in lines if line[:2] in ("= ", "- ", "+ ", "~ ")]
        rows = _side_rows(baseline_table(before, after))
        # Each kernel's cell is its line of the text diff without the mark, in the same order.
        assert [b if cls in ("same", "add") else a for cls, a, b in rows] == told
        assert all(a == b for cls, a, b in rows if cls == "same")
    rows = _side_rows(baseline_table(eager, compiled))
    gemm = "gemm/nvjet bf16 tn  nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"
    assert rows[0] == ("same", gemm, gemm)
    triton = "triton_poi_fused__unsafe_view_gelu_mul_0"
    gelu = "pointwise/aten bf16 [gelu]  at::native::vectorized_elementwise_kernel<8, GeluCUDAKernelImpl(...), "
    gelu += "array<char*, 2ul> >"
    assert rows[1] == ("fus", gelu, f"fused into {triton}")
    assert rows[3][1].startswith("pointwise/aten bf16 [mul]  at::native::")
    fused = f"pointwise/inductor ? [gelu,mul]  {triton}"
    assert rows[4] == ("add", "fuses gelu + mul", fused)
    split = _side_rows(baseline_table([BaselineKernel.of(k) for k in compiled], eager))
    assert split[3] == ("spl", fused, "split into gelu + mul")


def test_the_baseline_table_keeps_names_as_text() -> None:
    # Each name reaches the table as text, in its cells, its "fused:" line and its "fused into" notes.
    eager = [BaselineKernel.of(k) for k in load_trace(DATA / "h200_geglu_eager.json.gz").kernels]
    compiled = load_trace(DATA / "h200_geglu_compiled.json.gz").kernels
    hostile = [replace(k, name=HOSTILE_KERNELS[i % len(HOSTILE_KERNELS)]) for i, k in enumerate(compiled)]
    side = baseline_table(eager, hostile)
    page = _Page()
    page.feed(side)
    assert set(page.tags) <= {"div", "span", "i", "table", "thead", "tbody", "tr", "th", "td"}
    text = "".join(page.text)
    fused = display_name(hostile[2].name)
    assert f"fused: gelu (aten pointwise) + mul (aten pointwise) -> {fused}" in text
    assert text.count(f"fused into {fused}") == 2
    assert all(display_name(k.name) in text for k in hostile)


def test_a_cpu_only_page_says_nothing_was_measured() -> None:
    # Trial: a CPU profile's page said "3 calls on no GPU named" above "0 kernels" and "none":
    # read as measured nothing happening, where show says "no GPU activity in this trace".
    prof = load_trace(DATA / "cpu_torch2.13.0_calls.json.gz")
    assert not prof.has_device_activity
    page = _Page()
    page.feed(render_page(prof, title="cpu", trace=DATA / "cpu_torch2.13.0_calls.json.gz"))
    data = json.loads(page.data)
    assert data["measured"] is False
    head = "".join(page.text)
    assert "3 calls, CPU only (no GPU activity recorded); source " in head
    assert "no GPU named" not in head
    assert "Ops of call 2" in head  # what a CPU profile does tell stays
    assert [call["wall"] for call in data["calls"]] == [round(call.wall_us, 3) for call in prof.calls]
    assert _page_data("geglu_eager")[0]["measured"] is True


def test_the_idle_share_the_page_says_is_the_text_outputs(tmp_path: Path) -> None:
    # Trial: 2.6us of work in a 1336.4us host span read "idle 100%"; the page's note said "100% of
    # the span", worked out by its script, where the text outputs now say ">99%".
    prof = load_trace(DATA / "h200_matmul_add_compiled.json.gz")
    page = _Page()
    page.feed(render_page(prof, title="matmul"))
    calls = json.loads(page.data)["calls"]
    assert [call["idle_share"] for call in calls] == [">99%", "99%", "98%"]
    assert "Math.round(100*" not in render_page(prof, title="matmul")  # no rule of its own


def test_the_page_names_its_source_from_the_working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `kernelprof show --html` has no rootdir: a path under the working folder is named from it,
    # as the plugin's pages name theirs from the rootdir; another stays whole.
    prof = load_trace(DATA / "h200_geglu_eager.json.gz")
    monkeypatch.chdir(DATA.parent)
    assert "; source data/h200_geglu_eager.json.gz" in render_page(prof, title="here")
    monkeypatch.chdir(tmp_path)
    assert f"; source {DATA / 'h200_geglu_eager.json.gz'}" in render_page(prof, title="elsewhere")
    assert "; source x" in render_page(prof, title="shown", shown=lambda path: "x")


@pytest.mark.parametrize(
    "given",
    ["data/h200_geglu_eager.json.gz", "./data/h200_geglu_eager.json.gz", str(DATA / "h200_geglu_eager.json.gz")],
)
def test_a_page_titled_with_its_trace_names_the_file_once(given: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Trial: `kernelprof show TRACE --html` titles the page with the trace's path, and the line
    # under the heading said "; source TRACE" again.
    monkeypatch.chdir(DATA.parent)
    text = render_page(load_trace(given), title=given)
    heading = re.search("<h1>(.*)</h1><div>(.*)</div>", text)
    assert heading is not None
    assert heading[1] == given
    assert heading[2].startswith("3 calls on NVIDIA H200 (sm90); showing call ")
    assert "json.gz" not in heading[2]


def test_a_cpu_only_op_table_is_by_cpu_time_without_a_device_column() -> None:
    # Trial: a CPU profile's op table was headed "by device time" over a device column of "-",
    # its rows in no visible order.
    prof = load_trace(DATA / "cpu_torch2.13.0_step.json.gz")
    text = render_page(prof, title="cpu")
    table = text[text.index("<h2>Ops of call") : text.index('<script id="data"')]
    assert table.startswith(
        f"<h2>Ops of call 2 (by CPU time, the ops inside each op included; device time {NOT_MEASURED})</h2>"
    )
    assert f'const NM="{NOT_MEASURED}"' in text  # the words of the page's GPU sections
    assert "<thead><tr><th>op</th><th>count</th><th>call 2 cpu us (all)</th></tr></thead>" in table
    assert "device" not in table.split("</h2>", 1)[1]
    times = [float(cpu) for cpu in re.findall(r"<tr><td>[^<]*</td><td>\d+</td><td>([^<]*)</td></tr>", table)]
    assert len(times) == len(prof.calls[1].ops) > 10
    assert times == sorted(times, reverse=True)
    assert "(my_block holds aten::linear)" in table


@pytest.mark.parametrize("recorded", ["cpu_torch2.13.0_calls", "h200_geglu_compiled", "h100_liger_fused_linear_jsd"])
def test_the_ops_rows_are_the_op_tables_ops_of_the_call(recorded: str) -> None:
    # Trial report: a CPU-only trace's timeline was one empty line; the ops rows draw the call's ops,
    # each occurrence the op table counts once, none of the Inductor ranges it leaves out.
    path = DATA / f"{recorded}.json.gz"
    prof = load_trace(path)
    page = _Page()
    page.feed(render_page(prof, title=recorded, trace=path))
    data = json.loads(page.data)
    assert "op_times" not in data
    call = data["calls"][data["open"]]
    ops = prof.calls[data["open"]].ops
    table = {name for name in ops.names if not is_inductors_range(ops[name])}
    strings = data["strings"]
    drawn = [strings[bar[3]] for bar in call["ops"] if bar[4] == 1]
    assert drawn
    assert set(drawn) <= table
    lane = dict(zip(LANE_KEYS, call["op_lane"], strict=True))
    told = len(drawn) + lane["merged"] + lane["deeper"] + lane["threads"]
    assert told == sum(ops[name].count for name in table)
    assert lane["rows"] == 1 + max(bar[2] for bar in call["ops"])
    # Each bar within the call's time, where the page draws the call's kernels.
    assert all(bar[0] >= 0 and bar[0] + bar[1] <= call["wall"] * 1.02 for bar in call["ops"])
    if recorded == "h200_geglu_compiled":
        assert any(is_inductors_range(ops[name]) for name in ops.names)  # left out, as the op table leaves them


def test_a_page_without_its_trace_says_it_has_no_op_times() -> None:
    prof = load_trace(DATA / "cpu_torch2.13.0_calls.json.gz")
    page = _Page()
    page.feed(render_page(prof, title="cpu"))
    data = json.loads(page.data)
    assert data["op_times"] == "the page was written without the trace file, which holds the ops' times"
    assert all(call["ops"] == [] for call in data["calls"])


def test_the_page_says_what_its_tables_evidence_marks_mean(capsys: pytest.CaptureFixture[str]) -> None:
    # The page's kernel table shows "reduction (ir)" as show's does: the key line show prints under
    # its table is under the page's figures too.
    from pytest_kernelprof.cli import main

    path = DATA / "h100_user_triton.json.gz"
    page = _Page()
    page.feed(render_page(load_trace(path), title="triton", trace=path))
    assert main(["show", str(path)]) == 0
    key = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("(ir): "))
    assert json.loads(page.data)["kernel_notes"] == [key]


@pytest.mark.parametrize("trace", ["h200_geglu_compiled", "h200_sync_item_stacks", "cpu_torch2.13.0_calls"])
def test_each_call_leads_with_the_figures_kernelprof_show_gives_it(
    trace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # A trial: the page gave neither the call's figures nor the memsets its timeline marks, nor why
    # an Inductor kernel's dtype reads "?", all of which `kernelprof show` prints.
    from pytest_kernelprof.cli import main

    path = DATA / f"{trace}.json.gz"
    page = _Page()
    page.feed(render_page(load_trace(path), title=trace, trace=path))
    data = json.loads(page.data)
    assert main(["show", "--calls", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    starts = [i for i, line in enumerate(out) if re.match(r"call \d+( \(the fastest call by host span\))?:$", line)]
    assert len(starts) == len(data["calls"]) == 3
    for call, start, end in zip(data["calls"], starts, [*starts[1:], len(out)], strict=True):
        block = "\n".join(out[start:end])
        assert call["figures"][0] in block  # show's line of that call, word for word
        if data["measured"]:
            memory = next(line for line in block.splitlines() if line.startswith("memory ops in call "))
            assert call["figures"][1] == memory  # its memory ops, as show names them
            # Its count of host syncs and the fixes show prints (a trial: a failed test's page had neither).
            assert re.search(r", (no host syncs|\d+ host syncs?)$", call["figures"][0])
            # show --calls says each fix once, under the first call that needs it; the page, each call's.
            fixes = [line for line in block.splitlines() if line.startswith("to fix: ")]
            assert set(fixes) <= set(call["figures"][2:])
        else:
            assert call["figures"] == [
                "host span " + block.split("host span ")[1].split(";")[0] + "; no GPU activity recorded"
            ]
    if trace == "h200_sync_item_stacks":
        for call in data["calls"]:
            assert call["figures"][0].endswith(", 1 host sync")
            assert call["figures"][2].startswith("to fix: the host read a GPU value")
    note = next((line for line in out if line.startswith("dtype ?:")), None)
    key = next((line for line in out if line.startswith("(op): ")), None)  # show's key of its marks
    assert data["kernel_notes"] == [line for line in (key, note) if line]
    assert (key is not None) == (trace == "h200_sync_item_stacks")  # its addmm's bias, from the op
    assert (note is not None) == (trace == "h200_geglu_compiled")
