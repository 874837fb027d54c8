"""Speed benchmark of every page: AppTest run time and figure payload, at defaults and largest settings.

Targets (issue 2): <= 0.3 s a run at defaults, <= 1.5 s at the largest settings, <= 3 MB of figure data.
"cold" is the first run with empty caches (what a new visitor's first view costs, imports excluded);
"warm" is a rerun with the same controls (what every click costs once the numbers are cached).

    python bench/pages.py
    python bench/pages.py --smoke    # seconds: each page once at its defaults, no repeats, no largest settings
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

# page -> (largest settings as a deep-link query)
PAGES: dict[str, dict[str, str]] = {
    "app.py": {},  # the home page, through the navigation
    "pages/walkthrough.py": {
        "words": " ".join(f"w{i}" for i in range(12)),
        "step": "weights",
        "shuffle": "true",
        "scheme": "learned (random init)",
    },
    "pages/encoding_matrix.py": {"n": "4096", "d": "1024", "base": "1000000", "t": "4095", "zr": "4000", "zc": "960"},
    "pages/wavelengths.py": {"d": "1024", "base": "1000000", "bits": "6"},
    "pages/similarity.py": {
        "d": "1024",
        "n": "1024",
        "kmax": "512",
        "t": "1024",
        "k": "1024",
        "base": "1000000",
        "scheme": "RoPE",
        "s": "512",
    },
    "pages/softmax_saturation.py": {
        "a": "1000",
        "mc": "8000",
        "dk": "4096",
        "temp": "0.05",
        "scores": ",".join(str(i) for i in range(16)),
        "n": "4096",
    },
    "pages/fault_lab.py": {},
}
REPEATS = 3


def run_once(page: str, query: dict[str, str], repeats: int = REPEATS) -> tuple[float, float, int]:
    at = AppTest.from_file(str(ROOT / page), default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    start = time.perf_counter()
    at.run()
    cold = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(f"{page} {query}: {[e.message for e in at.exception]}")
    warm_times = []
    for _ in range(repeats):
        start = time.perf_counter()
        at.run()
        warm_times.append(time.perf_counter() - start)
    payload = sum(len(chart.proto.spec) for chart in at.get("plotly_chart"))
    return cold, statistics.median(warm_times), payload


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="seconds: defaults only, one warm run each")
    args = parser.parse_args(argv)
    repeats = 1 if args.smoke else REPEATS
    # Warm the imports once so "cold" measures the page, not Python importing plotly and pandas.
    run_once("pages/wavelengths.py", {}, repeats)
    print(
        f"{'page':<30} {'settings':<9} {'cold s':>7} {'warm s':>7} {'figure MB':>10}  "
        "targets: warm <= 0.3 / 1.5 s, <= 3 MB"
    )
    for page, largest in PAGES.items():
        if not (ROOT / page).exists():
            print(f"{page:<30} (not built yet)")
            continue
        for label, query in (("default", {}), *(() if args.smoke else (("largest", largest),))):
            st.cache_data.clear()
            cold, warm, payload = run_once(page, query, repeats)
            limit = 0.3 if label == "default" else 1.5
            verdict = "ok" if warm <= limit and payload <= 3e6 else "OVER"
            print(f"{page:<30} {label:<9} {cold:7.3f} {warm:7.3f} {payload / 1e6:10.3f}  {verdict}")


if __name__ == "__main__":
    main()
