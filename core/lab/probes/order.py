"""The order test: a trained model scored again on its test windows with its input tokens shuffled (a seeded
random permutation per window, the same permutations for every model) and reversed.

The permutation acts on the input patches, before any embedding or position signal: for time tokens the
window's patches of samples, for FFT tokens the frequency bands. The CNN gets the same patch shuffle of its raw
window. Model A (no position signal, mean-pooled) cannot tell the orders apart: it scores a window as a bag of
patches. A drop under shuffling is read against A's (none) and the CNN's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from core.lab.stats.summary import mean_sd

ORDER_SEED = 20_231  # one set of permutations, shared by every model and run
ORDER_KEYS = ("accuracy", "shuffled", "reversed")


def permutations(n_windows: int, n_tokens: int, seed: int = ORDER_SEED) -> np.ndarray:
    """(n_windows, n_tokens): a random order of the tokens for each window, the same for every model."""
    rng = np.random.default_rng(seed)
    return rng.permuted(np.tile(np.arange(n_tokens), (n_windows, 1)), axis=1)


def reorder_patches(x: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    """Each window of `x` (batch, window) cut into len(order[0]) patches, put back in `order`'s order."""
    batch, window = x.shape
    tokens = order.shape[1]
    patches = x.reshape(batch, tokens, window // tokens)  # (batch, tokens, patch)
    return patches.gather(1, order[:, :, None].expand(-1, -1, window // tokens)).reshape(batch, window)


@torch.inference_mode()
def predict(
    model: torch.nn.Module, x: torch.Tensor, order: torch.Tensor | None = None, batch: int = 1024
) -> torch.Tensor:
    """Logits of `model` on `x`, its tokens in `order` (per window) when given."""
    model.eval()
    outputs = []
    for start in range(0, len(x), batch):
        chunk = x[start : start + batch]
        chunk_order = None if order is None else order[start : start + batch]
        if chunk_order is None:
            outputs.append(model(chunk).float())
        elif hasattr(model, "tokenizer"):
            outputs.append(model(chunk, token_order=chunk_order).float())
        else:  # the CNN: the same shuffle of its raw window's patches
            outputs.append(model(reorder_patches(chunk, chunk_order)).float())
    return torch.cat(outputs)  # (n, n_classes)


def n_tokens_of(model: torch.nn.Module, window: int, patch: int) -> int:
    """The tokens `model` cuts a window into: its tokenizer's count, else (the CNN) one per patch."""
    return model.tokenizer.n_tokens if hasattr(model, "tokenizer") else window // patch


def order_test(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, patch: int) -> dict[str, float]:
    """{"accuracy", "shuffled", "reversed"}: test accuracy as is, with shuffled and with reversed tokens."""
    tokens = n_tokens_of(model, x.shape[1], patch)
    shuffled = torch.as_tensor(permutations(len(x), tokens), device=x.device)
    reversed_order = torch.arange(tokens - 1, -1, -1, device=x.device).expand(len(x), -1)
    scores = {}
    for key, order in (("accuracy", None), ("shuffled", shuffled), ("reversed", reversed_order)):
        scores[key] = float((predict(model, x, order).argmax(dim=1) == y).float().mean())
    return scores


def order_summary(runs: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per model: the drop in accuracy points under shuffling and under reversal, mean ± sd over its runs
    and a 95 % t-interval (None for one run)."""
    from core.lab.stats.intervals import bounded, paired_interval

    summary: dict[str, dict[str, Any]] = {}
    for model in dict.fromkeys(run["model"] for run in runs):
        tests = [run["order_test"] for run in runs if run["model"] == model and "order_test" in run]
        if not tests:
            continue
        row = {"runs": len(tests), "accuracy": mean_sd([100 * t["accuracy"] for t in tests])}
        for kind in ("shuffled", "reversed"):
            drops = [100 * (t["accuracy"] - t[kind]) for t in tests]
            interval = bounded(paired_interval(np.array([drops])), "accuracy")  # a drop lies within 100 points
            row[f"{kind}_drop"] = {**mean_sd(drops), "ci95": interval.ci(0.95)}
        summary[model] = row
    return summary
