"""Real-browser smoke test: Debian's Chromium, driven by Playwright, against `streamlit run app.py`.

Skips with a reason where Chromium or Playwright is missing, except under CI (env CI set), where a missing
browser is a failure: CI installs it. Screenshots land in test-artifacts/ for a human to look at.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def _unavailable(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so the browser tests must run: .ci/run installs chromium)")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                break
        except OSError:
            time.sleep(0.3)
    else:
        process.kill()
        pytest.fail("streamlit did not answer /_stcore/health within 60 s")
    yield url
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} not found (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -r requirements-dev.txt)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


def _open(browser, url: str, expect_text: str, screenshot: str, plots: int = 0):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url, wait_until="domcontentloaded", timeout=60_000)
    page.get_by_text(expect_text).first.wait_for(timeout=60_000)
    if plots:  # plotly is loaded lazily: wait until the charts are drawn, not just their placeholders
        page.locator(".js-plotly-plot").nth(plots - 1).wait_for(timeout=60_000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / screenshot), full_page=True)
    return page


def _assert_no_error_box(page):
    assert page.locator('[data-testid="stException"]').count() == 0
    errors = page.locator('[data-testid="stAlertContentError"]')
    assert errors.count() == 0, errors.all_inner_texts()


def test_home_page_renders(server, browser):
    page = _open(browser, server, "Why attention needs positions at all", "home.png")
    _assert_no_error_box(page)
    assert page.get_by_text("0-based").count() >= 1
    page.close()


def test_deep_link_restores_encoding_matrix_controls(server, browser):
    page = _open(browser, f"{server}/encoding_matrix?n=500&d=64", "What the naive schemes get wrong", "encoding_matrix.png", plots=4)
    _assert_no_error_box(page)
    sliders = page.locator('[data-testid="stSlider"]')
    values = sliders.locator('[data-testid="stSliderThumbValue"]').all_inner_texts()
    assert "500" in values and "64" in values, values
    assert page.locator(".js-plotly-plot").count() == 4
    page.close()
