"""The Fault lab's one button as a visitor waits for it: the default comparison (B-noPE and B, with A beside them
when the told wait allows; 3 seeds, the synthetic set) from the click to the verdict, through the real server in
Chromium, with all cores and pinned to one.

    python bench/one_button.py [--repeats 2] [--skip-accuracy]
    python bench/one_button.py --skip-server    # only the accuracy check
    python bench/one_button.py --smoke          # seconds: every part once with the page's smallest press

1. Starts `streamlit run app.py` (tests/live_server.py), opens /fault_lab in Debian's Chromium (Playwright),
   prints the wait the page announces before the click, clicks "Train and compare" and times the click to
   the results settled; --repeats fresh page loads each. Then the same with the server started under
   `taskset -c 0`: a hosted app may get one CPU, and the page then trains one run at a time.
2. The training floor: the same six runs in one process pinned to one core, one after another, with no server
   and no browser (`python -m core.experiment`, the page's defaults). Their summed seconds are what any
   one-core press must spend before the server draws a thing: when they already pass the one-core target,
   no work on the page can meet it (--skip-floor leaves it out).
3. Accuracy beside speed: the same default press, headless (AppTest, the page's own code path) with 5 seeds;
   per model mean ± sd accuracy, and whether each mean lies within one sd of the README's figures.

Targets (issue 25): the told wait within ±25 % of the measured one; at most 25 s from click to verdict on all
cores and 30 s on one; each model's mean within one sd of the README's. It ends with two lines, medians over
its repeats: `all cores: told N s, measured M s` and `one core: told N s, measured M s`.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
import urllib.parse
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import live_server  # noqa: E402

CHROMIUM = str(live_server.CHROMIUM)
IDLE = live_server.IDLE
README_FIGURES = {"A": (95.1, 2.0), "B": (95.6, 2.5)}  # the A-and-B press over 5 seeds, mean ± sd accuracy %
TARGET_S = 25.0  # click to verdict on all cores (issue 25)
TARGET_ONE_CORE_S = 30.0  # pinned to one core


def settle(page, text: str, timeout_s: float) -> None:
    page.get_by_text(text).first.wait_for(timeout=timeout_s * 1000)
    page.locator(IDLE).wait_for(timeout=timeout_s * 1000)
    if page.locator('[data-testid="stException"]').count():
        raise SystemExit("the page raised an exception")


def told_seconds(announced: str) -> float:
    """The wait a caption announces ("6 training runs: about 24 s on ...", "... about 2 min ..."), in seconds."""
    match = re.search(r"about (\d+) (s|min)\b", announced)
    if match is None:
        raise SystemExit(f"no wait in the page's caption: {announced!r}")
    return float(match.group(1)) * (60 if match.group(2) == "min" else 1)


def click_to_verdict(url: str, repeats: int, timeout_s: float, link: str = "") -> tuple[list[float], list[float]]:
    """Per fresh page load: the wait the page told before the click, and the seconds from the click to the
    settled results (`link`: a query for the page, e.g. --smoke's smallest press)."""
    from playwright.sync_api import sync_playwright

    measured, told = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=live_server.CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for _ in range(repeats):
            page.goto(f"{url}/fault_lab{'?' + link if link else ''}", wait_until="domcontentloaded")
            settle(page, "3 · Experiment", timeout_s)
            announced = page.get_by_text(re.compile(r"training runs: about")).first.inner_text()
            told.append(told_seconds(announced))
            print(f"  told: {announced}", flush=True)
            started = time.perf_counter()
            page.get_by_role("button", name="Train and compare").click()
            settle(page, "windowing · window", timeout_s)  # the results caption: "4 · Results" shows before
            measured.append(time.perf_counter() - started)
        browser.close()
    return measured, told


def through_the_server(
    repeats: int, timeout_s: float, pin: tuple[str, ...], link: str = ""
) -> tuple[list[float], list[float]]:
    process, url = live_server.start_streamlit(prefix=pin)
    try:
        return click_to_verdict(url, repeats, timeout_s, link)
    finally:
        live_server.stop(process)


def training_floor(smoke: bool = False) -> tuple[float, float]:
    """(summed train seconds of the default press's six runs, wall seconds of the whole CLI call): one process
    pinned to one core, one run at a time, the page's default plan (--smoke: one seed, one epoch), no server."""
    import json
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "results.json"
        command = ["taskset", "-c", "0", sys.executable, "-m", "core.experiment", "--dataset", "synthetic"]
        command += ["--models", "A,B", "--seeds", "0" if smoke else "0,1,2", "--workers", "1", "--quiet"]
        command += ["--out", str(out), *(["--epochs", "1"] if smoke else [])]
        started = time.perf_counter()
        subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        runs = json.loads(out.read_text())["runs"]
    return sum(run["train_seconds"] for run in runs), wall


def default_press(
    trainer: Any = None, seeds: int | None = None, link: str = ""
) -> tuple[dict[str, list[float]], float]:
    """Accuracy per model (one per seed) of the A-and-B comparison on the page, headless, and its wall seconds;
    `seeds` moves the page's seeds slider first (None keeps its default); `link` opens the page with a query."""
    from streamlit.testing.v1 import AppTest

    import core.lab.backends
    from bench.fault_lab import click_and_wait
    from ui.lab import keys

    original = core.lab.backends.backend
    if trainer is not None:
        core.lab.backends.backend = lambda name, address: SimpleNamespace(train=trainer)
    try:
        at = AppTest.from_file(str(ROOT / "pages" / "fault_lab.py"), default_timeout=600)
        for key, value in urllib.parse.parse_qsl(link):
            at.query_params[key] = value
        at.run()
        at.multiselect(key="models").set_value(list(README_FIGURES)).run()  # the press the README's figures are of
        if seeds is not None:
            at.slider(key="n_seeds").set_value(seeds).run()
        seconds = click_and_wait(at)
    finally:
        core.lab.backends.backend = original
    accuracy: dict[str, list[float]] = {}
    for run in at.session_state[keys.RESULTS_KEY]["runs"]:
        accuracy.setdefault(run["model"], []).append(100 * run["accuracy"])
    return accuracy, seconds


def accuracy_section(seeds: int | None, link: str = "") -> None:
    """The default press headless with 5 seeds: each model's mean within one sd of the README's figures."""
    new, new_s = default_press(seeds=seeds or 5, link=link)
    print(f"\nDefault comparison headless (AppTest), {seeds or 5} seeds: {new_s:.1f} s")
    for model, (base_mean, base_sd) in README_FIGURES.items():
        mean, sd = statistics.mean(new[model]), statistics.stdev(new[model])
        within = abs(mean - base_mean) <= base_sd
        print(
            f"  {model}: {mean:.1f} ± {sd:.1f} %, README {base_mean:.1f} ± {base_sd:.1f} % (n={len(new[model])}); "
            f"within one README sd: {'yes' if within else 'NO'}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="clicks per server start, each on a fresh page")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for a verdict")
    parser.add_argument("--skip-accuracy", action="store_true")
    parser.add_argument("--skip-server", action="store_true", help="only the headless accuracy check")
    parser.add_argument("--skip-floor", action="store_true", help="leave out the one-core training floor")
    parser.add_argument(
        "--seeds", type=int, choices=range(1, 6), help="the accuracy check with this many seeds (the page's 1-5)"
    )
    parser.add_argument("--smoke", action="store_true", help="seconds: each part once, the smallest press")
    args = parser.parse_args(argv)
    link = ""
    if args.smoke:  # the server on all cores, one click; a floor of two runs; the accuracy check with 2 seeds
        from bench.fault_lab import SMOKE_LINK

        link, args.repeats, args.seeds = SMOKE_LINK, 1, 2
        if not Path(CHROMIUM).exists():
            print(f"SKIPPED the server part: {CHROMIUM} not found (apt-get install chromium)")
            args.skip_server = True
    if not args.skip_server and not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} not found (apt-get install chromium)")
    pins = (("all cores", ()), ("one core", ("taskset", "-c", "0")))
    if args.skip_server:
        pins = ()
    elif args.smoke:
        pins = pins[:1]
    lines = []
    for label, pin in pins:
        measured, told = through_the_server(args.repeats, args.timeout, pin, link)
        shown = ", ".join(f"{m:.1f} s (told {t:.0f} s)" for m, t in zip(measured, told))
        print(f"server on {label}: click to verdict {shown}", flush=True)
        median_told, median_measured = statistics.median(told), statistics.median(measured)
        error = abs(median_told - median_measured) / median_measured
        target = TARGET_S if not pin else TARGET_ONE_CORE_S
        print(
            f"  told within ±25 %: {'yes' if error <= 0.25 else 'NO'} ({100 * error:.0f} % off); target <= "
            f"{target:.0f} s: {'met' if median_measured <= target else 'NOT met'}",
            flush=True,
        )
        lines.append(f"{label}: told {median_told:.0f} s, measured {median_measured:.0f} s")
    if not args.skip_floor:
        training, wall = training_floor(args.smoke)
        print(
            f"\ntraining floor, one core, no server: the press's runs train for {training:.1f} s in all "
            f"({wall:.1f} s with the CLI's start-up); target for the press on one core <= {TARGET_ONE_CORE_S:.0f} s",
            flush=True,
        )
    if not args.skip_accuracy:
        accuracy_section(args.seeds, link)
    for line in lines:  # the two lines the issue asks the bench to end with, medians over its repeats
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
