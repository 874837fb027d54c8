"""Noise robustness: every run scored again on its test windows with white Gaussian noise at set SNRs
(core.lab.vibration.noise makes the noisy copies, a study's noise tests scores the same). No extra training runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from core.lab.contract import BLOCK_METRICS, check_cells_by_model, check_keys, is_number, require, run_models
from core.lab.evaluations.base import MAIN, Evaluation, RunsByStage, Setting
from core.lab.stats.summary import cell
from core.lab.stats.words import percent_cell
from core.lab.vibration.noise import check_snr_list, noise_name, noisy_test_sets


def noise_block(runs: Sequence[Mapping[str, Any]], models: Sequence[str], snr_db: Sequence[float]) -> dict[str, Any]:
    """The `noise` block of the results JSON from runs that scored `noisy_test_sets` as extra tests."""
    return {
        "snr_db": [float(snr) for snr in snr_db],
        "definition": "white Gaussian noise added to each test window at SNR = 10·log10(P_signal / P_noise) "
        "of that window; one noise draw per seed, shared by all models and SNRs",
        **{
            metric: {
                model: [
                    cell([run["extra_tests"][noise_name(snr)][metric] for run in runs if run["model"] == model])
                    for snr in snr_db
                ]
                for model in models
            }
            for metric in BLOCK_METRICS
        },
    }


def noise_table(block: Mapping[str, Any], metric: str = "accuracy") -> pd.DataFrame:
    """Rows: models; columns: SNR in dB; cells: mean ± sd in %."""
    columns = [f"{snr:g} dB" for snr in block["snr_db"]]
    return pd.DataFrame(
        {model: [percent_cell(c) for c in cells] for model, cells in block[metric].items()}, index=columns
    ).T


class Noise(Evaluation):
    """Every run scored again on its test windows with white noise at set SNRs; no extra training."""

    key = "noise"
    title = "Robustness to noise"
    settings = (
        Setting(
            "snr_db",
            "floats",
            "noise robustness: SNRs in dB; write --snr=-4,0,4,8 (with '=')",
            flag="--snr",
            label="Noise robustness: test SNR (dB)",
            key="snr",
            choices=(-4, 0, 4, 8, 12),
            equals=True,
        ),
    )
    caption = "White noise added to each test window at SNR = 10·log10(P_signal / P_noise)."

    @classmethod
    def check(cls, values, plan):
        """The SNRs checked, or None when none is asked for."""
        return None if values["snr_db"] is None else {"snr_db": check_snr_list(values["snr_db"])}

    def run_test_sets(self, stage, seed):
        """Noisy copies of the experiment's test windows, the noise drawn from the run's seed."""
        return noisy_test_sets(stage.windows, self.values["snr_db"], seed) if stage.key == MAIN else {}

    def block(self, plan, runs: RunsByStage):
        """A cell per model and SNR."""
        return noise_block(runs[MAIN], plan.models, self.values["snr_db"])

    @classmethod
    def validate(cls, block, results):
        """The SNRs, the definition, and a cell per model and SNR."""
        check_keys("noise", block, ("snr_db", "definition", *BLOCK_METRICS))
        snr = block["snr_db"]
        require(
            isinstance(snr, list) and snr and all(is_number(v) for v in snr), "noise.snr_db must be a list of numbers"
        )
        require(isinstance(block["definition"], str), "noise.definition must be text")
        check_cells_by_model("noise", block, run_models(results), (len(snr),))

    @classmethod
    def tables(cls, block):
        """One table: accuracy per model and SNR."""
        return [("Accuracy % with white noise at each SNR (mean ± sd over seeds)", noise_table(block))]
