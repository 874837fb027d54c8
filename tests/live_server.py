"""Start and stop the real `streamlit run app.py` on a free loopback port, and the Chromium that drives it (the
browser tests, bench/memory.py and bench/one_button.py), and wait for the page, not the clock.

A Streamlit page is ready when its script run has finished, which takes as long as the machine needs. So every
browser test opens its pages with `new_page` (which counts the app's runs in the page and gives every wait and
`expect` WAIT_MS), waits with `wait_for_idle` after loading a page, and wraps each interaction that reruns the
app in `with finished_run(page):`, which returns once a run that started after the interaction has finished.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")  # Debian's; never a downloaded browser
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


# Generous: the first page of a fresh server imports numpy, pandas and plotly, and a busy machine runs everything
# many times slower (with two busy loops beside other work on 2 cores, the Fault lab once took over 60 s to draw);
# a wait ends as soon as the page is ready, so only a failure pays it in full.
WAIT_MS = 180_000
IDLE = (  # a run has finished and no figure waits for the first one to paint (ui/first_paint.py)
    '[data-testid="stApp"][data-test-script-state="notRunning"]:not(:has([class*="st-key-deferred_"]))'
)
# Runs in every document before the app's own scripts: counts the runs it sees start (the app's
# data-test-script-state entering "running"), so a wait can tell a run that started after an interaction from
# the one before it.
RUN_COUNTER = """(() => {
    window.__peLabRuns = 0;
    window.__peLabDocument = Math.random();
    const stateOf = (app) => app?.getAttribute('data-test-script-state') ?? null;
    let last = null;
    // One callback can bring several changes of the state (a quick run on a busy machine: running, then
    // notRunning, before the observer is called), so the states are read off the records' old values and the
    // current one, not the current one alone, which would miss that run.
    new MutationObserver((records) => {
        const app = document.querySelector('[data-testid="stApp"]');
        const seen = records.filter((r) => r.type === 'attributes' && r.target === app).map((r) => r.oldValue);
        for (const state of [...seen.slice(1), stateOf(app)]) {
            if (state === 'running' && last !== 'running') window.__peLabRuns += 1;
            last = state ?? last;
        }
    }).observe(document, {subtree: true, childList: true, attributes: true, attributeOldValue: true,
                          attributeFilter: ['data-test-script-state']});
})();"""
# True once the document has seen a run start after `before` ([document, runs] when the interaction began;
# another document means the page was loaded again) and no run is going on now.
RUN_FINISHED = """([document_before, runs_before]) => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    if (document.querySelector('[class*="st-key-deferred_"]')) return false;  // ui/first_paint.py
    const runs = window.__peLabRuns ?? 0;
    return window.__peLabDocument === document_before ? runs > runs_before : runs >= 1;
}"""


class ServerDidNotStart(RuntimeError):
    pass


def start_streamlit(
    timeout_s: float = WAIT_MS / 1000, prefix: Sequence[str] = (), log: Path | None = None, script: Path | None = None
) -> tuple[subprocess.Popen, str]:
    """The server process and its URL, once /_stcore/health answers. No file watcher: nothing edits the
    sources while it runs, and watching a busy checkout only costs CPU. `prefix` goes before the command,
    e.g. ("taskset", "-c", "0") to pin the server to one core; `log` receives the server's output; `script` runs
    another app than app.py (a bench's baseline)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            *prefix,
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(script or "app.py"),
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL if log is None else log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                return process, url
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise ServerDidNotStart(f"streamlit did not answer /_stcore/health within {timeout_s:.0f} s")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def _require_chromium() -> None:
    """Skip the calling test with the reason where Chromium or Playwright is missing; fail instead under CI
    (`CI` set), where the browser tests must run."""
    import pytest

    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} not found (CI is set, so the browser tests must run)")
        pytest.skip(f"{CHROMIUM} not found (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("playwright is not installed (CI is set, so the browser tests must run)")
        pytest.skip("playwright is not installed (pip install -r requirements-dev.txt)")


def new_page(browser, viewport: dict, **page_options):
    """A Chromium page that counts the app's runs (RUN_COUNTER), whose waits and `expect` assertions allow
    WAIT_MS (Playwright's `expect` otherwise gives up after 5 s, which a busy machine can take to draw a page)."""
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT_MS)
    page = browser.new_page(viewport=viewport, **page_options)
    page.set_default_timeout(WAIT_MS)
    page.add_init_script(RUN_COUNTER)
    return page


def wait_for_idle(page, timeout_ms: float = WAIT_MS) -> None:
    """Wait until the page the browser shows has finished a run of the app and none is going on: after opening
    a page, or where an interaction may or may not rerun the app."""
    page.wait_for_function(RUN_FINISHED, arg=[None, 0], timeout=timeout_ms)


@contextmanager
def finished_run(page, timeout_ms: float = WAIT_MS) -> Iterator[None]:
    """Around an interaction that reruns the app (a typed value, a moved slider, a button, Back, a link): on
    leaving the block, wait until a run that started after entering it has finished, however long it takes."""
    before = page.evaluate("[window.__peLabDocument ?? null, window.__peLabRuns ?? 0]")
    yield
    page.wait_for_function(RUN_FINISHED, arg=before, timeout=timeout_ms)


def open_expander(page, label: str) -> None:
    """Open a folded part (st.expander) by its label: the browser alone unfolds it, the app does not run."""
    page.get_by_text(label).first.click()


def follow_anchor(link) -> None:
    """Follow an in-page link (href="#..."): the browser scrolls to its heading, the app does not run."""
    link.click()


def open_page(page, url: str, last_text: str, timeout_ms: float = WAIT_MS) -> None:
    """Load `url` and wait until `last_text` shows and the app's run has finished."""
    page.goto(url, wait_until="domcontentloaded", timeout=timeout_ms)
    page.get_by_text(last_text).first.wait_for(timeout=timeout_ms)
    wait_for_idle(page, timeout_ms)


@contextmanager
def chromium_page(viewport: dict, default_timeout_ms: float | None = None, **page_options) -> Iterator[Any]:
    """One page of Debian's Chromium (`new_page`), closed afterwards; skips or fails as `_require_chromium`
    says. Its waits allow WAIT_MS, or `default_timeout_ms` when given."""
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            page = new_page(browser, viewport, **page_options)
            if default_timeout_ms is not None:
                page.set_default_timeout(default_timeout_ms)
            yield page
        finally:
            browser.close()


def served_page(viewport: dict, default_timeout_ms: float | None = None, **page_options) -> Iterator[tuple]:
    """For a module-scoped pytest fixture: a fresh `streamlit run app.py` and one Chromium page on it, as
    (page, url), closed afterwards. Skips with the reason where Chromium or Playwright is missing, and fails
    instead under CI (`CI` set), where the browser tests must run."""
    import pytest

    _require_chromium()
    try:
        process, url = start_streamlit()
    except ServerDidNotStart as error:
        pytest.fail(str(error))
    try:
        with chromium_page(viewport, default_timeout_ms, **page_options) as page:
            yield page, url
    finally:
        stop(process)


def blank_page(viewport: dict | None = None) -> Iterator:
    """For a module-scoped pytest fixture: one Chromium page on about:blank (no server), closed afterwards. Skips
    or fails (under CI) like `served_page` where Chromium or Playwright is missing."""
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield browser.new_page(viewport=viewport or {"width": 800, "height": 600})
        browser.close()
