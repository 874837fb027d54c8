"""The hand-written attention core and the bit-drawn dropout masks of core.lab.encoder_kernels, against autograd
and closed forms."""

import numpy as np
import pytest
import torch

from core.lab.encoder_kernels import MASK_LEVELS, DropoutStream, attention_core, effective_dropout, keep_scale

BATCH, TOKENS, HEADS, D_HEAD = 3, 5, 2, 4
D_MODEL = HEADS * D_HEAD


def textbook_attention(qkv: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """softmax(q k^T / sqrt(d_head)) [x mask] @ v per head, as torch's nn.MultiheadAttention lays it out."""
    q, k, v = qkv.view(BATCH, TOKENS, 3, HEADS, D_HEAD).permute(2, 0, 3, 1, 4)
    weights = (q @ k.transpose(-1, -2) * D_HEAD**-0.5).softmax(dim=-1)
    if mask is not None:
        weights = weights * mask.view(BATCH, HEADS, TOKENS, TOKENS)
    return (weights @ v).transpose(1, 2).reshape(BATCH, TOKENS, D_MODEL)


@pytest.fixture
def qkv_and_mask():
    generator = torch.Generator().manual_seed(0)
    qkv = torch.randn(BATCH, TOKENS, 3 * D_MODEL, dtype=torch.float64, generator=generator) * 2
    keep = torch.rand(BATCH * HEADS, TOKENS, TOKENS, dtype=torch.float64, generator=generator) >= 0.3
    return qkv.requires_grad_(), keep.double() / 0.7


@pytest.mark.parametrize("with_mask", [True, False])
def test_attention_core_and_its_backward_equal_the_textbook_layer_in_float64(qkv_and_mask, with_mask):
    qkv, mask = qkv_and_mask
    mask = mask if with_mask else None
    ours, textbook = attention_core(qkv, HEADS, mask), textbook_attention(qkv, mask)
    torch.testing.assert_close(ours, textbook, atol=1e-12, rtol=1e-12)
    upstream = torch.randn_like(ours)
    (grad_ours,) = torch.autograd.grad(ours, qkv, upstream)
    (grad_textbook,) = torch.autograd.grad(textbook, qkv, upstream)
    torch.testing.assert_close(grad_ours, grad_textbook, atol=1e-12, rtol=1e-12)
    assert torch.autograd.gradcheck(lambda t: attention_core(t, HEADS, mask), (qkv,))


def test_attention_core_without_gradients_is_the_same_forward_and_captures_the_weights(qkv_and_mask):
    qkv, mask = qkv_and_mask
    captured: list[torch.Tensor] = []
    with torch.no_grad():
        out = attention_core(qkv, HEADS, mask, captured)
    torch.testing.assert_close(out, textbook_attention(qkv.detach(), mask), atol=1e-12, rtol=1e-12)
    (weights,) = captured
    assert weights.shape == (BATCH, HEADS, TOKENS, TOKENS)
    torch.testing.assert_close(weights.sum(dim=-1), torch.ones(BATCH, HEADS, TOKENS, dtype=torch.float64))


def test_effective_dropout_is_the_nearest_multiple_of_one_over_65536():
    assert effective_dropout(0.25) == 0.25 and keep_scale(0.25) == 4 / 3
    assert effective_dropout(0.1) == 6554 / 65536  # 0.1000061
    assert keep_scale(0.1) == 65536 / (65536 - 6554)
    assert abs(effective_dropout(0.1) - 0.1) < 0.5 / MASK_LEVELS


def test_a_mask_drops_the_effective_share_and_keeps_the_expectation():
    mask = DropoutStream(3).mask((1000, 1000), 0.1)
    assert mask.dtype == torch.float32 and mask.shape == (1000, 1000)
    assert torch.unique(mask).tolist() == [0.0, pytest.approx(keep_scale(0.1))]
    dropped = (mask == 0).double().mean().item()
    assert abs(dropped - effective_dropout(0.1)) < 0.0015  # five binomial sds (0.0003)
    assert abs(mask.double().mean().item() - 1.0) < 0.002


def test_a_mask_of_an_odd_size_is_drawn_whole_and_the_stream_moves_on():
    stream, again = DropoutStream(9), DropoutStream(9)
    first, second = stream.mask((7,), 0.5), stream.mask((7,), 0.5)
    torch.testing.assert_close(first, again.mask((7,), 0.5), atol=0, rtol=0)
    assert not torch.equal(first, second)  # 16 draws remain distinct with probability 1 - 2^-7


def test_masks_come_from_the_16_bit_halves_of_pcg64_raw_outputs():
    raw = np.random.PCG64(4).random_raw(2)
    draws = raw.view(np.uint16)[:5]
    expected = np.where(draws >= round(0.3 * MASK_LEVELS), keep_scale(0.3), 0.0)
    np.testing.assert_allclose(DropoutStream(4).mask((5,), 0.3).numpy(), expected, rtol=1e-7)


def test_the_cuda_path_through_autograd_computes_the_same_attention_with_the_same_masks():
    from core.lab.models import ModelConfig, build_model

    torch.manual_seed(0)
    model = build_model("B", 64, 3, ModelConfig(patch=8, heads=2, layers=1, ff_dim=16, dropout=0.2)).train()
    encoder, attention = model.encoder, model.encoder.layers[0].self_attn
    qkv = torch.randn(4, 8, 24)
    encoder.stream = DropoutStream(11)
    through_autograd = encoder._self_attention_autograd(qkv, attention)
    encoder.stream = DropoutStream(11)
    mask = encoder._mask((4 * 2, 8, 8), attention.dropout)
    torch.testing.assert_close(attention_core(qkv, 2, mask), through_autograd, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("p", [1.0, 0.999999, -0.1])
def test_a_drop_probability_that_keeps_nothing_or_is_negative_is_refused(p):
    with pytest.raises(ValueError, match="dropout p"):
        DropoutStream(0).mask((4,), p)
