"""Peak memory of the real server against the 1 GB budget (issue 9).

Starts `streamlit run app.py`, drives one Chromium session (Playwright, Debian's /usr/bin/chromium) through
every page at its largest settings, loads the largest synthetic set in the Fault lab, then trains there
with the defaults on the default synthetic set, and prints the server's resident memory after each step
and its peak.

    python bench/memory.py [--sessions 1] [--fill-caches] [--train-timeout 1200]
    python bench/memory.py --smoke    # seconds: the home page, then the Fault lab's smallest press
    python bench/memory.py --every-evaluation    # the press with every evaluation at once (two seeds)

With --sessions N, N browsers take the same tour at the same time (each with its own session, so N
trainings, which the server queues one after another): the figure for several users at once.
With --fill-caches the tour starts with the Encoding matrix at its largest size for every base and
layout (twelve 4096 x 1024 matrices, more than its cache keeps), as many visitors exploring would:
the server's caches then hold as much as their bounds allow.

The peak is the kernel's own high-water mark of the server process (VmHWM in /proc/<pid>/status), so no
spike between two samples is missed. Child processes (none are expected: training runs in a thread) are
sampled every 0.2 s and added. Linux only; psutil is not needed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.fault_lab import SMOKE_LINK  # noqa: E402
from tests import live_server  # noqa: E402  (the same server start as the browser tests)

CHROMIUM = str(live_server.CHROMIUM)
BUDGET_MB = 1000.0  # 1 GB, decimal: the stricter reading
WAIT_MS = 120_000
IDLE = live_server.IDLE
BASES = (10, 100, 1_000, 10_000, 100_000, 1_000_000)  # the pages' base options
BASES_MAX = BASES[-1]

# The largest value of every control that changes how much is computed or held (read from the pages;
# bench/pages.py's queries plus the controls it leaves at their defaults, and similarity's n capped at its
# slider's 1024). Streamlit leaves a widget's default value out of the URL, so the queries name only
# values that differ from it (check_link_kept compares them with the URL the page ends on).
EIGHT_DIMENSIONS = "&".join(f"dims={d}" for d in (0, 1, 2, 3, 20, 60, 500, 1000))
SIXTEEN_SCORES = "%2C".join(str(s) for s in (1e6, -1e6, 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7))
SIMILARITY = f"similarity?d=1024&base={BASES_MAX}&n=1024&kmax=512&t=1024&k=1024"
EXPLAINER_STEPS = [
    ("home", "", "The path through the lab"),
    (
        "encoding matrix, largest",
        f"encoding_matrix?n=4096&d=1024&base={BASES_MAX}&layout=concatenated&zr=4000&zc=960&t=4095&{EIGHT_DIMENSIONS}",
        "What the naive schemes get wrong",
    ),
    ("wavelengths, largest", f"wavelengths?d=1024&base={BASES_MAX}&bits=6", "The binary-counter analogy"),
    ("similarity, learned (init)", SIMILARITY, "Beyond the trained length"),  # the default scheme
    ("similarity, RoPE", f"{SIMILARITY}&scheme=RoPE&s=512", "Shift both positions by s"),
    ("similarity, ALiBi", f"{SIMILARITY}&scheme=ALiBi", "Beyond the trained length"),
    ("similarity, complex", f"{SIMILARITY}&scheme=complex+%28Wang+et+al.%29", "Beyond the trained length"),
    (
        "softmax saturation, largest",
        f"softmax_saturation?a=1000&mc=8000&dk=4096&temp=10&n=4096&scores={SIXTEEN_SCORES}",
        "The price of attention",
    ),
]
CACHE_FILLING_STEPS = [
    (
        f"encoding matrix, base {base}, {layout}",
        "encoding_matrix?n=4096&d=1024"
        + (f"&base={base}" if base != 10_000 else "")
        + (f"&layout={layout}" if layout != "interleaved" else ""),
        "What the naive schemes get wrong",
    )
    for base in BASES
    for layout in ("interleaved", "concatenated")
]
ALL_LOADS = "&".join(f"loads={load}" for load in (0, 1, 2, 3))
# A press with every evaluation at once, within the page's budget (two seeds): each adds runs and, since every
# evaluation's runs are also kept as one-fold studies in the session (the other windowing's, the further train
# load's, the second sweep's), more held per visitor than the default press
EVERY_EVALUATION = "&".join(
    [
        "n_seeds=2",
        *(f"loads={load}" for load in (0, 1, 2)),
        "compare_windowings=true",
        "snr=0&snr=8",
        "train_loads=0&train_loads=1&test_loads=2",
        "d_model_sweep=16&d_model_sweep=32",
        "pe_scale_sweep=0.0&pe_scale_sweep=1.0",
    ]
)


def status_kb(pid: int, field_name: str) -> int:
    """A `VmRSS:  1234 kB`-style field of /proc/<pid>/status, in kB; 0 once the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field_name}:"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def descendants(pid: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                # /proc/<pid>/stat: "pid (name) state ppid ..."; the name may hold spaces, so split after ')'
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
                continue
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def mb(kb: int) -> float:
    return kb * 1024 / 1e6


@dataclass
class MemoryWatch:
    """Samples the server and its children every 0.2 s in a thread; the server's own peak comes from VmHWM."""

    pid: int
    children_peak_kb: int = 0
    total_peak_kb: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self):
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self):
        while not self._stop.is_set():
            children = sum(status_kb(child, "VmRSS") for child in descendants(self.pid))
            self.children_peak_kb = max(self.children_peak_kb, children)
            self.total_peak_kb = max(self.total_peak_kb, status_kb(self.pid, "VmRSS") + children)
            self._stop.wait(0.2)

    def stop(self):
        self._stop.set()
        self._thread.join()

    @property
    def server_rss_kb(self) -> int:
        return status_kb(self.pid, "VmRSS")

    @property
    def server_peak_kb(self) -> int:
        return status_kb(self.pid, "VmHWM")


def start_server() -> tuple[subprocess.Popen, str]:
    try:
        return live_server.start_streamlit()
    except live_server.ServerDidNotStart as error:
        raise SystemExit(str(error)) from None


def settle(page, expect_text: str, timeout_ms: int = WAIT_MS) -> None:
    """Wait until `expect_text` shows and the script has finished; stop on an exception box."""
    page.get_by_text(expect_text).first.wait_for(timeout=timeout_ms)
    page.locator(IDLE).wait_for(timeout=timeout_ms)
    exceptions = page.locator('[data-testid="stException"]')
    if exceptions.count():
        raise SystemExit(f"the page raised: {exceptions.all_inner_texts()}")


def check_link_kept(page, query: str) -> None:
    """Streamlit drops or corrects a URL value its widget cannot take; then this step did not measure what
    it says, so stop."""
    asked = urllib.parse.parse_qs(query.partition("?")[2])
    shown = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
    changed = {key: (value, shown.get(key)) for key, value in asked.items() if shown.get(key) != value}
    if changed:
        raise SystemExit(f"the page changed these settings (asked, shown): {changed}")


def tour(
    page, url: str, train_timeout_s: float, report, fill_caches: bool = False, smoke: bool = False, every: bool = False
) -> None:
    """Every step, reported as it ends (--smoke: the home page, then the Fault lab's smallest press; with `every`
    the press has every evaluation, EVERY_EVALUATION)."""
    steps = EXPLAINER_STEPS[:1] if smoke else (CACHE_FILLING_STEPS if fill_caches else []) + EXPLAINER_STEPS
    for label, query, expect_text in steps:
        start = time.perf_counter()
        page.goto(f"{url}/{query}", wait_until="domcontentloaded")
        settle(page, expect_text)
        check_link_kept(page, query)
        report(label, time.perf_counter() - start)

    if not smoke:  # the Fault lab's largest data: all four loads, 2048-sample windows for the window counts
        start = time.perf_counter()
        page.goto(f"{url}/fault_lab?dataset=synthetic&{ALL_LOADS}&window=2048", wait_until="domcontentloaded")
        settle(page, "3 · Experiment")
        page.get_by_role("button", name="Use the synthetic set").click()
        settle(page, "loads 0, 1, 2, 3 HP)")
        report("fault lab, synthetic set at 0-3 HP", time.perf_counter() - start)

    # One training with the defaults on the default synthetic set (or every evaluation), in a fresh session.
    link = SMOKE_LINK if smoke else EVERY_EVALUATION if every else ""
    press = "smallest press" if smoke else "every evaluation" if every else "defaults"
    start = time.perf_counter()
    page.goto(f"{url}/fault_lab{'?' + link if link else ''}", wait_until="domcontentloaded")
    settle(page, "3 · Experiment")
    report(f"fault lab, {press}", time.perf_counter() - start)
    start = time.perf_counter()
    page.get_by_role("button", name="Train and compare").click()
    settle(page, "windowing · window", timeout_ms=int(train_timeout_s * 1000))  # the results caption
    report(f"fault lab, trained ({press})", time.perf_counter() - start)


def visitor(
    url: str, train_timeout_s: float, report, fill_caches: bool, smoke: bool = False, every: bool = False
) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:  # one per thread: Playwright's sync API is not thread-safe
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=live_server.CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        tour(page, url, train_timeout_s, report, fill_caches, smoke, every)
        browser.close()


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1, help="browser sessions taking the tour at once")
    parser.add_argument(
        "--fill-caches", action="store_true", help="first fill the Encoding matrix cache at its largest size"
    )
    parser.add_argument("--train-timeout", type=float, default=1200.0, help="seconds to wait for the training")
    parser.add_argument("--smoke", action="store_true", help="seconds: the home page and the smallest press")
    parser.add_argument(
        "--every-evaluation", action="store_true", help="the press has every evaluation at once (two seeds)"
    )
    return parser.parse_args()


def tours(url: str, watch: MemoryWatch, args: argparse.Namespace) -> list[BaseException]:
    """`args.sessions` browser sessions taking the tour at once, each line with the server's memory; what failed."""

    def reporter(session: int):
        def report(label: str, seconds: float) -> None:
            prefix = f"[{session}] " if args.sessions > 1 else ""
            print(
                f"{prefix}{label:<40} {seconds:7.1f} s   RSS {mb(watch.server_rss_kb):7.0f} MB   "
                f"peak so far {mb(watch.server_peak_kb):7.0f} MB",
                flush=True,
            )

        return report

    reporter(0)("server started", 0.0)
    failures: list[BaseException] = []

    def run(session: int) -> None:
        try:
            visitor(url, args.train_timeout, reporter(session), args.fill_caches, args.smoke, args.every_evaluation)
        except BaseException as error:  # reported after the other sessions finish
            failures.append(error)

    threads = [threading.Thread(target=run, args=(session,)) for session in range(1, args.sessions + 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures


def main() -> None:
    args = parse_arguments()
    if not Path(CHROMIUM).exists():
        if args.smoke:
            print(f"SKIPPED: {CHROMIUM} not found (apt-get install chromium)")
            return
        raise SystemExit(f"{CHROMIUM} not found (apt-get install chromium)")

    process, url = start_server()
    watch = MemoryWatch(process.pid)
    try:
        failures = tours(url, watch, args)
    finally:
        watch.stop()
        server_peak = mb(watch.server_peak_kb)
        process.terminate()
        process.wait(timeout=30)
    if failures:
        raise SystemExit(f"{len(failures)} session(s) failed: {failures[0]!r}")
    peak = max(server_peak + mb(watch.children_peak_kb), mb(watch.total_peak_kb))
    print(
        f"\nserver peak resident memory (VmHWM): {server_peak:.0f} MB; child processes at most "
        f"{mb(watch.children_peak_kb):.0f} MB; peak {peak:.0f} MB against the {BUDGET_MB:.0f} MB budget: "
        f"{'ok' if peak < BUDGET_MB else 'OVER'}  ({args.sessions} session(s)"
        f"{', caches filled' if args.fill_caches else ''}{', every evaluation' if args.every_evaluation else ''}, "
        f"{os.cpu_count()} CPUs)"
    )
    if peak >= BUDGET_MB:
        sys.exit(1)


if __name__ == "__main__":
    main()
