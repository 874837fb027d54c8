"""Where a trained Transformer attends: each layer's attention for one window, and the mean attention weight
as a function of the offset key - query over many windows (does a model attend by relative position?)."""

from __future__ import annotations

import numpy as np
import torch


@torch.inference_mode()
def attention_weights(model: torch.nn.Module, x: torch.Tensor) -> np.ndarray:
    """(layers, windows, heads, tokens, tokens): every layer's softmax attention of `model` on windows `x`."""
    model.eval()
    model.encoder.captured = []
    try:
        model(x)
        return torch.stack(model.encoder.captured).cpu().numpy()
    finally:
        model.encoder.captured = None


def profile_of(weights: np.ndarray) -> np.ndarray:
    """(2T - 1,) the mean attention weight at each offset key - query from -(T - 1) to T - 1, over every
    leading axis of `weights` (..., T, T) and every query with a key at that offset."""
    tokens = weights.shape[-1]
    flat = weights.reshape(-1, tokens, tokens)
    return np.array([np.diagonal(flat, offset=d, axis1=1, axis2=2).mean() for d in range(-(tokens - 1), tokens)])


def attention_by_offset(model: torch.nn.Module, x: torch.Tensor, batch: int = 256) -> np.ndarray:
    """(layers, 2T - 1): per layer, the mean attention weight at each offset key - query over the windows `x`,
    heads and queries (a model that attends by position shows a shaped profile; one that cannot, a flat one)."""
    totals = None
    for start in range(0, len(x), batch):
        weights = attention_weights(model, x[start : start + batch])  # (layers, b, heads, T, T)
        part = np.stack([profile_of(layer) for layer in weights]) * len(weights[0])
        totals = part if totals is None else totals + part
    return totals / len(x)
