"""How fast the explainer pages answer, in Chromium against the real server (issue 32).

For every explainer page and each of its main controls, at the control's default and near its largest value:
- drag: milliseconds from the input event (a pointer move, a step of a number, a click on a toggle or a button, a
  typed key) to the figure redrawn and painted, as the page's live engine records each redraw
  (window.__peLabLive.draws: input_at, painted_at);
- release: milliseconds from letting go (or the click) to the server's rerun finished and painted;
- server messages: websocket frames the page sent while a slider was dragged or words were typed, before the
  release (a step or a click sends its one message at once, as Streamlit does; those are not counted);
- first figure: seconds from opening the page's address in a new tab to its first Plotly figure painted, beside
  a one-chart Streamlit app this bench writes and starts itself (ONE_CHART_APP), both on a warm server, medians
  of REPEATS.
It ends with one line per page (PAGE is the file stem, home for the home page):

    PAGE: drag p95 N ms, release p95 M ms, server messages during drag K, first figure S s (baseline B s)

    python bench/explainer_latency.py            # every page (a few minutes on 2 cores)
    python bench/explainer_latency.py --smoke    # one control of one page, one repeat: that it runs
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import live_server  # noqa: E402

IDLE = (  # a run has finished and no figure waits for the first one to paint (ui/first_paint.py)
    '[data-testid="stApp"][data-test-script-state="notRunning"]:not(:has([class*="st-key-deferred_"]))'
)
REPEATS = 5
WAIT_MS = 60_000
# The baseline: the smallest Streamlit app that draws one Plotly figure, as a visitor's browser meets it.
ONE_CHART_APP = """import numpy as np
import plotly.graph_objects as go
import streamlit as st

x = np.arange(128)
st.plotly_chart(go.Figure(go.Scatter(x=x, y=np.sin(x / 8))))
"""


@dataclass(frozen=True)
class Control:
    """One main control: its key (URL parameter), how it is moved ("drag" a slider, "step" a number input, "click"
    a toggle or button, "type" into a text field), and the link that puts it near its largest value."""

    key: str
    how: str
    near_largest: str = ""  # query for the second round; empty: the defaults only
    pixels: float = 120.0  # how far a drag moves (negative: to the left)


PAGES: dict[str, tuple[str, list[Control]]] = {
    "home": (
        "",
        [
            Control("demo_seed", "step", "demo_seed=998"),
            Control("demo_pe", "click"),
            Control("demo_tokens", "type", "demo_tokens=" + "+".join(f"w{i}" for i in range(11))),
        ],
    ),
    "walkthrough": (
        "walkthrough",
        [
            Control("step", "drag", "step=values", pixels=200),
            Control("next", "click", "step=values"),
            Control("pe", "click"),
            Control("shuffle", "click", "words=" + "+".join(f"w{i}" for i in range(12))),
        ],
    ),
    "encoding_matrix": (
        "encoding_matrix",
        [
            Control("n", "drag", "n=3072&d=768", pixels=60),
            Control("d", "drag", "n=3072&d=768", pixels=60),
            Control("base", "drag", "base=100000&n=4096&d=1024", pixels=60),
            Control("t", "drag", "n=4096&d=1024&t=4000", pixels=-60),
        ],
    ),
    "wavelengths": (
        "wavelengths",
        [Control("d", "drag", "d=768", pixels=80), Control("base", "drag", "base=100000&d=1024", pixels=80)],
    ),
    "similarity": (
        "similarity",
        [
            Control("d", "drag", "d=768&n=1024&kmax=512", pixels=60),
            Control("base", "drag", "base=100000&d=1024&n=1024", pixels=60),
            Control("n", "drag", "n=768&d=1024", pixels=60),
            Control("t", "drag", "t=768&d=1024", pixels=60),
            Control("k", "drag", "k=768&d=1024", pixels=60),
        ],
    ),
    "softmax_saturation": (
        "softmax_saturation",
        [
            Control("a", "drag", "a=500", pixels=-150),
            Control("dk", "drag", "dk=2048&scores=" + ",".join(str(i) for i in range(16)), pixels=-150),
            Control("temp", "drag", "temp=5", pixels=-150),
        ],
    ),
}


@dataclass
class PageNumbers:
    drag_ms: list[float] = field(default_factory=list)
    release_ms: list[float] = field(default_factory=list)
    messages: int = 0
    first_figure_s: list[float] = field(default_factory=list)


class Frames:
    """Counts what a page sends to the server over its websocket."""

    def __init__(self, page) -> None:
        self.sent = 0
        page.on("websocket", lambda socket: socket.on("framesent", self._one))

    def _one(self, _frame) -> None:
        self.sent += 1


def open_page(page, url: str) -> None:
    page.goto(url)
    page.wait_for_function("() => window.__peLabLive && window.__peLabLive.mount", timeout=WAIT_MS)
    page.locator(IDLE).wait_for(timeout=WAIT_MS)
    page.wait_for_timeout(300)


def settled(page) -> float:
    """Wait for the server's rerun to finish (it may not have started yet), then one painted frame: its time."""
    page.wait_for_timeout(150)
    page.locator(IDLE).wait_for(timeout=WAIT_MS)
    return page.evaluate("() => new Promise(done => requestAnimationFrame(() => done(performance.now())))")


def draws_since(page, count: int) -> list[float]:
    return page.evaluate(
        """count => window.__peLabLive.draws.slice(count)
            .filter(d => d.input_at !== null && d.painted_at !== undefined && d.figures.length)
            .map(d => d.painted_at - d.input_at)""",
        count,
    )


def move(page, control: Control, frames: Frames) -> tuple[list[float], float, int]:
    """Move one control as a visitor would: its redraw latencies, the release latency, and the messages sent
    while it moved (before the release)."""
    root = page.locator(f".st-key-{control.key}")
    root.scroll_into_view_if_needed()
    page.wait_for_timeout(200)
    before = page.evaluate("() => window.__peLabLive.draws.length")
    sent = frames.sent
    if control.how == "drag":
        thumb = root.locator('[data-testid="stSliderThumbValue"]').bounding_box()
        handle = root.locator("input[type=range]").locator("..").locator("..").bounding_box()
        x, y = thumb["x"] + thumb["width"] / 2, handle["y"] + handle["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        for step in range(1, 31):
            page.mouse.move(x + control.pixels * step / 30, y)
            page.wait_for_timeout(30)
        moving = frames.sent - sent
        up = page.evaluate("() => performance.now()")
        page.mouse.up()
    elif control.how == "type":
        field = root.locator("input")
        field.click()
        field.press("End")
        field.type(" more words", delay=60)
        moving = frames.sent - sent
        up = page.evaluate("() => performance.now()")
        field.press("Enter")
    else:
        target = root.locator("button").first if control.how == "click" and root.locator("button").count() else None
        if control.how == "step":
            target = root.locator('[data-testid="stNumberInputStepUp"]')
        elif target is None:
            target = root.locator("label").first
        moving = 0
        up = page.evaluate("() => performance.now()")
        target.click()
    done = settled(page)
    return draws_since(page, before), done - up, moving


def first_figure_seconds(browser, url: str) -> float:
    """Seconds from opening `url` in a new tab to its first Plotly figure painted."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    start = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_function(
        "() => document.querySelector('.js-plotly-plot .main-svg .xtick')", timeout=WAIT_MS, polling="raf"
    )
    elapsed = time.perf_counter() - start
    page.close()
    return elapsed


def measure_page(browser, url: str, path: str, controls: list[Control], repeats: int) -> PageNumbers:
    numbers = PageNumbers()
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    frames = Frames(page)
    for control in controls:
        for query in ("", control.near_largest) if control.near_largest else ("",):
            open_page(page, f"{url}/{path}" + (f"?{query}" if query else ""))
            draws, release, moving = move(page, control, frames)
            numbers.drag_ms += draws
            numbers.release_ms.append(release)
            numbers.messages += moving
    page.close()
    first_figure_seconds(browser, f"{url}/{path}")  # warm the server's caches for this page
    numbers.first_figure_s = [first_figure_seconds(browser, f"{url}/{path}") for _ in range(repeats)]
    return numbers


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)] if ordered else float("nan")


def baseline_seconds(browser, url: str, repeats: int) -> float:
    """The first-figure time of the one-chart Streamlit app at `url`, warm."""
    first_figure_seconds(browser, url)  # warm
    return statistics.median(first_figure_seconds(browser, url) for _ in range(repeats))


def start_both(folder: Path) -> tuple[tuple, tuple]:
    """The app's server and the one-chart baseline's, started side by side (each takes seconds to start)."""
    script = folder / "one_chart.py"
    script.write_text(ONE_CHART_APP, encoding="utf-8")
    with ThreadPoolExecutor(2) as pool:
        app = pool.submit(live_server.start_streamlit)
        baseline = pool.submit(live_server.start_streamlit, script=script)
        return app.result(), baseline.result()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="one control of one page, one repeat")
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated page stems")
    args = parser.parse_args(argv)
    pages = (
        {"home": (PAGES["home"][0], PAGES["home"][1][:1])}
        if args.smoke
        else {name: PAGES[name] for name in args.pages.split(",")}
    )
    repeats = 1 if args.smoke else REPEATS
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as folder:
        browser = playwright.chromium.launch(executable_path=str(live_server.CHROMIUM), args=live_server.CHROMIUM_FLAGS)
        (process, url), (baseline_process, baseline_url) = start_both(Path(folder))
        try:
            baseline = baseline_seconds(browser, baseline_url, repeats)
            first_figure_seconds(browser, url)  # the server's first visitor pays its imports, not the pages
            lines = []
            for name, (path, controls) in pages.items():
                numbers = measure_page(browser, url, path, controls, repeats)
                lines.append(
                    f"{name}: drag p95 {p95(numbers.drag_ms):.0f} ms, release p95 {p95(numbers.release_ms):.0f} ms, "
                    f"server messages during drag {numbers.messages}, first figure "
                    f"{statistics.median(numbers.first_figure_s):.1f} s (baseline {baseline:.1f} s)"
                )
                print(
                    f"  {name}: {len(numbers.drag_ms)} redraws, median "
                    f"{statistics.median(numbers.drag_ms or [0]):.0f} ms"
                )
        finally:
            live_server.stop(process)
            live_server.stop(baseline_process)
        browser.close()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
