"""The timeline page in a real browser: headless Chromium (the system package) loads the
page that ``kernelprof show TRACE --html`` writes and runs its script; the script writes
what it drew into the page, which ``--dump-dom`` shows. Skips where Chromium is missing
(``.ci/browser`` installs it).

Also a synthetic 10,000-kernel profile, every kernel drawn. How fast is printed, not asserted:
a wall-clock bound in a unit test fails on a loaded machine and says nothing on a fast one.
"""

from __future__ import annotations

import gzip
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.baseline.signature import BaselineKernel
from pytest_kernelprof.model.kernels import KERNEL_CELLS, kernel_cells
from pytest_kernelprof.model.records import copy_cells, copy_table, sync_cells, sync_table
from pytest_kernelprof.reports.timeline import baseline_table, render_page, shown_call
from pytest_kernelprof.tables import display_name, format_share, format_us
from tests.helpers import DATA

BROWSER = next(
    (found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))), None
)
needs_browser = pytest.mark.skipif(BROWSER is None, reason="no Chromium on this machine (.ci/browser installs it)")


def synthetic_trace(
    path: Path, kernels: int, streams: int = 2, names: Sequence[str] = (), ops: Sequence[str] = ()
) -> Path:
    """A Chrome trace of one profiled call with ``kernels`` kernels, as Kineto writes them;
    ``names`` and ``ops``, where given, name the kernels and their ops in turn."""
    events = [
        {
            "ph": "X",
            "cat": "user_annotation",
            "name": "ProfilerStep#0",
            "pid": 1,
            "tid": 1,
            "ts": 1000.0,
            "dur": 20.0 * kernels + 100,
            "args": {"External id": 1},
        },
    ]
    kinds = list(names) or [
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int)",
        "triton_poi_fused_add_mul_0",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
        "void at::native::reduce_kernel<512, 1>(float)",
    ]
    for i in range(kernels):
        t = 1010.0 + 20.0 * i
        corr, ext = 10 + i, 2 + i
        events.append(
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": ops[i % len(ops)] if ops else f"aten::op{i % 7}",
                "pid": 1,
                "tid": 1,
                "ts": t,
                "dur": 6.0,
                "args": {"External id": ext},
            }
        )
        events.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "pid": 1,
                "tid": 1,
                "ts": t + 1,
                "dur": 4.0,
                "args": {"External id": ext, "correlation": corr},
            }
        )
        events.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": kinds[i % len(kinds)],
                "pid": 0,
                "tid": 7,
                "ts": t + 8,
                "dur": 9.0 + i % 5,
                "args": {
                    "External id": ext,
                    "device": 0,
                    "stream": 7 + 2 * (i % streams),
                    "correlation": corr,
                    "grid": [1, 1, 1],
                    "block": [128, 1, 1],
                },
            }
        )
    path.write_bytes(gzip.compress(json.dumps({"traceEvents": events}, indent=1).encode()))
    return path


def show_html(trace: Path, out: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pytest_kernelprof", "show", str(trace), "--html", str(out)],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def browser(*args: str) -> str:
    assert BROWSER is not None
    # A profile folder of its own: two Chromiums at once (xdist workers) on the default one
    # share its lock, and one of them could come back without the page.
    with tempfile.TemporaryDirectory(prefix="kernelprof-chromium-") as profile:
        command = [
            BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={profile}", *args,
        ]  # fmt: skip
        return subprocess.run(command, check=True, capture_output=True, text=True, timeout=120).stdout


def drawn(page: Path) -> dict[str, int]:
    """What the page's script says it drew, from the DOM after it ran (the body's
    ``data-drawn``), and the kernel shapes in that DOM (``shapes``: its SVG rects of class ``k``)."""
    # The virtual time budget lets the page's next frame come before the DOM is dumped.
    dom = browser("--window-size=1400,900", "--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    found = re.search(r'<body data-drawn="([^"]*)"', dom)
    assert found, "the script did not finish drawing:\n" + dom[-2000:]
    counts: dict[str, int] = json.loads(html.unescape(found.group(1)))
    counts["shapes"] = len(re.findall(r'<rect class="k"[^>]* width="[0-9.]+"', dom))
    return counts


@needs_browser
def test_a_recorded_trace_is_drawn_one_shape_per_kernel(tmp_path: Path) -> None:
    trace = DATA / "h200_sync_item_stacks.json.gz"
    page = tmp_path / "timeline.html"
    show_html(trace, page)
    prof = load_trace(trace)
    # The page opens on the fastest call by host span, not on call 0 (the profiler's start-up).
    opened = shown_call(prof)
    assert opened == 2
    assert f"showing call {opened}, the fastest call by host span" in page.read_text()
    call = prof.calls[opened]
    counts = drawn(page)
    assert counts["kernels"] == counts["shapes"] == len(call.kernels) == 18
    assert counts["lanes"] == 1 + len({k.stream for k in call.kernels})  # host + streams
    assert counts["launches"] == call.launches
    assert counts["syncs"] == len(call.syncs) == 1
    assert counts["dtoh"] == 1
    assert counts["gaps"] > 0
    # No assertion on "painted_ms": it comes a frame later, which a loaded machine's headless
    # browser may not reach within its virtual time (a clean-clone CI run failed on it once).
    # Hover: the tip names the kernel, as every output shows it, its op and duration.
    kernel = call.kernels[1]
    dom = browser("--virtual-time-budget=5000", "--dump-dom", page.as_uri() + "#hover=1")
    assert "drawn:" not in dom  # what was drawn is for the tests and the console, not the reader
    tip = re.search(r'<div id="tip"[^>]*>([^<]*)</div>', dom)
    assert tip, dom[-2000:]
    text = html.unescape(tip.group(1))
    assert text.splitlines()[0] == display_name(kernel.name) != kernel.name
    assert f"duration: {round(kernel.duration_us, 3)} us" in text
    assert f"op: {kernel.op}" in text
    assert "module:" not in text  # recorded without modules: a line of "-" on every kernel told nothing
    # The picture for the closing note and the docs.
    shot = Path(os.environ.get("KERNELPROF_SCREENSHOT_DIR", tmp_path)) / "timeline.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    browser("--window-size=1400,900", f"--screenshot={shot}", page.as_uri())
    assert shot.stat().st_size > 10_000


@needs_browser
def test_ten_thousand_kernels_are_each_drawn(tmp_path: Path) -> None:
    trace = synthetic_trace(tmp_path / "big.json.gz", 10_000)
    page = tmp_path / "big.html"
    show_html(trace, page)
    started = time.perf_counter()
    counts = drawn(page)
    wall = time.perf_counter() - started
    assert counts["kernels"] == counts["shapes"] == 10_000
    assert counts["launches"] == 10_000
    assert counts["lanes"] == 3
    print(
        f"10,000 kernels: page {page.stat().st_size / 1e6:.2f} MB, drawn in {counts['ms']} ms, "
        f"script total {counts['total_ms']} ms, first frame after {counts.get('painted_ms', '(not reached)')} ms, "
        f"browser wall {wall:.2f} s"
    )


# Names a trace can hold that must reach the page as text: each would run a script, end the
# page's own script or be taken for one of the page's placeholders if pasted into it raw.
# (No double quote in a payload: the JSON block would escape it and spoil the payload.)
PWNED = "document.body.setAttribute('data-pwned','{}')"
HOSTILE_KERNELS = (
    "<!--<script>",
    f"</script><script>{PWNED.format(1)}</script>",
    f"<img src=x onerror={PWNED.format(2)}>",
    f"'\"><svg onload={PWNED.format(3)}>",
    "%DATA% %TITLE% %OPS% &amp; \u2028 \u2029 end",
)
HOSTILE_OPS = ("%DATA%", f"<img src=y onerror={PWNED.format(4)}>", "aten::mm")


@needs_browser
def test_hostile_names_reach_the_page_as_text(tmp_path: Path) -> None:
    """Kernel and op names, and a trace path, that would inject markup or script: the script
    runs, draws every kernel, and shows each name as it is; nothing they carry runs."""
    folder = tmp_path / "%DATA%<b>%TITLE%"
    folder.mkdir()
    trace = synthetic_trace(folder / "t.json.gz", 10, names=HOSTILE_KERNELS, ops=HOSTILE_OPS)
    page = tmp_path / "page.html"
    show_html(trace, page)
    counts = drawn(page)
    assert counts["kernels"] == counts["shapes"] == 10
    dom = browser("--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    # The serialized DOM escapes "<" in text but not in attribute values (the table's titles).
    tags = re.sub(r'="[^"]*"', '=""', dom)
    body = re.search(r"<body[^>]*>", tags)
    assert body
    assert "data-pwned" not in body.group(0)
    assert "<img" not in tags
    assert "<svg onload" not in tags
    heading = re.search(r"<h1>(.*?)</h1>", dom, re.S)
    assert heading
    assert html.unescape(heading.group(1)) == str(trace)
    # The kernel table, drawn by the script: each name as every output shows it, whole in its title.
    cells = re.findall(r'<td class="n" title="([^"]*)">(.*?)</td>', dom, re.S)
    names = [HOSTILE_KERNELS[i % len(HOSTILE_KERNELS)] for i in range(10)]
    assert [html.unescape(shown) for _, shown in cells] == [display_name(name) for name in names]
    assert [html.unescape(title) for title, _ in cells] == names
    for index, name in enumerate(HOSTILE_KERNELS):
        hovered = browser("--virtual-time-budget=5000", "--dump-dom", page.as_uri() + f"#hover={index}")
        tip = re.search(r'<div id="tip"[^>]*>(.*?)</div>', hovered, re.S)
        assert tip, hovered[-2000:]
        lines = html.unescape(tip.group(1)).split("\n")
        assert lines[0] == display_name(name)
        assert f"op: {HOSTILE_OPS[index % len(HOSTILE_OPS)]}" in lines


def note_lines(dom: str) -> list[str]:
    """The items of the note under the timeline, as text."""
    note = re.search(r'<div id="note">(.*?)</div>', dom, re.S)
    assert note, dom[-2000:]
    return [html.unescape(item) for item in re.findall(r"<li>([^<]*)</li>", note.group(1))]


_PATH_PART = re.compile(r"M(?P<x>[0-9.]+) [0-9.]+h(?P<w>[0-9.]+)")


@needs_browser
def test_the_shading_is_the_idle_time_the_idle_share_counts(tmp_path: Path) -> None:
    """The eager GeGLU MLP's fastest call: 30% of its 162 us host span idle, nearly all of it the
    wait for the first kernel. The page shades exactly those stretches, the first one from 0,
    none past the host span's end (kernels run on after it), marks that end, and says so."""
    trace = DATA / "h200_geglu_eager.json.gz"
    page = tmp_path / "geglu.html"
    show_html(trace, page)
    call = load_trace(trace).calls[shown_call(load_trace(trace))]
    spans = call.gpu_idle_spans
    assert spans[0][0] == 0.0
    assert spans[0][1] > 35  # the wait for the first kernel (and a memset)
    assert max(k.start_us or 0.0 for k in call.kernels) > call.wall_us  # work past the host span
    counts = drawn(page)
    assert counts["gaps"] == len(spans)
    assert counts["idle_us"] == pytest.approx(call.wall_us - call.gpu_busy_us, abs=0.01)
    dom = browser("--window-size=1400,900", "--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    path = re.search(r'<path class="gap" d="([^"]*)"', dom)
    end = re.search(r'<rect class="spanend"[^>]* x="([0-9.]+)"', dom)
    bar = re.search(r'<rect class="span"[^>]* x="([0-9.]+)" width="([0-9.]+)"', dom)
    assert path, dom[-2000:]
    assert end, dom[-2000:]
    assert bar, dom[-2000:]
    parts = [(float(m["x"]), float(m["w"])) for m in _PATH_PART.finditer(path.group(1))]
    start, span_end = float(bar.group(1)), float(end.group(1))
    assert span_end == pytest.approx(start + float(bar.group(2)), abs=0.2)  # the bar is the host span
    pixels = (span_end - start) / call.wall_us
    assert parts[0][0] == start  # shaded from the call's start
    assert max(x + w for x, w in parts) <= span_end + 0.2  # and never past the host span's end
    for (x, w), (a, b) in zip(parts, spans, strict=True):
        assert x == pytest.approx(start + a * pixels, abs=0.2)
        assert w == pytest.approx((b - a) * pixels, abs=0.2)
    said = " ".join(note_lines(dom))
    assert f"{format_share(call.gpu_idle_fraction)} of the span" in said
    assert "the wait for the first kernel included" in said
    assert "ran after the host returned: it is not idle time" in said
    shot = Path(os.environ.get("KERNELPROF_SCREENSHOT_DIR", tmp_path)) / "timeline_idle.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    browser("--window-size=1400,900", f"--screenshot={shot}", page.as_uri())
    assert shot.stat().st_size > 10_000


@needs_browser
@pytest.mark.parametrize(
    ("recorded", "helpers", "modules"),
    [
        ("h200_geglu_eager", False, False),
        ("h200_bf16_mlp_fp32_linear", True, False),
        ("h200_llama_forward_modules", False, True),
    ],
)
def test_the_kernel_table_has_the_columns_and_decimals_of_every_kernel_table(
    tmp_path: Path, recorded: str, helpers: bool, modules: bool
) -> None:
    # Trial reports: the page merged kind and family ("gemm/nvjet"), had no dtype, and gave times
    # to three decimals (56.448) where every other table gives one (56.4); it had no "part of"
    # column where the text tables have one (a call with cuBLAS's helper kernels); a trace
    # recorded without modules (modules=False, most are) had a module column of "-" only.
    trace = DATA / f"{recorded}.json.gz"
    page = tmp_path / "timeline.html"
    show_html(trace, page)
    prof = load_trace(trace)
    call = prof.calls[shown_call(prof)]
    dom = browser("--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    table = re.search(r'<div id="kt">(.*?)</table>', dom, re.S)
    assert table, dom[-2000:]
    heads = re.findall(r"<th>([^<]*)</th>", table.group(1))
    part_of = ["part of"] if helpers else []
    columns = ["kind", *part_of, *KERNEL_CELLS[1:]]
    module = ["module"] if modules else []
    # The call's own times, named as kernelprof show names them (its "call 1 us").
    assert heads == ["#", "start us", f"call {call.index} us", "stream", *columns, "launched by", *module, "name"]
    rows = [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in re.findall(r"<tr><td>.*?</tr>", table.group(1))]
    assert len(rows) == len(call.kernels) > 0
    assert any(k.part_of for k in call.kernels) == helpers
    assert any(k.module for k in call.kernels) == modules
    for row, kernel in zip(rows, call.kernels, strict=True):
        assert row[1] == format_us(kernel.start_us or 0.0)
        assert row[2] == format_us(kernel.duration_us)
        if helpers:  # the text tables' order: kind, part of, then the rest
            assert row[5] == (kernel.part_of or "-")
            del row[5]
        assert tuple(row[4:9]) == kernel_cells(kernel)
        assert html.unescape(row[9]) == kernel.op
        assert [html.unescape(cell) for cell in row[10:-1]] == ([kernel.module or "-"] if modules else [])
        assert html.unescape(row[-1]) == display_name(kernel.name)
    if modules:  # the tip names the module too, where the table has the column
        dom = browser("--virtual-time-budget=5000", "--dump-dom", page.as_uri() + "#hover=1")
        tip = re.search(r'<div id="tip"[^>]*>([^<]*)</div>', dom)
        assert tip, dom[-2000:]
        assert f"module: {call.kernels[1].module}" in html.unescape(tip.group(1)).splitlines()


@needs_browser
def test_the_page_has_the_syncs_and_copies_of_kernelprof_show_and_names_its_call(tmp_path: Path) -> None:
    # Trial report: the page had no sync or copy table (show has both), its "Kernels" heading
    # named no call, its picker read "1 kernels", a kernel of no module had a blank cell (now no
    # module column: the trace was recorded without modules), and the
    # idle figure had three decimals where every table has one.
    trace = DATA / "h200_copy_dtoh_pageable_nonblocking.json.gz"
    page = tmp_path / "copy.html"
    show_html(trace, page)
    prof = load_trace(trace)
    call = prof.calls[shown_call(prof)]
    dom = browser("--virtual-time-budget=5000", "--dump-dom", page.as_uri())

    def cells(div: str) -> list[list[str]]:
        found = re.search(rf'<div id="{div}">(.*?)</div>', dom, re.S)
        assert found, dom[-2000:]
        return [
            [html.unescape(cell) for cell in re.findall(r"<td>([^<]*)</td>", row)[1:]]
            for row in re.findall(r"<tr><td>.*?</tr>", found.group(1))
        ]

    assert cells("st") == [list(sync_cells(s)) for s in call.syncs] != []
    assert cells("ct") == [list(copy_cells(m)) for m in call.copies] != []
    # Their time columns name the call, as kernelprof show's do: one header per meaning.
    for div, header in (("st", sync_table), ("ct", copy_table)):
        found = re.search(rf'<div id="{div}">(.*?)</thead>', dom, re.S)
        assert found, dom[-2000:]
        shown = [html.unescape(cell) for cell in re.findall(r"<th>([^<]*)</th>", found.group(1))]
        assert shown == re.split("  +", header([], call=call.index))  # the text table's header, cell for cell

    assert f'<h2 id="kh">Kernels of call {call.index} (its own times)</h2>' in dom
    assert f">{call.index} (1 kernel, the fastest call)</option>" in dom
    kernel_row = re.search(r"<div id=\"kt\">.*?<tbody><tr>(.*?)</tr>", dom, re.S)
    assert kernel_row
    cells = [html.unescape(cell) for cell in re.findall(r"<td[^>]*>([^<]*)</td>", kernel_row.group(1))]
    assert cells[9:] == [call.kernels[0].op or "-", display_name(call.kernels[0].name)]  # no module cell
    said = " ".join(note_lines(dom))
    assert re.search(r"Idle within the host span: \d+\.\d us, ", said), said


@needs_browser
@pytest.mark.parametrize("fastest", [True, False])
def test_the_note_under_the_timeline_is_short_sentences(tmp_path: Path, fastest: bool) -> None:
    # Trial report (issue 32): the note was one sentence of about 70 words.
    trace = DATA / "h200_geglu_eager.json.gz"
    page = tmp_path / "geglu.html"
    show_html(trace, page)
    prof = load_trace(trace)
    opened = shown_call(prof)
    other = 0 if opened else 1
    if not fastest:  # another call picked: the note says whose figures the text outputs give
        text = page.read_text(encoding="utf-8")
        page.write_text(text.replace("let call=D.open||0", f"let call={other}", 1), encoding="utf-8")
    lines = note_lines(browser("--virtual-time-budget=5000", "--dump-dom", page.as_uri()))
    assert len(lines) >= 5
    sentences = [s for line in lines for s in re.split(r"(?<=\.) ", line)]
    assert max(len(s.split()) for s in sentences) <= 20, sentences
    call = prof.calls[opened if fastest else other]
    assert (
        lines[0]
        == f"Shaded: the GPU's idle time within the host span of call {call.index} (0 to {call.wall_us:.1f} us)."
    )
    said = " ".join(lines)
    assert ("This is the fastest call by host span" in said) == fastest
    assert (f"the per-call figures of call {opened}, the fastest call by host span" in said) == (not fastest)


def laid_out(page: Path, width: int, cells: str = "#kt td.n") -> dict[str, float]:
    """Where the ``cells`` (a CSS selector; the kernel table's name cells) land in a window
    ``width`` pixels wide."""
    layout: dict[str, float] = measured(
        page,
        width,
        "{const W=document.documentElement.clientWidth,"
        f'r=[...document.querySelectorAll("{cells}")].map(e=>e.getBoundingClientRect());'
        "return {width:W,cells:r.length,"
        "right:Math.max(...r.map(b=>b.right)),narrowest:Math.min(...r.map(b=>b.width))}}",
    )
    return layout


def measured(page: Path, width: int, body: str) -> dict[str, object]:
    """What the function ``body`` returns, as JSON, in a window ``width`` pixels wide: a copy of
    the page runs it after its own script has drawn, into the body's ``data-layout``."""
    measure = f"<script>document.body.dataset.layout=JSON.stringify((()=>{body})())</script>"
    copy = page.with_name("measured-" + page.name)
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", measure + "</body>"), encoding="utf-8")
    dom = browser(f"--window-size={width},900", "--virtual-time-budget=5000", "--dump-dom", copy.as_uri())
    found = re.search(r'data-layout="([^"]*)"', dom)
    assert found, dom[-2000:]
    layout: dict[str, object] = json.loads(html.unescape(found.group(1)))
    return layout


# What the host lane shows, as a reader sees it: the element on top at the middle of the host span's
# line and of its end line, their colours, the svg's right edge, and the legend's entries.
_HOST_LANE = """{const q=s=>document.querySelector(s),box=e=>e.getBoundingClientRect(),
 top=e=>{const b=box(e),t=document.elementFromPoint(b.x+b.width/2,b.y+b.height/2);return t&&t.getAttribute("class")};
 const end=q("rect.spanend"),span=q("rect.span"),launch=q("path.launch");
 return {svg_right:box(q("#tl")).right,end_right:box(end).right,end_top:top(end),end_fill:getComputedStyle(end).fill,
  end_opacity:getComputedStyle(end).opacity,span_top:top(span),span_height:box(span).height,
  launch_fill:launch&&getComputedStyle(launch).fill,
  legend:[...document.querySelectorAll("#legend span")].map(
   s=>[s.textContent,getComputedStyle(s.querySelector("i")).backgroundColor])}}"""


@needs_browser
def test_the_host_lane_is_drawn_as_its_legend_and_note_say(tmp_path: Path) -> None:
    # Trial report: on the DtoH copy's page the host span's end fell at the timeline's right edge,
    # out of view, and the red line where the host sync ended read as the end; the note said "the
    # dark bar on the host lane" of a thin line that the sync's bar hid; the grey launch boxes had
    # no legend entry.
    trace = DATA / "h200_copy_dtoh_pageable_nonblocking.json.gz"
    call = load_trace(trace).fastest_call
    assert call.syncs[0].start_us + call.syncs[0].duration_us < call.wall_us  # its red line: not the end
    page = tmp_path / "copy.html"
    show_html(trace, page)
    lane = measured(page, 1400, _HOST_LANE)
    dark = "rgb(51, 51, 51)"
    assert lane["end_right"] < lane["svg_right"] - 2, lane  # in view
    assert (lane["end_top"], lane["end_fill"], lane["end_opacity"]) == ("spanend", dark, "1"), lane
    # The span: a thin dark line, on top where a sync's bar lies under it, as the note says.
    assert (lane["span_top"], lane["span_height"]) == ("span", 3), lane
    said = note_lines(browser("--virtual-time-budget=5000", "--dump-dom", page.as_uri()))
    span = "The span is the thin dark line at the host lane's foot; the dark vertical line marks its end."
    assert span in said
    legend = dict(lane["legend"])  # type: ignore[call-overload]
    assert legend["kernel launch (host)"] == lane["launch_fill"] == "rgb(85, 102, 119)"
    assert legend["host span"] == legend["its end"] == dark


LONG_NAMES = (
    "triton_poi_fused__unsafe_view_add_clone_div_exp_log_mul_neg_pow_rsqrt_sub_sum_tanh_view_where_zeros_like_0",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x",
)


@needs_browser
@pytest.mark.parametrize("recorded", ["h200_decode_compiled", "h200_bf16_mlp_fp32_linear", "long names"])
def test_kernel_names_are_readable_at_1400_pixels(tmp_path: Path, recorded: str) -> None:
    # Trial report (issue 32): at 1400 px the name column, the last, ran off the page (cuBLAS's
    # long template names kept it on one line) while the ops column took much of the width.
    trace = DATA / f"{recorded}.json.gz"
    if recorded == "long names":  # no break in a name, many fused ops, a long op name
        long_op = ["aten::a_very_long_operator_name_that_has_no_break_in_it_at_all.overload_name"]
        trace = synthetic_trace(tmp_path / "long.json.gz", 4, names=LONG_NAMES, ops=long_op)
    page = tmp_path / "page.html"
    show_html(trace, page)
    layout = laid_out(page, 1400)
    assert layout["cells"] > 0
    assert layout["right"] <= layout["width"], layout  # every name within the window
    assert layout["narrowest"] >= 250, layout  # and in a column wide enough to read


@needs_browser
def test_the_side_by_side_rows_wrap_at_1400_pixels(tmp_path: Path) -> None:
    # A row is the text diff's line: fused ops, layout and name, a long unbroken stretch on each
    # side of a renamed kernel. Both sides must stay within the window, each wide enough to read.
    trace = synthetic_trace(tmp_path / "long.json.gz", 4, names=LONG_NAMES)
    prof = load_trace(trace)
    stored = [BaselineKernel.of(replace(k, name=f"{k.name}_of_the_baseline_{'x' * 60}")) for k in prof.kernels]
    side = baseline_table(stored, list(prof.kernels))
    assert side.count('<tr class="chg">') == 4  # each kernel renamed: both cells of every row filled
    page = tmp_path / "page.html"
    page.write_text(render_page(prof, title="long names", baselines=[("baseline", side)]), encoding="utf-8")
    layout = laid_out(page, 1400, ".side td")
    assert layout["cells"] == 8
    assert layout["right"] <= layout["width"], layout
    assert layout["narrowest"] >= 400, layout


@needs_browser
def test_a_cpu_only_page_says_not_measured_where_it_said_none(tmp_path: Path) -> None:
    # Trial: a CPU profile's page read "1 (0 kernels, the median call)", an empty kernel table,
    # "Host syncs: none", "Copies: none" and a GPU-idle legend: nothing measured read as nothing done.
    page = tmp_path / "cpu.html"
    show_html(DATA / "cpu_torch2.13.0_calls.json.gz", page)
    dom = browser("--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    picker = re.findall(r"<option[^>]*>([^<]*)</option>", dom)
    assert picker == ["0", "1", "2 (the fastest call)"]
    not_measured = "not measured: no GPU activity in this profile"
    for div in ("kt", "st", "ct"):
        assert f'<div id="{div}">{not_measured}</div>' in dom
    assert '<h2 id="kh">Kernels of call 2</h2>' in dom
    legend = re.search(r'<div id="legend">(.*?)</div>', dom, re.S)
    assert legend
    assert re.findall(r"</i>([^<]*)</span>", legend.group(1)) == ["CPU op (a colour per name)", "host span", "its end"]
    said = " ".join(note_lines(dom))
    assert "No GPU activity was recorded in this profile" in said
    assert "idle" not in said.lower()


@needs_browser
def test_the_sentence_on_the_calls_own_tables_is_above_them_not_above_the_baseline(tmp_path: Path) -> None:
    # Trial report: "The tables below are this call's own" was the note's last line, directly above
    # the baseline and this run side by side, which is no table of the call.
    prof = load_trace(DATA / "h200_geglu_eager.json.gz")
    stored = [BaselineKernel.of(k) for k in load_trace(DATA / "h200_geglu_compiled.json.gz").kernels]
    side = baseline_table(stored, list(prof.kernels))
    page = tmp_path / "page.html"
    page.write_text(render_page(prof, title="baseline", baselines=[("baseline", side)]), encoding="utf-8")
    dom = browser("--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    assert not any("tables below" in line for line in note_lines(dom)), note_lines(dom)
    own = "<p id=\"own\">The tables below are this call's own. The profile's kernel table has each kernel's median"
    assert dom.index('class="side"') < dom.index(own) < dom.index('<h2 id="kh">'), dom[-3000:]
    assert re.search(r'<p id="own">[^<]*</p><h2 id="kh">', dom)  # directly above the kernel table


# Each x-axis label's overflow past the timeline's right edge, at widths of the timeline from 500 to
# 1390 pixels (the page's own place() lays the axis out again at each).
_TICKS = """{const tl=document.getElementById("tl"),cut=[];let labels=0;
 for(let w=500;w<1400;w+=10){tl.style.width=w+"px";place();const right=tl.getBoundingClientRect().right;
  for(const t of tl.querySelectorAll("text.ax")){labels++;const over=t.getBoundingClientRect().right-right;
   if(over>0.5)cut.push([w,t.textContent,over])}}
 return {labels:labels,cut:cut}}"""


@needs_browser
@pytest.mark.parametrize("recorded", ["h200_sync_item_stacks", "h200_geglu_compiled"])
def test_the_axis_labels_stay_inside_the_timeline(tmp_path: Path, recorded: str) -> None:
    # Trial report: the last tick's label ran past the right edge, cut (`160` of `160us`).
    page = tmp_path / "page.html"
    show_html(DATA / f"{recorded}.json.gz", page)
    ticks = measured(page, 1400, _TICKS)
    assert ticks["labels"], ticks
    assert ticks["cut"] == [], ticks


# The first widest op bar's place and width, and its label, before and after zooming in twofold.
_OP_ZOOM = """{const bars=[...document.querySelectorAll("#tl rect.op")],w=b=>+b.getAttribute("width"),
 b=bars.reduce((a,c)=>w(c)>w(a)?c:a),x=()=>+b.getAttribute("x"),at=[x(),w(b)];
 t1=t0+(t1-t0)/2;place();return {before:at,after:[x(),w(b)],index:bars.indexOf(b),
 labels:document.querySelectorAll("#tl text.olbl").length}}"""


@needs_browser
@pytest.mark.parametrize("recorded", ["cpu_torch2.13.0_calls", "h100_liger_fused_linear_jsd"])
def test_the_ops_rows_are_drawn_labelled_hovered_and_zoomed(tmp_path: Path, recorded: str) -> None:
    # Trial report: a CPU-only trace's timeline was a single empty line, nothing to look at.
    trace = DATA / f"{recorded}.json.gz"
    page = tmp_path / "page.html"
    show_html(trace, page)
    block = re.search(r'<script id="data" type="application/json">(.*?)</script>', page.read_text(encoding="utf-8"))
    assert block
    data = json.loads(block.group(1))
    bars, strings = data["calls"][data["open"]]["ops"], data["strings"]
    counts = drawn(page)
    assert counts["ops"] == len(bars) > 10
    assert counts["op_rows"] == 1 + max(bar[2] for bar in bars) >= 3
    assert counts["op_labels"] > 0
    dom = browser("--window-size=1400,900", "--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    assert len(re.findall(r'<rect class="op( merged)?"[^>]* width="[0-9.]+"', dom)) == len(bars)
    # Above the host lane: each bar's foot over the host lane's top.
    host = re.search(r'<rect class="span"[^>]* y="([0-9.]+)"', dom)
    assert host
    feet = [float(y) + float(h) for y, h in re.findall(r'<rect class="op[^"]*" y="([0-9.]+)" height="([0-9.]+)"', dom)]
    assert len(feet) == len(bars)
    assert max(feet) < float(host.group(1)) - 10
    said = " ".join(note_lines(dom))
    if data["measured"]:
        assert "The rows above the host lane are the call's CPU ops, one row per nesting depth." in said
    else:  # the CPU-only note stays true, and tells what there is
        assert "No GPU activity was recorded in this profile: it is CPU only, and nothing is shaded." in said
        assert "What there is: the call's CPU ops, in the rows above the host lane" in said
    # Zoomed in twofold, the widest bar is twice as wide, twice as far from the start; its label stays.
    zoom = measured(page, 1400, _OP_ZOOM)
    (x0, w0), (x1, w1) = zoom["before"], zoom["after"]  # type: ignore[misc]
    assert w1 == pytest.approx(2 * w0, abs=0.2)
    assert x1 - 90 == pytest.approx(2 * (x0 - 90), abs=0.2)  # 90: the lane labels' width
    assert zoom["labels"]
    # Hover: the whole name and the duration, as a kernel's.
    index = int(zoom["index"])  # type: ignore[call-overload]
    hovered = browser("--virtual-time-budget=5000", "--dump-dom", page.as_uri() + f"#op={index}")
    tip = re.search(r'<div id="tip"[^>]*>([^<]*)</div>', hovered)
    assert tip, hovered[-2000:]
    lines = html.unescape(tip.group(1)).splitlines()
    assert lines[0] == strings[bars[index][3]]
    assert lines[1] == f"duration: {bars[index][1]} us"
    shot = Path(os.environ.get("KERNELPROF_SCREENSHOT_DIR", tmp_path)) / f"timeline_ops_{recorded}.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    browser("--window-size=1400,1000", f"--screenshot={shot}", page.as_uri())
    assert shot.stat().st_size > 10_000


@needs_browser
def test_a_page_without_its_trace_says_its_ops_rows_have_no_times(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(render_page(load_trace(DATA / "cpu_torch2.13.0_calls.json.gz"), title="cpu"), encoding="utf-8")
    dom = browser("--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    said = note_lines(dom)
    assert "No ops rows: the page was written without the trace file, which holds the ops' times." in said
    assert said[0] == "No GPU activity was recorded in this profile: it is CPU only, and nothing is shaded."
    assert ">ops (no times)</text>" in dom
    assert '<rect class="op' not in dom


@needs_browser
def test_the_key_of_the_kernel_tables_marks_is_right_under_it(tmp_path: Path) -> None:
    # A trial found "(op): from the op that launched it" among the call's figures, above the
    # page's other lines and away from the table whose "bias (op)" it explains.
    page = tmp_path / "syncs.html"
    show_html(DATA / "h200_sync_item_stacks.json.gz", page)
    dom = browser("--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    under = re.search(r'<div id="kt">.*?</div><p id="kn"[^>]*>([^<]*)</p>', dom, re.S)
    assert under, dom[-2000:]
    assert under.group(1) == "(op): from the op that launched it"
    figures = re.search(r'<p id="fig"[^>]*>([^<]*)</p>', dom)
    assert figures
    assert "(op)" not in figures.group(1)
