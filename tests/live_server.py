"""Start and stop the real `streamlit run app.py` on a free loopback port, and the Chromium that drives it (the
browser tests, bench/memory.py and bench/one_button.py), and wait for the page, not the clock.

A Streamlit page is ready when its script run has finished, which takes as long as the machine needs. So every
browser test opens its pages with `new_page` (which counts the app's runs in the page and gives every wait and
`expect` WAIT_MS), waits with `wait_for_idle` after loading a page, and wraps each interaction that reruns the
app in `with finished_run(page):`, which returns once the server has finished a run after the interaction and the
page is idle.
"""

from __future__ import annotations

import json
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
PAGE_IDLE = f"() => document.querySelector({json.dumps(IDLE)}) !== null"
PAGE_STATE = """() => ({
    url: location.href,
    state: document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state') ?? null,
    deferred: document.querySelector('[class*="st-key-deferred_"]')?.className ?? null,
})"""
# Runs are counted from the server's messages, not from the page: a quick run can start and end between two
# renders of the page, which then never shows it running (seen after Back and Forward on a busy machine), but
# the server always ends a run with a script_finished message. One ended early for a rerun is not a finished run.
# Each document the page loads opens its own connection: a count per connection, the page's current one last.
_FINISHED_RUNS: dict[int, list[int]] = {}


def _count_finished_runs(page) -> None:
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    counts = _FINISHED_RUNS[id(page)] = []
    early = ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN

    def on_socket(socket) -> None:
        counts.append(0)
        mine = len(counts) - 1
        socket.on("framereceived", lambda payload: on_frame(payload, mine))

    def on_frame(payload: Any, connection: int) -> None:
        if not isinstance(payload, bytes | bytearray):
            return
        try:
            message = ForwardMsg.FromString(bytes(payload))
        except Exception:  # not a ForwardMsg (the page's own frames): nothing to count
            return
        if message.WhichOneof("type") == "script_finished" and message.script_finished != early:
            counts[connection] += 1

    page.on("websocket", on_socket)


def runs_finished(page) -> tuple[int, int]:
    """(connection, runs): the page's current connection to the server (one per document it loaded) and the runs
    the server has finished on it."""
    counts = _FINISHED_RUNS[id(page)]
    return len(counts), counts[-1] if counts else 0


def _after(now: tuple[int, int], before: tuple[int, int]) -> bool:
    """Whether a run finished after `before`: on the same connection one more, on a newer one (the page was loaded
    again) any."""
    return now[1] > before[1] if now[0] == before[0] else now[1] >= 1


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
    """A Chromium page whose runs of the app are counted (runs_finished), whose waits and `expect` assertions allow
    WAIT_MS (Playwright's `expect` otherwise gives up after 5 s, which a busy machine can take to draw a page)."""
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT_MS)
    page = browser.new_page(viewport=viewport, **page_options)
    page.set_default_timeout(WAIT_MS)
    _count_finished_runs(page)
    return page


def _wait_until_run_finished(page, before: tuple[int, int], timeout_ms: float) -> None:
    """Wait until the server has finished a run after `before` (runs_finished's) and the page is idle; then two
    frames, so that the page has drawn what that run sent."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not (_after(runs_finished(page), before) and page.evaluate(PAGE_IDLE)):
        if time.monotonic() > deadline:
            raise AssertionError(
                f"no finished run after {before} within {timeout_ms / 1000:.0f} s: {runs_finished(page)} "
                f"finished, the page showed {page.evaluate(PAGE_STATE)}"
            )
        page.wait_for_timeout(25)  # lets Playwright deliver the server's frames meanwhile
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def wait_for_idle(page, timeout_ms: float = WAIT_MS) -> None:
    """Wait until the page the browser shows has finished a run of the app and none is going on: after opening
    a page, or where an interaction may or may not rerun the app."""
    _wait_until_run_finished(page, (-1, 0), timeout_ms)  # any connection: the current one's first run will do


@contextmanager
def finished_run(page, timeout_ms: float = WAIT_MS) -> Iterator[None]:
    """Around an interaction that reruns the app (a typed value, a moved slider, a button, Back, a link): on
    leaving the block, wait until a run that started after entering it has finished, however long it takes."""
    before = runs_finished(page)
    yield
    _wait_until_run_finished(page, before, timeout_ms)


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
