"""What position signal a trained model got: the energy of the position signal against the token energy at the
encoder input, and for a learned table, its cosine similarity between positions and against the offset."""

from __future__ import annotations

import numpy as np
import torch


@torch.inference_mode()
def energy_ratio(model: torch.nn.Module, x: torch.Tensor) -> float | None:
    """Mean squared norm of the position signal per token over that of the (embedded) tokens, on windows `x`
    (None for a model without a position signal). Near 1 the position is as loud as the content."""
    if getattr(model, "position", None) is None:
        return None
    model.eval()
    tokens = model.tokenizer(x)  # (batch, tokens, patch)
    h = model.embedding(tokens) if model.embedding is not None else tokens  # (batch, tokens, embed_width)
    h = h * model.embed_multiplier
    position = model.pe_scale * model.position_table  # (tokens, position_width)
    return float(position.pow(2).sum(dim=-1).mean() / h.pow(2).sum(dim=-1).mean())


def cosine_matrix(table: np.ndarray) -> np.ndarray:
    """(T, T) cosine similarity between the rows (positions) of a position table (T, width)."""
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    return unit @ unit.T


def similarity_by_offset(table: np.ndarray) -> np.ndarray:
    """(T,) mean cosine similarity between positions t and t + k, for k = 0 .. T - 1."""
    matrix = cosine_matrix(table)
    return np.array([np.diagonal(matrix, offset=k).mean() for k in range(len(table))])


def learned_table(model: torch.nn.Module) -> np.ndarray | None:
    """The trained position table of B-learned (tokens, width), None for other models."""
    table = getattr(model, "position_table", None)
    if getattr(model, "position", None) != "learned" or table is None:
        return None
    return table.detach().cpu().numpy()
