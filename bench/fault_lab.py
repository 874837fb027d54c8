"""How long the Fault lab's one button takes: its defaults (3 seeds) on the synthetic set and on CWRU 0 HP.

Drives the real page with AppTest, as a visitor would: open, (load CWRU), press "Train and compare", and
rerun until the background job has finished. Prints wall seconds from the click to the verdict, the
per-model accuracy, and the verdict.

    python bench/fault_lab.py [--skip-cwru]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from core.lab import report  # noqa: E402
from ui.lab import keys  # noqa: E402

CWRU_DIR = ROOT.parent / "shared" / "data" / "cwru"


def click_and_wait(at: AppTest) -> float:
    """Press "Train and compare" and rerun until the background job has finished; seconds it took."""
    start = time.perf_counter()
    at.button(key="train").click().run()
    while keys.JOB_KEY in at.session_state:
        time.sleep(0.25)
        at.run()
    return time.perf_counter() - start


def press_train(at: AppTest, label: str) -> None:
    seconds = click_and_wait(at)
    results = at.session_state[keys.RESULTS_KEY]
    table = report.summary_table(results)
    print(f"\n{label}: {seconds:.1f} s from the click to the verdict ({results['runs'][0]['device']})")
    for _, row in table.iterrows():
        print(
            f"  {row['model']:<4} accuracy {100 * row['accuracy_mean']:.1f} ± {100 * row['accuracy_sd']:.1f} %"
            f"  F1 {100 * row['f1_mean']:.1f} ± {100 * row['f1_sd']:.1f} %  (n={row['seeds']})"
        )
    print(f"  verdict: {results['verdict']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-cwru", action="store_true")
    args = parser.parse_args()

    at = AppTest.from_file(str(ROOT / "pages" / "fault_lab.py"), default_timeout=600)
    at.run()
    print(
        f"settings: models {at.multiselect(key='models').value}, seeds {at.slider(key='seeds').value}, "
        f"epochs {at.slider(key='epochs').value}, window {at.selectbox(key='win').value}, "
        f"windowing {at.radio(key='windowing').value}"
    )
    press_train(at, "synthetic set (default)")

    if args.skip_cwru:
        return
    if not CWRU_DIR.is_dir():
        print(f"\nCWRU skipped: {CWRU_DIR} not found")
        return
    at.radio(key="src").set_value("cwru").run()
    at.text_input(key="cwru_dir").set_value(str(CWRU_DIR)).run()
    at.button(key="load_cwru").click().run()
    press_train(at, "CWRU 0 HP")


if __name__ == "__main__":
    main()
