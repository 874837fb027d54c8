"""Screenshots of every page of the app at 390 x 844 (a phone) and 1400 x 900, for a human to look at:
docs/screens/<page>-390.png and <page>-1400.png, the first screen of each page, each under 300 kB, and the Fault
lab's map alone (fault_lab-map-<width>.png). The pages are the home page and every room of ui.page_registry (the
list the navigation reads), so a page added later is taken too.

    python bench/screens.py            # starts `streamlit run app.py` (tests/live_server.py), Debian's Chromium
    python bench/screens.py fault_lab  # only these pages
    python bench/screens.py --smoke    # the home page at 390 px, written to a temporary folder

A screenshot over the limit is written again with Pillow: first losslessly (optimize, the highest zlib level), then,
if still over, as a 256-colour palette (a flat-coloured page loses nothing a reader sees).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import live_server  # noqa: E402
from ui.page_registry import built_rooms  # noqa: E402

OUT = ROOT / "docs" / "screens"
SIZES = {390: {"width": 390, "height": 844}, 1400: {"width": 1400, "height": 900}}
IDLE = (  # a run has finished and no figure waits for the first one to paint (ui/first_paint.py)
    '[data-testid="stApp"][data-test-script-state="notRunning"]:not(:has([class*="st-key-deferred_"]))'
)
LIMIT_BYTES = 300_000
WAIT_MS = 120_000
MAP_FIGURE = "order_map"  # the Fault lab's first figure, also written alone as docs/screens/fault_lab-map-<width>.png


def pages() -> dict[str, str]:
    """Every page by its screenshot name: its URL path (the home page is the app's root)."""
    return {"home": "", **{Path(room.path).stem: Path(room.path).stem for room in built_rooms()}}


def shrink(target: Path, limit: int = LIMIT_BYTES) -> int:
    """Write `target` again within `limit` bytes if it is over: optimised losslessly, else as a 256-colour
    palette. Returns its size in bytes."""
    from PIL import Image

    if target.stat().st_size <= limit:
        return target.stat().st_size
    with Image.open(target) as image:
        image.load()
    image.save(target, optimize=True, compress_level=9)
    if target.stat().st_size > limit:
        image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)
    return target.stat().st_size


def take(page, url: str, path: str, target: Path) -> int:
    """The first screen of the page at `path`, once its script has run and its figures are drawn; its bytes."""
    page.goto(f"{url}/{path}", wait_until="domcontentloaded", timeout=WAIT_MS)
    page.locator(IDLE).wait_for(timeout=WAIT_MS)
    page.wait_for_timeout(1_000)  # the rerun a widget's first value starts
    page.locator(IDLE).wait_for(timeout=WAIT_MS)
    charts = page.locator(".js-plotly-plot")
    if charts.count():
        charts.first.locator(".main-svg").first.wait_for(timeout=WAIT_MS)
    page.wait_for_timeout(500)  # plotly's last redraw
    page.screenshot(path=str(target))
    figure = page.locator(f".st-key-fig_{MAP_FIGURE}")
    if path == "fault_lab" and figure.count():  # the map alone too, for the README's study section
        figure.screenshot(path=str(target.with_name(target.name.replace("fault_lab-", "fault_lab-map-"))))
        shrink(target.with_name(target.name.replace("fault_lab-", "fault_lab-map-")))
    return shrink(target)


def main(only: list[str], out: Path = OUT, sizes: dict[int, dict[str, int]] = SIZES) -> int:
    """Take the screenshots of `only` (every page when empty); 1 if one stays over the limit."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    chosen = {name: path for name, path in pages().items() if not only or name in only}
    over = []
    process, url = live_server.start_streamlit(timeout_s=120)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(live_server.CHROMIUM), args=live_server.CHROMIUM_FLAGS
            )
            for width, viewport in sizes.items():
                page = browser.new_page(viewport=viewport, is_mobile=width < 640, has_touch=width < 640)
                for name, path in chosen.items():
                    target = out / f"{name}-{width}.png"
                    size = take(page, url, path, target)
                    print(f"{target.relative_to(out.parent.parent) if out == OUT else target}: {size / 1000:.0f} kB")
                    if size > LIMIT_BYTES:
                        over.append(target.name)
                page.close()
            browser.close()
    finally:
        live_server.stop(process)
    if over:
        print(f"over {LIMIT_BYTES / 1000:.0f} kB: {', '.join(over)}", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", help=f"page names to take again (all when none): {', '.join(pages())}")
    parser.add_argument("--smoke", action="store_true", help="the home page at 390 px, into a temporary folder")
    arguments = parser.parse_args()
    if arguments.smoke:
        with tempfile.TemporaryDirectory() as folder:
            sys.exit(main(["home"], Path(folder), {390: SIZES[390]}))
    sys.exit(main(arguments.pages))
