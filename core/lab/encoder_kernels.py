"""The hot inner parts of the Transformer models' training step, written for speed on a CPU core: seeded
dropout masks drawn as raw random bits, and the attention core (scores, softmax, dropout, mixing) as one
autograd function with its backward written out.

Why by hand. These models are tiny (d_model 32, heads of 8 dimensions, 32 tokens), so a training step is
mostly not matrix multiplies but the work around them, and two pieces of that work were needlessly slow:

- Dropout masks. A float32 uniform per element (numpy's PCG64) spends 32 random bits and a conversion on a
  yes / no. Here 16 bits per element come straight from the generator's raw 64-bit output and are compared
  with an integer threshold, at a fraction of the cost (bench/train.py times the step). The drop probability
  is then a multiple of 1/65536 (0.1 becomes 0.100006, see `effective_dropout`) and the kept elements are
  scaled by the exact inverse of its complement, so a layer's expected output is unchanged.
- The attention's batched products. On the CPU, a per-head product whose result is tokens x d_head, such as
  weights @ values, runs far slower than the same product laid out as d_head x tokens. Every product here,
  forward and backward, is taken in the fast layout (the transposed product, read back as a view), and the
  softmax backward folds the dropout mask into one pass.

The functions compute exactly what the textbook layer computes (tested against autograd in float64); only
rounding differs. CUDA keeps torch's own autograd path (core.lab.models), where these layouts do not matter.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch.autograd.function import once_differentiable

LOG2_E = math.log2(math.e)
MASK_LEVELS = 2**16  # a mask element is kept when a 16-bit random integer is >= round(p * MASK_LEVELS)


def effective_dropout(p: float) -> float:
    """The drop probability a mask really has for a requested `p`: the nearest multiple of 1/65536."""
    return round(p * MASK_LEVELS) / MASK_LEVELS


def keep_scale(p: float) -> float:
    """What a kept element is multiplied by: 1 / (1 - effective p), so the expected value is unchanged."""
    threshold = round(p * MASK_LEVELS)
    if not 0 <= threshold < MASK_LEVELS:
        raise ValueError(f"dropout p must be in [0, 1) and leave something kept, got {p}")
    return MASK_LEVELS / (MASK_LEVELS - threshold)


class DropoutStream:
    """Seeded dropout masks, one stream per training run: a run's masks depend on its seed alone, even when
    several runs train at once in threads of one process (core.lab.jobs). On the CPU the bits come from numpy's
    PCG64 (its raw 64-bit outputs, four 16-bit draws each); on a GPU from a torch generator on that GPU."""

    def __init__(self, seed: int, device: str | torch.device = "cpu"):
        self.device = torch.device(device)
        if self.device.type == "cpu":
            self._bits = np.random.PCG64(seed)
        else:
            self._torch = torch.Generator(device=self.device).manual_seed(seed)

    def mask(self, shape: torch.Size | tuple[int, ...], p: float) -> torch.Tensor:
        """A float32 multiplier of `shape` on the stream's device: 0 with the effective probability of `p`,
        else keep_scale(p)."""
        threshold = round(p * MASK_LEVELS)
        scale = np.float32(keep_scale(p))
        if self.device.type == "cpu":
            n = int(np.prod(shape))
            draws = self._bits.random_raw((n + 3) // 4).view(np.uint16)[:n]
            return torch.from_numpy(np.multiply(draws >= threshold, scale, dtype=np.float32)).view(shape)
        uniform = torch.rand(tuple(shape), generator=self._torch, device=self.device)
        return uniform.ge_(threshold / MASK_LEVELS).mul_(float(scale))


def dropout(x: torch.Tensor, p: float, training: bool, stream: DropoutStream | None) -> torch.Tensor:
    """Inverted dropout, as nn.Dropout: zero each element with (effective) probability p and scale the rest
    by 1 / (1 - p); the mask comes from `stream`, or from torch's global generator when it is None."""
    if not training or p == 0.0:
        return x
    if stream is None:
        mask = torch.rand(x.shape, device=x.device).ge_(effective_dropout(p)).mul_(keep_scale(p))
    else:
        mask = stream.mask(x.shape, p)
    if x.dtype != torch.float32:
        # bf16 activations under CUDA autocast: a bf16 multiplier would round 1 / (1 - p) (1.111 -> 1.109),
        # so the mask is applied as 0 / 1 and the scale as a Python float, at full precision
        return x * mask.ne(0).to(x.dtype) * keep_scale(p)
    return x * mask


def attention_core(
    qkv: torch.Tensor, heads: int, mask: torch.Tensor | None, captured: list[torch.Tensor] | None = None
) -> torch.Tensor:
    """softmax(q k^T / sqrt(d_head)) [x dropout mask] @ v per head, from the input projection's output.

    qkv: (batch, tokens, 3 d_model), torch's in_proj layout (q, k, v, each split into heads); mask: None or
    a (batch * heads, tokens, tokens) multiplier from DropoutStream.mask. Returns (batch, tokens, d_model),
    the heads side by side as out_proj expects. `captured` gets each call's weights before dropout."""
    if torch.is_grad_enabled() and qkv.requires_grad:
        return _AttentionCore.apply(qkv, heads, mask, captured)
    return _attention_forward(qkv, heads, mask, captured)[0]


def _attention_forward(
    qkv: torch.Tensor, heads: int, mask: torch.Tensor | None, captured: list[torch.Tensor] | None
) -> tuple[torch.Tensor, ...]:
    batch, tokens, width = qkv.shape
    d_model = width // 3
    d_head = d_model // heads
    q, k, v = qkv.view(batch, tokens, 3, heads, d_head).permute(2, 0, 3, 1, 4)  # each (batch, heads, tokens, d_head)
    # the query scaled once here (tokens x d_head numbers) rather than the scores (tokens x tokens), and by
    # log2(e) too: softmax(s) = 2^(s log2 e - max) / sum, and torch's exp2 on the CPU is much faster than its exp
    q_scaled = q.reshape(batch * heads, tokens, d_head) * (d_head**-0.5 * LOG2_E)  # (batch*heads, tokens, d_head)
    k = k.reshape(batch * heads, tokens, d_head)  # (batch*heads, tokens, d_head)
    v_t = v.transpose(-2, -1).reshape(batch * heads, d_head, tokens)  # (batch*heads, d_head, tokens)
    weights = torch.bmm(q_scaled, k.transpose(1, 2))  # (batch*heads, tokens, tokens), scores in base 2
    weights.sub_(weights.amax(dim=-1, keepdim=True)).exp2_()
    weights.div_(weights.sum(dim=-1, keepdim=True))  # the softmax of the scores
    if captured is not None:
        captured.append(weights.detach().view(batch, heads, tokens, tokens))
    dropped = weights * mask if mask is not None else weights
    # mixed = dropped @ v, taken as v^T @ dropped^T: a d_head x tokens result is the fast layout
    mixed_t = torch.bmm(v_t, dropped.transpose(1, 2))  # (batch*heads, d_head, tokens)
    mixed = mixed_t.view(batch, heads, d_head, tokens).permute(0, 3, 1, 2).reshape(batch, tokens, d_model)
    return mixed, q_scaled, k, v_t, weights, dropped


class _AttentionCore(torch.autograd.Function):
    @staticmethod
    def forward(ctx, qkv, heads, mask, captured):  # type: ignore[override]
        mixed, q_scaled, k, v_t, weights, dropped = _attention_forward(qkv, heads, mask, captured)
        ctx.heads = heads
        ctx.save_for_backward(q_scaled, k, v_t, weights, dropped)
        return mixed

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_mixed):  # type: ignore[override]
        q_scaled, k, v_t, weights, dropped = ctx.saved_tensors
        batch, tokens, d_model = grad_mixed.shape
        heads = ctx.heads
        d_head = d_model // heads
        per_head = grad_mixed.view(batch, tokens, heads, d_head)  # (batch, tokens, heads, d_head)
        grad_t = per_head.permute(0, 2, 3, 1).reshape(batch * heads, d_head, tokens)  # each head's, transposed
        grad_dropped = torch.bmm(grad_t.transpose(1, 2), v_t)  # (batch*heads, tokens, tokens)
        grad_v_t = torch.bmm(grad_t, dropped)  # (batch*heads, d_head, tokens)
        # softmax backward with the mask folded in: weights * (g * mask - sum(g * mask * weights)), and
        # g * mask * weights is g * dropped
        grad_scores = grad_dropped.mul_(dropped)
        row_sums = grad_scores.sum(dim=-1, keepdim=True)  # (batch*heads, tokens, 1)
        grad_scores.addcmul_(weights, row_sums, value=-1.0)  # (batch*heads, tokens, tokens)
        grad_q_t = torch.bmm(k.transpose(1, 2), grad_scores.transpose(1, 2)).mul_(d_head**-0.5)  # (b*h, d_head, tokens)
        # q_scaled carries log2(e) as well, which the natural-log scores do not
        grad_k_t = torch.bmm(q_scaled.transpose(1, 2), grad_scores).div_(LOG2_E)  # (batch*heads, d_head, tokens)
        grad_qkv = grad_mixed.new_empty(batch, tokens, 3, heads, d_head)
        for index, part in enumerate((grad_q_t, grad_k_t, grad_v_t)):
            grad_qkv[:, :, index].copy_(part.view(batch, heads, d_head, tokens).permute(0, 3, 1, 2))
        return grad_qkv.view(batch, tokens, 3 * d_model), None, None, None
