"""Screenshots of the home page, each explainer page and the Fault lab at 390 x 844 (a phone) and 1400 x 900,
for a human to look at: docs/screens/<page>-390.png and <page>-1400.png, the first screen of each page (each
under 300 kB).

    python bench/screens.py            # starts `streamlit run app.py` (tests/live_server.py), Debian's Chromium
    python bench/screens.py fault_lab  # only these pages
    python bench/screens.py --smoke    # seconds: the home page at 390 px, into a temporary folder (docs/ untouched)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import live_server  # noqa: E402

OUT = ROOT / "docs" / "screens"
PAGES = {
    "home": "",
    "encoding_matrix": "encoding_matrix",
    "wavelengths": "wavelengths",
    "similarity": "similarity",
    "softmax_saturation": "softmax_saturation",
    "fault_lab": "fault_lab",  # its first screen is the short answer
}
SIZES = {390: {"width": 390, "height": 844}, 1400: {"width": 1400, "height": 900}}
LIMIT_BYTES = 300_000


def main(only: list[str] | None = None, out: Path = OUT, sizes: dict = SIZES) -> None:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    process, url = live_server.start_streamlit()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(live_server.CHROMIUM), args=live_server.CHROMIUM_FLAGS
            )
            for width, viewport in sizes.items():
                page = browser.new_page(viewport=viewport, is_mobile=width < 640, has_touch=width < 640)
                for name, path in PAGES.items():
                    if only and name not in only:
                        continue
                    page.goto(f"{url}/{path}", wait_until="domcontentloaded", timeout=60_000)
                    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
                    page.locator(live_server.IDLE).wait_for(timeout=60_000)
                    page.wait_for_timeout(500)  # plotly's last redraw
                    target = out / f"{name}-{width}.png"
                    page.screenshot(path=str(target))
                    size = target.stat().st_size
                    print(f"{target}: {size / 1000:.0f} kB")
                    if size > LIMIT_BYTES:
                        print(f"  over {LIMIT_BYTES / 1000:.0f} kB", file=sys.stderr)
                page.close()
            browser.close()
    finally:
        live_server.stop(process)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", help="page names to take again (all when none)")
    parser.add_argument("--smoke", action="store_true", help="seconds: the home page at 390 px, into a temp folder")
    args = parser.parse_args()
    if not args.smoke:
        main(args.pages)
    elif not live_server.CHROMIUM.exists():
        print(f"SKIPPED: {live_server.CHROMIUM} not found (apt-get install chromium)")
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(["home"], Path(folder), {390: SIZES[390]})
