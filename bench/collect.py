"""What the garbage collection at the start of every full run costs a click, with and without ui.garbage's freeze.

    python bench/collect.py
    python bench/collect.py --smoke    # seconds: only the home page first, one collection of each kind

Runs every page once headless (AppTest), as a server has after its first visitors, then times a full
collection (gc.collect, what app.py did before) and the collection of ui.garbage.collect_garbage once it has
frozen the survivors, each the median of 5. Both walk the objects the collector tracks; the second only those
made since the freeze. A full run of a page (bench/pages.py "warm") pays this on top.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from ui.garbage import collect_garbage  # noqa: E402
from ui.page_registry import built_rooms  # noqa: E402


def after_a_page_run(collect, page: str, repeats: int = 5) -> tuple[float, int]:
    """Median seconds of `collect` right after a headless run of `page` (its garbage is what a collection
    finds), and the objects it had to walk the last time."""
    times, walked = [], 0
    for _ in range(repeats):
        AppTest.from_file(str(ROOT / page), default_timeout=120).run()
        walked = len(gc.get_objects())
        started = time.perf_counter()
        collect()
        times.append(time.perf_counter() - started)
    return statistics.median(times), walked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="seconds: the home page only, one collection each")
    args = parser.parse_args(argv)
    repeats = 1 if args.smoke else 5
    AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    for room in [] if args.smoke else built_rooms():  # every page once, as a server has after its first visitors
        AppTest.from_file(str(ROOT / room.path), default_timeout=120).run()
    page = "pages/wavelengths.py" if args.smoke else "pages/fault_lab.py"
    full, walked_full = after_a_page_run(gc.collect, page, repeats)
    collect_garbage()  # freezes the survivors: every module the pages imported is new to it
    frozen, walked_frozen = after_a_page_run(collect_garbage, page, repeats)
    print(f"after a run of {page}, medians of {repeats}:")
    print(f"  gc.collect (app.py before): {1000 * full:.0f} ms, walking {walked_full:,} objects")
    print(f"  collect_garbage after its freeze: {1000 * frozen:.0f} ms, walking {walked_frozen:,} objects")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
