"""The hosted link rehearsed on this machine: the real server under the host's memory and CPU, two ordinary
visitors and one hostile visitor at the same time.

    python bench/hosted.py [--budget-s 330]
    python bench/hosted.py --smoke    # seconds: one visitor's smallest press and the two cheapest attacks

Starts `streamlit run app.py` on 127.0.0.1 (tests/live_server.py) inside a cgroup whose hard memory limit is
core.limits.HOST_MEMORY_BYTES (v2: memory.max; v1: memory.limit_in_bytes; without a writable cgroup it says so
and reports the peak resident memory only), pinned to one CPU (taskset). Then, in Debian's Chromium (Playwright),
at once:

- two ordinary visitors open the Fault lab, press its default comparison (Train, key `train`) and wait for the
  verdict;
- a hostile visitor replays attacks, each on a fresh page (its own session): a second tab that starts training
  and is closed, a link with every model and the most seeds and epochs, a compressed .mat that expands about a
  thousandfold, a results JSON of thousands of classes just under the reopen limit, a JSON nested deeper than
  Python's recursion limit, several files near the upload limit at once, typed folder paths (`~root/x`, control
  characters, 5000 characters), a = inf on the Softmax page, and the home page's tokens as a markdown link and
  image.

It prints whether the server survived (it still answers /_stcore/health, and the cgroup records no OOM kill), each
ordinary visitor's seconds from the click to the verdict and the verdict, the peak memory, and every line the
hostile visitor was refused with. An attack that was not refused is reported as "no refusal seen", never as a
failure of the bench. Every wait has a timeout, all traffic stays on 127.0.0.1, and the cgroup, the server and
the browsers are removed at the end.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.io

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.fault_lab import SMOKE_LINK  # noqa: E402
from bench.memory import IDLE, MemoryWatch, mb  # noqa: E402
from core.lab.models import MODEL_NAMES  # noqa: E402
from core.limits import HOST_MEMORY_BYTES, MAX_REOPENED_BYTES, MAX_UPLOAD_FILE_BYTES  # noqa: E402
from tests import live_server  # noqa: E402

CHROMIUM = str(live_server.CHROMIUM)
OFF_HOST = "http://127.0.0.1:9"  # the discard port: a link or image the page renders points nowhere off this machine
STEP_S = 90.0  # the longest one page load or one action may take on the pinned server
LAST_ATTACK_S = 45.0  # no attack starts this close to the deadline: a cheap one takes about this long
started = time.perf_counter()
lock = threading.Lock()
server_gone = threading.Event()  # set when the server process has ended: the visitors stop waiting for it


def say(who: str, text: str) -> None:
    with lock:
        print(f"[{time.perf_counter() - started:6.1f} s] {who}: {text}", flush=True)


def one_line(text: str, limit: int = 300) -> str:
    """Page text as one printable line (typed control characters shown escaped)."""
    flat = " / ".join(part.strip() for part in text.splitlines() if part.strip())
    flat = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in flat)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def settle(page, timeout_s: float = STEP_S) -> None:
    """Wait until the script has been idle for a second, so a rerun an action started has run."""
    deadline = time.perf_counter() + timeout_s
    while True:
        page.wait_for_timeout(700)
        page.locator(IDLE).wait_for(timeout=max(1.0, deadline - time.perf_counter()) * 1000)
        page.wait_for_timeout(1000)
        if page.locator(IDLE).count() or time.perf_counter() > deadline:
            return


def messages(page) -> list[str]:
    """Every error and warning on the page, tracebacks, and upload chips that show an error."""
    found = []
    for kind in ("Error", "Warning"):
        texts = page.locator(f'[data-testid="stAlertContent{kind}"]').all_inner_texts()
        found += [f"{kind.lower()}: {one_line(t)}" for t in texts]
    found += [f"TRACEBACK: {one_line(t)}" for t in page.locator('[data-testid="stException"]').all_inner_texts()]
    chips = page.locator('[data-testid="stFileChip"]:has([data-testid="stFileChipIconError"])').all_inner_texts()
    return found + [f"upload refused: {one_line(t)}" for t in chips]


def open_page(browser, url: str, query: str, expect: str):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(STEP_S * 1000)
    page.goto(f"{url}/{query}", wait_until="domcontentloaded")
    page.get_by_text(expect).first.wait_for()
    settle(page)
    return page


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=live_server.CHROMIUM_FLAGS)


# --- the host's memory limit: a cgroup of this bench's own ------------------------------------------------


class MemoryCage:
    """A memory cgroup with a hard limit that the server starts inside (its shell moves itself in, then execs
    the server, so nothing the server allocates is charged elsewhere). v2 when the unified hierarchy offers the
    memory controller, else v1 nested under this bench's own memory cgroup (so whatever bounds the bench still
    bounds the server), else none, with the reason."""

    def __init__(self, path: Path | None, version: int, why: str = ""):
        self.path, self.version, self.why = path, version, why

    @classmethod
    def create(cls, limit: int) -> MemoryCage:
        name = f"pe-lab-hosted-{os.getpid()}"
        mounts = [line.split() for line in Path("/proc/self/mounts").read_text().splitlines()]
        reasons = []
        for _, point, kind, *_ in mounts:
            if kind == "cgroup2":
                controllers = Path(point, "cgroup.subtree_control")
                if controllers.exists() and "memory" in controllers.read_text().split():
                    cage = cls._make(Path(point, name), 2, {"memory.max": limit, "memory.swap.max": 0}, reasons)
                    if cage:
                        return cage
                else:
                    reasons.append(f"{point} (cgroup v2) offers no memory controller")
        for _, point, kind, options, *_ in mounts:
            if kind == "cgroup" and "memory" in options.split(","):
                own = next(
                    (
                        line.split(":", 2)[2]
                        for line in Path("/proc/self/cgroup").read_text().splitlines()
                        if "memory" in line.split(":", 2)[1].split(",")
                    ),
                    "/",
                )
                limits = {"memory.limit_in_bytes": limit, "memory.memsw.limit_in_bytes": limit}
                for parent in dict.fromkeys((Path(point + own), Path(point))):
                    cage = cls._make(parent / name, 1, limits, reasons)
                    if cage:
                        return cage
        return cls(None, 0, "; ".join(reasons) or "no cgroup mount found")

    @classmethod
    def _make(cls, path: Path, version: int, limits: dict, reasons: list) -> MemoryCage | None:
        try:
            path.mkdir()
        except OSError as error:
            reasons.append(f"cannot create {path}: {error.strerror}")
            return None
        try:
            for i, (knob, value) in enumerate(limits.items()):
                if i == 0 or (path / knob).exists():  # the first is required; swap limits only where offered
                    (path / knob).write_text(str(value))
        except OSError as error:
            reasons.append(f"cannot set {knob} in {path}: {error.strerror}")
            path.rmdir()
            return None
        return cls(path, version)

    def describe(self) -> str:
        if self.path is None:
            return f"NO memory limit (no writable cgroup: {self.why}); only the peak resident memory is measured"
        return f"cgroup v{self.version} {self.path}, hard limit {HOST_MEMORY_BYTES:,} bytes"

    def prefix(self) -> tuple[str, ...]:
        if self.path is None:
            return ()
        return ("sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.path / "cgroup.procs"))

    def _read(self, name: str) -> str | None:
        try:
            return (self.path / name).read_text() if self.path else None
        except OSError:
            return None

    def holds(self, pid: int) -> bool:
        return str(pid) in (self._read("cgroup.procs") or "").split()

    def current_bytes(self) -> int | None:
        text = self._read("memory.current" if self.version == 2 else "memory.usage_in_bytes")
        return int(text) if text and text.strip().isdigit() else None

    def peak_bytes(self) -> int | None:
        text = self._read("memory.peak" if self.version == 2 else "memory.max_usage_in_bytes")
        return int(text) if text and text.strip().isdigit() else None

    def oom_kills(self) -> int | None:
        """OOM kills in the cgroup (v2 memory.events, v1 memory.oom_control), None where not recorded."""
        text = self._read("memory.events" if self.version == 2 else "memory.oom_control") or ""
        counts = dict(line.split() for line in text.splitlines() if len(line.split()) == 2)
        return int(counts["oom_kill"]) if "oom_kill" in counts else None

    def remove(self) -> list[int]:
        """Remove the cgroup once empty; the pids still in it when it would not empty."""
        if self.path is None or not self.path.exists():
            return []
        for _ in range(50):
            left = [int(pid) for pid in (self._read("cgroup.procs") or "").split()]
            if not left:
                try:
                    self.path.rmdir()
                except OSError:
                    pass
                return []
            time.sleep(0.2)
        return left


# --- the ordinary visitors ---------------------------------------------------------------------------------

VERDICT_JS = """() => {
  const header = document.querySelector('.st-key-table_results_table');  // the results' table, then the verdict
  if (!header) return null;
  for (const info of document.querySelectorAll('[data-testid="stAlertContentInfo"]'))
    if (header.compareDocumentPosition(info) & Node.DOCUMENT_POSITION_FOLLOWING) return info.innerText;
  return null;
}"""


def ordinary_visitor(name: str, url: str, deadline: float, outcome: dict, query: str = "fault_lab") -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = open_page(browser, url, query, "3 · Experiment")
            before = set(messages(page))
            clicked = time.perf_counter()
            page.locator(".st-key-train button").click()
            say(name, "pressed Train (the default comparison)")
            most_ahead = 0
            while page.locator(".st-key-table_results_table").count() == 0:
                if time.perf_counter() > deadline:
                    raise TimeoutError("no verdict before the bench's deadline")
                if server_gone.is_set():
                    raise RuntimeError("the server process ended while this visitor waited")
                for text in page.locator('[data-testid="stAlertContentInfo"]').all_inner_texts():
                    if text.startswith("Waiting in the queue:"):
                        most_ahead = max(most_ahead, int(text.split(":")[1].split()[0]))
                refused = [m for m in messages(page) if m not in before and not m.startswith("warning")]
                if refused:  # refused or failed: no verdict will come
                    raise RuntimeError(f"the page showed {refused}")
                page.wait_for_timeout(1000)
            outcome["seconds"] = time.perf_counter() - clicked
            settle(page)
            outcome["verdict"] = one_line(page.evaluate(VERDICT_JS) or "(no verdict box found)", limit=400)
            outcome["most_ahead"] = most_ahead
            say(name, f"verdict after {outcome['seconds']:.1f} s")
        except Exception as error:  # reported in the summary; the other visitors go on
            outcome["error"] = one_line(f"{type(error).__name__}: {error}")
            say(name, f"gave up: {outcome['error']}")
        finally:
            browser.close()


# --- the hostile visitor's files ---------------------------------------------------------------------------


def build_files(folder: Path, smoke: bool = False) -> dict[str, Path]:
    """The attack files, built here so the bench needs nothing but the repository (none for --smoke, whose
    attacks upload nothing)."""
    files: dict[str, Path] = {}
    if smoke:
        return files
    zeros = np.zeros(64_000_000)  # 512 MB of doubles that compress to about 0.5 MB
    buffer = io.BytesIO()
    scipy.io.savemat(buffer, {"x": zeros}, do_compression=True)
    del zeros
    files["bomb"] = folder / "105.mat"
    files["bomb"].write_bytes(buffer.getvalue())

    # a results JSON valid in every field but with thousands of classes, padded to just under the reopen limit
    fixture = json.loads((ROOT / "tests" / "data" / "pipeline_random_split_cosine.json").read_text())["results"]
    runs = [run for run in fixture["runs"] if run["seed"] == fixture["runs"][0]["seed"]]
    n = int((MAX_REOPENED_BYTES * 0.98 / (2 * len(runs))) ** 0.5)  # each cell is "0," in the compact JSON
    fixture["class_names"] = [f"c{i}" for i in range(n)]
    for run in runs:
        run["per_class_f1"] = [0.0] * n
        run["confusion_matrix"] = [[0] * n for _ in range(n)]
    fixture["runs"] = runs
    text = json.dumps(fixture, separators=(",", ":"))
    files["classes"] = folder / "many_classes_results.json"
    files["classes"].write_text(text + " " * max(0, MAX_REOPENED_BYTES - 10_000 - len(text)))

    files["deep"] = folder / "deep.json"
    files["deep"].write_text("[" * 200_000 + "]" * 200_000)

    rng = np.random.default_rng(0)
    for i in range(3):  # 3 x just under one file's limit: over the session's total
        rows = "".join(",".join(f"{v:+.6f}" for v in row) + "\n" for row in rng.normal(size=(2_000, 4)))
        body = ("s1,s2,s3,s4\n" + rows * (MAX_UPLOAD_FILE_BYTES // len(rows)))[: MAX_UPLOAD_FILE_BYTES - 100_000]
        files[f"big{i}"] = folder / f"near_limit_{i}.csv"
        files[f"big{i}"].write_text(body[: body.rfind("\n") + 1])
    return files


# --- the hostile visitor's attacks (each on a fresh page: its own session) ---------------------------------


def second_tab_closed(browser, url: str, files: dict) -> list[str]:
    page = open_page(browser, url, "fault_lab", "3 · Experiment")
    page.locator(".st-key-train button").click()
    page.wait_for_timeout(5000)
    lines = messages(page)
    page.close()
    return lines or ["(no message: the tab's training started, then the tab was closed)"]


def every_model_link(browser, url: str, files: dict) -> list[str]:
    models = "&".join(f"models={urllib.parse.quote(m)}" for m in MODEL_NAMES)
    sweeps = (
        "&".join(f"d_model_sweep={d}" for d in (16, 32, 64, 128))
        + "&"
        + "&".join(f"snr={s}" for s in (-4, 0, 4, 8, 12))
    )
    page = open_page(
        browser, url, f"fault_lab?{models}&n_seeds=5&epochs=50&compare_windowings=true&{sweeps}", "3 · Experiment"
    )
    button = page.locator(".st-key-train button")
    if button.is_disabled():
        return messages(page) + ["(Train is disabled)"]
    button.click()
    settle(page)
    lines = messages(page)
    if page.locator(".st-key-stop button").count():  # it started: stop it, or it holds the one CPU for long
        page.locator(".st-key-stop button").click()
        settle(page)
        lines.append("(NOT refused: the training started; the bench pressed Stop)")
    page.close()
    return lines


def upload_and_press(browser, url: str, query: str, uploader: str, paths: list, button: str) -> list[str]:
    page = open_page(browser, url, query, "1 · Data")
    before = set(messages(page))
    folded = page.locator(f"details:has(.st-key-{uploader}) > summary")
    if folded.count() and not page.locator(f".st-key-{uploader}").is_visible():
        folded.first.click()  # an uploader in a folded part (the Fault lab's Open): its file list shows once open
    page.locator(f".st-key-{uploader} input[type=file]").set_input_files([str(p) for p in paths])
    chips = page.locator(f'.st-key-{uploader} [data-testid="stFileChip"]')
    chips.nth(len(paths) - 1).wait_for()  # every file listed, then every transfer finished
    deadline = time.perf_counter() + STEP_S
    while page.locator('[data-testid="stFileChipIconSpinner"]').count() and time.perf_counter() < deadline:
        page.wait_for_timeout(250)
    settle(page)
    target = page.locator(f".st-key-{button} button")
    if target.is_enabled():
        target.click()
        settle(page)
    lines = [line for line in messages(page) if line not in before]
    page.close()
    return lines


def mat_bomb(browser, url: str, files: dict) -> list[str]:
    return upload_and_press(browser, url, "fault_lab?dataset=csv", "csv_files", [files["bomb"]], "load_csv")


def many_classes_json(browser, url: str, files: dict) -> list[str]:
    return upload_and_press(browser, url, "fault_lab", "open_json", [files["classes"]], "open_file")


def deep_json(browser, url: str, files: dict) -> list[str]:
    return upload_and_press(browser, url, "fault_lab", "open_json", [files["deep"]], "open_file")


def near_limit_files(browser, url: str, files: dict) -> list[str]:
    paths = [files[f"big{i}"] for i in range(3)]
    return upload_and_press(browser, url, "fault_lab?dataset=csv", "csv_files", paths, "load_csv")


def typed_paths(browser, url: str, files: dict) -> list[str]:
    page = open_page(browser, url, "fault_lab?dataset=cwru", "1 · Data")
    before, lines = set(messages(page)), []
    for label, typed in (
        ("~root/x", "~root/x"),
        ("control characters", "data/\x00\x07\x1b[2J"),
        ("5000 chars", "/" + "a" * 4999),
    ):
        box = page.locator(".st-key-cwru_dir input")
        box.fill(typed)
        box.press("Enter")
        settle(page)
        page.locator(".st-key-load_cwru button").click()
        settle(page)
        shown = [line for line in messages(page) if line not in before]
        lines += [f"{label} -> {line}" for line in shown] or [f"({label}: no message)"]
    page.close()
    return lines


def softmax_inf(browser, url: str, files: dict) -> list[str]:
    page = open_page(browser, url, "softmax_saturation?a=inf", "The price of attention")
    notices = page.locator('[data-testid="stAlertContentInfo"]').all_inner_texts()  # the page says what it reset
    lines = messages(page) + [f"info: {one_line(t)}" for t in notices if "Link value" in t]
    value = page.locator(".st-key-a input").input_value()
    shown = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query).get("a")
    page.close()
    return lines + [f"(the a box shows {value!r}; the URL now has a={shown})"]


def home_tokens(browser, url: str, files: dict) -> list[str]:
    tokens = f"[click]({OFF_HOST}/x) ![img]({OFF_HOST}/y.png) dog"
    page = open_page(browser, url, f"?demo_tokens={urllib.parse.quote(tokens)}", "Shuffled:")
    links = page.locator(f'a[href^="{OFF_HOST}"]').count()
    images = page.locator(f'img[src^="{OFF_HOST}"]').count()
    lines = messages(page)
    page.close()
    rendered = f"{links} link(s) and {images} image(s) to {OFF_HOST} rendered"
    return lines + [f"({'escaped: ' if not links and not images else 'NOT escaped: '}{rendered})"]


# The cheap refusals first, the attacks on memory last: one that kills the server leaves the rest untried.
ATTACKS = (
    ("a second tab training, then closed", second_tab_closed),
    ("a link with every model, 5 seeds, 50 epochs, every sweep", every_model_link),
    ("typed folder paths", typed_paths),
    ("a=inf on the Softmax page", softmax_inf),
    ("home-page tokens as a markdown link and image", home_tokens),
    ("a JSON nested 200 000 deep", deep_json),
    ("three files just under the upload limit at once", near_limit_files),
    ("a results JSON of thousands of classes, just under the reopen limit", many_classes_json),
    ("a .mat expanding about 1000x (105.mat)", mat_bomb),
)


SMOKE_ATTACKS = tuple(attack for attack in ATTACKS if attack[1] in (softmax_inf, home_tokens))
SMOKE_PRESS = f"fault_lab?{SMOKE_LINK}"  # the page's smallest comparison


def healthy(url: str) -> bool:
    try:
        return urllib.request.urlopen(f"{url}/_stcore/health", timeout=10).status == 200
    except OSError:
        return False


def hostile_visitor(
    url: str, files: dict, deadline: float, report: list, memory: Callable[[], str], attacks: tuple = ATTACKS
) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            for name, attack in attacks:
                if server_gone.is_set() or time.perf_counter() > deadline - LAST_ATTACK_S:
                    why = "the server was gone" if server_gone.is_set() else "the bench's time was spent"
                    report.append((name, [f"(not tried: {why})"]))
                    continue
                before = memory()
                try:
                    lines = attack(browser, url, files)
                except Exception as error:  # a timeout or a page that never settled: reported, not raised
                    lines = [f"(the bench saw no answer: {one_line(f'{type(error).__name__}: {error}', 200)})"]
                lines.append(f"(memory before: {before}; after: {memory()})")
                if not healthy(url):
                    lines.append("(the server stopped answering /_stcore/health after this)")
                report.append((name, lines))
                say("hostile", f"{name}: {len(lines)} line(s)")
        finally:
            browser.close()


# --- the run -----------------------------------------------------------------------------------------------


def run_visitors(
    process, url: str, cage: MemoryCage, watch: MemoryWatch, visitors: dict, attacks: list, files: dict, budget_s: float
) -> tuple[dict[str, dict], list, list[str]]:
    """The ordinary visitors and the hostile one, side by side until the budget is spent, while a watcher says
    when the server process ends: each visitor's outcome, the hostile visitor's report, the threads still busy."""

    def memory() -> str:
        now, peak = cage.current_bytes(), cage.peak_bytes()
        if now is not None:
            return f"cgroup {now / 1e6:.0f} MB, peak so far " + (f"{peak / 1e6:.0f} MB" if peak else "n/a")
        return f"resident {mb(watch.server_rss_kb):.0f} MB, peak so far {mb(watch.server_peak_kb):.0f} MB"

    def watch_server() -> None:
        while process.poll() is None and not done.is_set():
            done.wait(0.5)
        if process.poll() is not None:
            server_gone.set()
            say("bench", f"the server process ended (exit {process.returncode}; OOM kills: {cage.oom_kills()})")

    done = threading.Event()
    watcher = threading.Thread(target=watch_server, daemon=True)
    watcher.start()
    deadline = time.perf_counter() + budget_s
    outcomes: dict[str, dict] = {name: {} for name in visitors}
    report: list = []
    threads = [
        threading.Thread(
            target=ordinary_visitor, args=(name, url, deadline, outcome, visitors[name]), name=name, daemon=True
        )
        for name, outcome in outcomes.items()
    ]
    threads.append(
        threading.Thread(
            target=hostile_visitor, args=(url, files, deadline, report, memory, attacks), name="hostile", daemon=True
        )
    )
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=max(1.0, deadline + LAST_ATTACK_S - time.perf_counter()))
    late = [thread.name for thread in threads if thread.is_alive()]  # their browsers close at exit
    done.set()
    return outcomes, report, late


def print_visitors(outcomes: dict[str, dict], cage: MemoryCage, watch: MemoryWatch, alive: bool, late: list) -> None:
    """Each ordinary visitor's click-to-verdict time, and the server's peak memory."""
    for name, outcome in outcomes.items():
        if "seconds" in outcome:
            print(
                f"{name}: click to verdict {outcome['seconds']:.1f} s (most experiments ahead in the queue: "
                f"{outcome['most_ahead']}); verdict: {outcome['verdict']}"
            )
        else:
            print(f"{name}: no verdict: {outcome.get('error', 'still waiting at the deadline')}")
    peak = cage.peak_bytes()
    shown = f"cgroup peak {peak / 1e6:.0f} MB" if peak is not None else "no cgroup peak"
    resident = f"VmHWM {mb(watch.server_peak_kb):.0f} MB" if alive else "VmHWM gone with the process"
    print(
        f"peak memory: {shown}; server peak resident {resident}, sampled every 0.2 s with children "
        f"{mb(watch.total_peak_kb):.0f} MB; limit {HOST_MEMORY_BYTES / 1e6:.0f} MB"
    )
    if late:
        print(f"still busy at the deadline: {', '.join(late)}")


def print_hostile(report: list, attacks: list, server_log: Path) -> None:
    """What the page refused of each attack, what it handled without a refusal, and the attacks not reached."""
    print("hostile visitor:")
    cancelled = [
        line.strip() for line in server_log.read_text(errors="replace").splitlines() if "stopped asking" in line
    ]
    for name, lines in report:
        if name.startswith("a second tab"):  # its job can only be seen going in the server's log
            lines.append(f"(server log: {' | '.join(cancelled) or 'no abandoned job was cancelled'})")
    for name, lines in list(report):
        refused = [line for line in lines if not line.startswith("(")]
        for line in refused:
            print(f"  refused  {name}: {line}")
        notes = [line for line in lines if line.startswith("(")]
        handled = any(note.startswith(("(escaped", "(server log: job")) for note in notes)
        if not refused:
            verdict = "handled" if handled else "no refusal seen"
            print(f"  {verdict}  {name}" + (f": {' '.join(notes)}" if notes else ""))
        elif notes:
            print(f"  note  {name}: {' '.join(notes)}")
    for name, _ in attacks[len(report) :]:
        print(f"  no refusal seen  {name}: (not reached before the deadline)")


def clean_up(folder: Path, cage: MemoryCage, process, watch: MemoryWatch | None) -> None:
    """Stop the watch and the server, kill what is left in this bench's own cgroup, remove the attack files."""
    if watch is not None:
        watch.stop()
    if process is not None:
        live_server.stop(process)
    leftovers = cage.remove()
    for pid in leftovers:  # only processes this bench put in its own cgroup
        os.kill(pid, signal.SIGKILL)
    if leftovers:
        cage.remove()
    shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget-s", type=float, default=300.0, help="seconds the visitors may take in all")
    parser.add_argument(
        "--smoke", action="store_true", help="seconds: one visitor's smallest press, the two cheapest attacks"
    )
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        if args.smoke:
            print(f"SKIPPED: {CHROMIUM} not found (apt-get install -y chromium)")
            return 0
        raise SystemExit(f"{CHROMIUM} not found (apt-get install -y chromium)")
    # --smoke: one visitor presses the page's smallest comparison; only the attacks that upload nothing
    visitors = {"visitor 1": SMOKE_PRESS} if args.smoke else {"visitor 1": "fault_lab", "visitor 2": "fault_lab"}
    attacks = SMOKE_ATTACKS if args.smoke else ATTACKS

    folder = Path(tempfile.mkdtemp(prefix="pe-lab-hosted-"))
    cage = MemoryCage.create(HOST_MEMORY_BYTES)
    process = watch = None
    try:
        files = build_files(folder, args.smoke)
        say("bench", f"attack files built in {folder}; {cage.describe()}")
        cpu = min(os.sched_getaffinity(0))
        pin = ("taskset", "-c", str(cpu)) if shutil.which("taskset") else ()
        server_log = folder / "server.log"
        process, url = live_server.start_streamlit(timeout_s=120, prefix=(*cage.prefix(), *pin), log=server_log)
        watch = MemoryWatch(process.pid)
        inside = cage.holds(process.pid)
        say(
            "bench",
            f"server {url}, pid {process.pid}, CPU {cpu if pin else 'not pinned (no taskset)'}, "
            f"in the cgroup: {inside}",
        )
        outcomes, report, late = run_visitors(process, url, cage, watch, visitors, attacks, files, args.budget_s)
        alive = process.poll() is None
        answers = healthy(url)
        kills = cage.oom_kills()
        print("\n=== hosted rehearsal ===")
        print(
            f"memory limit: {cage.describe()}; server pinned to {'CPU ' + str(cpu) if pin else 'no CPU (no taskset)'}"
        )
        print(
            f"server survived: {'yes' if alive and answers and not kills else 'NO'} (process running: {alive}, "
            f"/_stcore/health answers: {answers}, OOM kills in the cgroup: {kills if kills is not None else 'n/a'})"
        )
        print_visitors(outcomes, cage, watch, alive, late)
        print_hostile(report, attacks, server_log)
        return 0 if alive and answers and not kills else 1
    finally:
        clean_up(folder, cage, process, watch)


if __name__ == "__main__":
    raise SystemExit(main())
