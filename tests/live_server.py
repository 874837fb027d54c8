"""Start and stop the real `streamlit run app.py` on a free loopback port, and the Chromium that drives it (the
browser tests, bench/memory.py and bench/one_button.py)."""

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


class ServerDidNotStart(RuntimeError):
    pass


def start_streamlit(
    timeout_s: float = 60.0, prefix: Sequence[str] = (), log: Path | None = None, script: Path | None = None
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


@contextmanager
def chromium_page(viewport: dict, default_timeout_ms: float | None = None, **page_options) -> Iterator[Any]:
    """One page of Debian's Chromium, closed afterwards; skips or fails as `_require_chromium` says."""
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport=viewport, **page_options)
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
    import pytest

    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} not found (CI is set, so the browser tests must run)")
        pytest.skip(f"{CHROMIUM} not found (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("playwright is not installed (CI is set, so the browser tests must run)")
        pytest.skip("playwright is not installed (pip install -r requirements-dev.txt)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield browser.new_page(viewport=viewport or {"width": 800, "height": 600})
        browser.close()
