"""How long the Fault lab's one button takes: its defaults (3 seeds) on the synthetic set and on CWRU 0 HP.

Drives the real page with AppTest, as a visitor would: open, (load CWRU), press "Train and compare", and
rerun until the background job has finished. Prints wall seconds from the click to the verdict, the
per-model accuracy, and the verdict.

    python bench/fault_lab.py [--skip-cwru]
    python bench/fault_lab.py --smoke    # seconds: one seed, one epoch, one layer, 512-sample windows
"""

from __future__ import annotations

import argparse
import sys
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from core.lab import report  # noqa: E402
from ui.lab import keys  # noqa: E402

CWRU_DIR = ROOT.parent / "shared" / "data" / "cwru"
SMOKE_LINK = "n_seeds=1&epochs=1&layers=1&window=512"  # the page's smallest press, as a link (the benches' --smoke)


def click_and_wait(at: AppTest) -> float:
    """Press "Train and compare" and rerun until the background job has finished; seconds it took."""
    start = time.perf_counter()
    at.button(key="train").click().run()
    while keys.JOB_KEY in at.session_state:
        time.sleep(0.25)
        at.run()
    return time.perf_counter() - start


def percent(mean: float, sd: float | None) -> str:
    """A fraction's mean ± sd in %, the sd shown as "-" where one seed gives none."""
    return f"{100 * mean:.1f} ± {'-' if sd is None else f'{100 * sd:.1f}'} %"


def press_train(at: AppTest, label: str) -> None:
    seconds = click_and_wait(at)
    results = at.session_state[keys.RESULTS_KEY]
    table = report.summary_table(results)
    print(f"\n{label}: {seconds:.1f} s from the click to the verdict ({results['runs'][0]['device']})")
    for _, row in table.iterrows():
        print(
            f"  {row['model']:<4} accuracy {percent(row['accuracy_mean'], row['accuracy_sd'])}"
            f"  F1 {percent(row['f1_mean'], row['f1_sd'])}  (n={row['seeds']})"
        )
    print(f"  verdict: {results['verdict']}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-cwru", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="seconds: the smallest press (1 seed, 1 epoch)")
    args = parser.parse_args(argv)

    at = AppTest.from_file(str(ROOT / "pages" / "fault_lab.py"), default_timeout=600)
    for key, value in urllib.parse.parse_qsl(SMOKE_LINK if args.smoke else ""):
        at.query_params[key] = value
    at.run()
    print(
        f"settings: models {at.multiselect(key='models').value}, seeds {at.slider(key='n_seeds').value}, "
        f"epochs {at.slider(key='epochs').value}, window {at.selectbox(key='window').value}, "
        f"windowing {at.radio(key='windowing').value}"
    )
    press_train(at, "synthetic set (default)")

    if args.skip_cwru or args.smoke:
        return
    if not CWRU_DIR.is_dir():
        print(f"\nCWRU skipped: {CWRU_DIR} not found")
        return
    at.radio(key="dataset").set_value("cwru").run()
    at.text_input(key="cwru_dir").set_value(str(CWRU_DIR)).run()
    at.button(key="load_cwru").click().run()
    press_train(at, "CWRU 0 HP")


if __name__ == "__main__":
    main()
