"""The Fault lab's one button as a visitor waits for it: the default comparison (A and B, 3 seeds, the synthetic
set) from the click to the verdict, through the real server in Chromium, with all cores and pinned to one.

    python bench/one_button.py [--repeats 2] [--skip-accuracy]
    python bench/one_button.py --skip-server --seeds 5    # only the accuracy check, with 5 seeds

1. Starts `streamlit run app.py` (tests/live_server.py), opens /fault_lab in Debian's Chromium (Playwright),
   prints the wait the page announces before the click, clicks "Train and compare" and times the click to
   the results settled; --repeats fresh page loads each. Then the same with the server started under
   `taskset -c 0`: a hosted app may get one CPU, and the page then trains one run at a time.
2. Accuracy beside speed: the same default press, headless (AppTest, the page's own code path), once with
   core.lab.training (new) and once with bench/previous (the loop where issue 15 started); per model mean ± sd
   accuracy over the seeds, and whether each new mean lies within one sd of the previous one.

Target (issue 15): at most 30 s from click to verdict on 2 cores, each model's mean within one sd of the baseline.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import live_server  # noqa: E402

CHROMIUM = str(live_server.CHROMIUM)
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
TARGET_S = 30.0


def settle(page, text: str, timeout_s: float) -> None:
    page.get_by_text(text).first.wait_for(timeout=timeout_s * 1000)
    page.locator(IDLE).wait_for(timeout=timeout_s * 1000)
    if page.locator('[data-testid="stException"]').count():
        raise SystemExit("the page raised an exception")


def click_to_verdict(url: str, repeats: int, timeout_s: float) -> tuple[list[float], str]:
    """Seconds from the click to the settled results, per fresh page load, and the page's announced wait."""
    from playwright.sync_api import sync_playwright

    waits, announced = [], ""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=live_server.CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for _ in range(repeats):
            page.goto(f"{url}/fault_lab", wait_until="domcontentloaded")
            settle(page, "3 · Experiment", timeout_s)
            announced = page.get_by_text(re.compile(r"training runs: about")).first.inner_text()
            started = time.perf_counter()
            page.get_by_role("button", name="Train and compare").click()
            settle(page, "windowing · window", timeout_s)  # the results caption: "4 · Results" shows before
            waits.append(time.perf_counter() - started)
        browser.close()
    return waits, announced


def through_the_server(repeats: int, timeout_s: float, pin: tuple[str, ...]) -> tuple[list[float], str]:
    process, url = live_server.start_streamlit(prefix=pin)
    try:
        return click_to_verdict(url, repeats, timeout_s)
    finally:
        live_server.stop(process)


def default_press(trainer: Any = None, seeds: int | None = None) -> tuple[dict[str, list[float]], float]:
    """Accuracy per model (one per seed) of the page's default comparison, headless, and its wall seconds;
    `seeds` moves the page's seeds slider first (None keeps its default)."""
    from streamlit.testing.v1 import AppTest

    import core.lab.backends
    from bench.fault_lab import click_and_wait
    from ui.lab import keys

    original = core.lab.backends.backend
    if trainer is not None:
        core.lab.backends.backend = lambda name, address: SimpleNamespace(train=trainer)
    try:
        at = AppTest.from_file(str(ROOT / "pages" / "fault_lab.py"), default_timeout=600)
        at.run()
        if seeds is not None:
            at.slider(key="seeds").set_value(seeds).run()
        seconds = click_and_wait(at)
    finally:
        core.lab.backends.backend = original
    accuracy: dict[str, list[float]] = {}
    for run in at.session_state[keys.RESULTS_KEY]["runs"]:
        accuracy.setdefault(run["model"], []).append(100 * run["accuracy"])
    return accuracy, seconds


def accuracy_section(seeds: int | None) -> None:
    from bench.previous import load as load_previous

    new, new_s = default_press(seeds=seeds)
    previous, previous_s = default_press(load_previous().train, seeds)
    what = "Default comparison" if seeds is None else f"Default comparison with {seeds} seeds"
    print(f"\n{what} headless (AppTest): new loop {new_s:.1f} s, previous loop {previous_s:.1f} s")
    for model in new:
        mean, sd = statistics.mean(new[model]), statistics.stdev(new[model])
        base_mean, base_sd = statistics.mean(previous[model]), statistics.stdev(previous[model])
        within = abs(mean - base_mean) <= base_sd
        print(
            f"  {model}: new {mean:.1f} ± {sd:.1f} %, previous {base_mean:.1f} ± {base_sd:.1f} % "
            f"(n={len(new[model])}); new mean within one previous sd: {'yes' if within else 'NO'}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="clicks per server start, each on a fresh page")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for a verdict")
    parser.add_argument("--skip-accuracy", action="store_true")
    parser.add_argument("--skip-server", action="store_true", help="only the headless accuracy check")
    parser.add_argument(
        "--seeds", type=int, choices=range(1, 6), help="the accuracy check with this many seeds (the page's 1-5)"
    )
    args = parser.parse_args(argv)
    if not args.skip_server and not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} not found (apt-get install chromium)")
    pins = (("all cores", ()), ("pinned to one core (taskset -c 0)", ("taskset", "-c", "0")))
    if args.skip_server:
        pins = ()
    for label, pin in pins:
        waits, announced = through_the_server(args.repeats, args.timeout, pin)
        shown = ", ".join(f"{w:.1f}" for w in waits)
        print(f"server on {label}: click to verdict {shown} s (median {statistics.median(waits):.1f} s)", flush=True)
        print(f"  the page announced: {announced}", flush=True)
        if not pin:
            met = statistics.median(waits) <= TARGET_S
            print(f"  target <= {TARGET_S:.0f} s on all cores: {'met' if met else 'NOT met'}", flush=True)
    if not args.skip_accuracy:
        accuracy_section(args.seeds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
