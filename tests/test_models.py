"""Shapes, parameter counts (closed forms), tokens and the PE wiring of every Fault-lab model."""

import copy
import math

import numpy as np
import pytest
import torch

from core.explain.encodings import sinusoidal
from core.lab.models import MODEL_NAMES, DropoutStream, ModelConfig, Tokenizer, build_model, count_tokens, dropout

WINDOW, PATCH, CLASSES, FF = 64, 8, 3, 16
TOKENS = WINDOW // PATCH


def small_config(**overrides) -> ModelConfig:
    settings = dict(patch=PATCH, heads=2, layers=1, ff_dim=FF, dropout=0.1)
    return ModelConfig(**{**settings, **overrides})


def encoder_layer_parameters(d: int, ff: int) -> int:
    attention = 3 * d * d + 3 * d + d * d + d  # in_proj (q, k, v) and out_proj, with biases
    feed_forward = d * ff + ff + ff * d + d
    norms = 2 * 2 * d  # two LayerNorms, weight and bias
    return attention + feed_forward + norms


def head_parameters(d: int) -> int:
    return d * CLASSES + CLASSES


@pytest.mark.parametrize("d_model", [None, 16])
def test_transformer_parameter_counts_match_closed_forms(d_model):
    config = small_config(d_model=d_model)
    d = d_model or PATCH
    encoder_a = encoder_layer_parameters(PATCH, FF) + head_parameters(PATCH)
    encoder_b = encoder_layer_parameters(d, FF) + head_parameters(d)
    embedding = PATCH * d + d
    concat_embedding = PATCH * (d - d // 2) + (d - d // 2)
    expected = {
        "A": encoder_a,
        "A+PE": encoder_a,  # the sinusoidal table is a buffer, not a parameter
        "B-noPE": embedding + encoder_b,
        "B": embedding + encoder_b,
        "B-learned": embedding + encoder_b + TOKENS * d,
        "B-concat": concat_embedding + encoder_b,
    }
    for name, count in expected.items():
        assert build_model(name, WINDOW, CLASSES, config).n_parameters == count, name


def test_b_at_default_width_differs_from_a_only_by_the_embedding():
    config = small_config()
    a = build_model("A", WINDOW, CLASSES, config).n_parameters
    b = build_model("B", WINDOW, CLASSES, config).n_parameters
    assert b - a == PATCH * PATCH + PATCH


def test_cnn_parameter_count_matches_closed_form():
    c = 4
    config = small_config(cnn_channels=c)
    widths = [c, 2 * c, 4 * c, 4 * c, 4 * c]
    convolutions = (1 * c * 64 + c) + sum(w_in * w_out * 3 + w_out for w_in, w_out in zip(widths, widths[1:]))
    batch_norms = sum(2 * w for w in widths)
    expected = convolutions + batch_norms + 4 * c * CLASSES + CLASSES
    assert build_model("CNN", WINDOW, CLASSES, config).n_parameters == expected


@pytest.mark.parametrize("tokens", ["time", "fft"])
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_every_model_maps_a_batch_of_windows_to_class_logits(name, tokens):
    torch.manual_seed(0)
    model = build_model(name, WINDOW, CLASSES, small_config(tokens=tokens, patch=4 if tokens == "fft" else PATCH))
    logits = model(torch.randn(5, WINDOW))
    assert logits.shape == (5, CLASSES)
    assert torch.isfinite(logits).all()


def test_time_tokens_are_consecutive_patches():
    x = torch.arange(2 * WINDOW, dtype=torch.float32).reshape(2, WINDOW)
    tokens = Tokenizer(WINDOW, small_config())(x)
    assert tokens.shape == (2, TOKENS, PATCH)
    assert torch.equal(tokens[1, 3], x[1, 3 * PATCH : 4 * PATCH])


def test_fft_tokens_are_frequency_bands_with_the_orthonormal_magnitude():
    # A cosine of amplitude a at rfft bin k has |X_k| = a·N/2, i.e. a·sqrt(N)/2 with the "ortho" norm.
    n, patch, k, amplitude = 256, 8, 37, 3.0
    t = torch.arange(n, dtype=torch.float64)
    x = (amplitude * torch.cos(2 * math.pi * k * t / n)).float()[None]
    tokens = Tokenizer(n, ModelConfig(patch=patch, tokens="fft"))(x)
    assert tokens.shape == (1, n // 2 // patch, patch)
    band, slot = divmod(k, patch)
    assert tokens[0, band, slot].item() == pytest.approx(amplitude * math.sqrt(n) / 2, rel=1e-5)
    assert tokens.sum().item() == pytest.approx(tokens[0, band, slot].item(), rel=1e-4)


def test_token_count_and_clear_errors_for_windows_that_do_not_cut():
    assert count_tokens(1024, ModelConfig(patch=32)) == 32
    assert count_tokens(1024, ModelConfig(patch=32, tokens="fft")) == 16  # 512 bins, DC to below Nyquist
    with pytest.raises(ValueError, match="pick a patch that divides 100"):
        count_tokens(100, ModelConfig(patch=32))
    with pytest.raises(ValueError, match="even window"):
        count_tokens(99, ModelConfig(patch=3, tokens="fft"))
    with pytest.raises(ValueError, match="tokens must be one of"):
        count_tokens(64, ModelConfig(tokens="wavelet"))


def test_heads_must_divide_the_width_with_a_clear_error():
    with pytest.raises(ValueError, match=r"heads=3 must divide d_model=8.*\[1, 2, 4, 8\]"):
        build_model("A", WINDOW, CLASSES, small_config(heads=3))
    with pytest.raises(ValueError, match="heads=3 must divide d_model=16"):
        build_model("B", WINDOW, CLASSES, small_config(heads=3, d_model=16))


def test_unknown_model_and_too_few_classes_are_refused():
    with pytest.raises(ValueError, match="unknown model 'C'.*B-noPE"):
        build_model("C", WINDOW, CLASSES, small_config())
    with pytest.raises(ValueError, match="at least 2 classes"):
        build_model("A", WINDOW, 1, small_config())


def test_a_ignores_d_model_and_runs_at_the_patch_width():
    model = build_model("A", WINDOW, CLASSES, small_config(d_model=32))
    assert model.head.in_features == PATCH


def test_the_sinusoidal_table_comes_from_core_encodings_and_is_not_saved():
    model = build_model("B", WINDOW, CLASSES, small_config(pe_base=500.0))
    expected = sinusoidal(TOKENS, PATCH, 500.0).astype(np.float32)
    assert model.position_table.dtype == torch.float32
    np.testing.assert_array_equal(model.position_table.numpy(), expected)
    assert "position_table" not in model.state_dict()


def encoder_input(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    captured = {}
    hook = model.encoder.register_forward_pre_hook(lambda module, args: captured.setdefault("h", args[0]))
    model.eval()
    with torch.no_grad():
        model(x)
    hook.remove()
    return captured["h"]


def test_b_and_b_nope_differ_only_by_the_scaled_pe():
    torch.manual_seed(0)
    no_pe = build_model("B-noPE", WINDOW, CLASSES, small_config())
    x = torch.randn(4, WINDOW)
    for scale in (0.0, 1.0, 2.5):
        b = build_model("B", WINDOW, CLASSES, small_config(pe_scale=scale))
        b.load_state_dict(no_pe.state_dict())  # same parameters: the PE is a buffer
        difference = encoder_input(b, x) - encoder_input(no_pe, x)
        expected = scale * torch.from_numpy(sinusoidal(TOKENS, PATCH)).float()
        torch.testing.assert_close(difference, expected.expand(4, -1, -1), atol=1e-5, rtol=0)


def test_a_plus_pe_adds_the_pe_to_the_raw_tokens():
    torch.manual_seed(0)
    a = build_model("A", WINDOW, CLASSES, small_config())
    a_pe = build_model("A+PE", WINDOW, CLASSES, small_config())
    a_pe.load_state_dict(a.state_dict())
    x = torch.randn(2, WINDOW)
    torch.testing.assert_close(encoder_input(a, x), x.reshape(2, TOKENS, PATCH))
    torch.testing.assert_close(
        encoder_input(a_pe, x) - encoder_input(a, x),
        torch.from_numpy(sinusoidal(TOKENS, PATCH)).float().expand(2, -1, -1),
        atol=1e-6,
        rtol=0,
    )


def test_embed_scale_multiplies_the_embedding_by_sqrt_d_model():
    torch.manual_seed(0)
    plain = build_model("B-noPE", WINDOW, CLASSES, small_config(d_model=16))
    scaled = build_model("B-noPE", WINDOW, CLASSES, small_config(d_model=16, embed_scale=True))
    scaled.load_state_dict(plain.state_dict())
    x = torch.randn(3, WINDOW)
    torch.testing.assert_close(encoder_input(scaled, x), 4.0 * encoder_input(plain, x))


def test_b_concat_puts_the_pe_in_the_second_half_of_each_token():
    torch.manual_seed(0)
    model = build_model("B-concat", WINDOW, CLASSES, small_config(d_model=16, pe_scale=0.5))
    h = encoder_input(model, torch.randn(3, WINDOW))
    assert h.shape == (3, TOKENS, 16)
    expected = 0.5 * torch.from_numpy(sinusoidal(TOKENS, 8)).float()
    torch.testing.assert_close(h[:, :, 8:], expected.expand(3, -1, -1))


def test_b_learned_has_a_trainable_position_table_of_one_row_per_token():
    model = build_model("B-learned", WINDOW, CLASSES, small_config(d_model=16))
    assert model.position_table.shape == (TOKENS, 16)
    assert model.position_table.requires_grad
    assert "position_table" in model.state_dict()


# --- the seeded encoder and its dropout ------------------------------------------------------------------


def torch_encoder_with_the_same_weights(model: torch.nn.Module) -> torch.nn.TransformerEncoder:
    layers = model.encoder.layers
    reference = torch.nn.TransformerEncoder(copy.deepcopy(layers[0]), len(layers), enable_nested_tensor=False)
    reference.load_state_dict(model.encoder.state_dict())
    return reference


@pytest.mark.parametrize("model_name", ["A", "B", "B-concat"])
def test_the_seeded_encoder_computes_what_torchs_encoder_computes(model_name):
    torch.manual_seed(0)
    model = build_model(model_name, WINDOW, CLASSES, small_config(layers=2))
    reference = torch_encoder_with_the_same_weights(model)
    h = torch.randn(5, TOKENS, model.head.in_features)
    model.eval(), reference.eval()
    with torch.no_grad():
        torch.testing.assert_close(model.encoder(h), reference(h), atol=1e-5, rtol=1e-5)
    # training mode without dropout: the same values and the same gradients
    for encoder in (model.encoder, reference):
        encoder.train()
        for layer in encoder.layers:
            layer.dropout.p = layer.dropout1.p = layer.dropout2.p = 0.0
            layer.self_attn.dropout = 0.0
    ours_in, torch_in = h.clone().requires_grad_(), h.clone().requires_grad_()
    ours_out, torch_out = model.encoder(ours_in), reference(torch_in)
    torch.testing.assert_close(ours_out, torch_out, atol=1e-5, rtol=1e-5)
    (ours_out**2).sum().backward(), (torch_out**2).sum().backward()
    torch.testing.assert_close(ours_in.grad, torch_in.grad, atol=1e-4, rtol=1e-4)


def test_dropout_zeroes_a_share_p_and_scales_the_rest_by_one_over_one_minus_p():
    x = torch.ones(1_000_000)
    out = dropout(x, 0.25, training=True, stream=DropoutStream(7))
    zero_share = (out == 0).float().mean().item()
    assert abs(zero_share - 0.25) < 0.002  # the binomial sd is 0.00043
    kept = out[out != 0]
    torch.testing.assert_close(kept, torch.full_like(kept, 1 / 0.75))
    assert dropout(x, 0.25, training=False, stream=DropoutStream(7)) is x
    assert dropout(x, 0.0, training=True, stream=DropoutStream(7)) is x


def test_a_dropout_stream_repeats_its_seed_and_no_other():
    x = torch.ones(10_000)
    first, again, other = (dropout(x, 0.1, True, DropoutStream(seed)) for seed in (3, 3, 4))
    assert torch.equal(first, again)
    assert not torch.equal(first, other)


def test_the_models_masks_come_from_its_stream_not_torchs_global_generator():
    torch.manual_seed(0)
    model = build_model("B", WINDOW, CLASSES, small_config(layers=2)).train()
    x = torch.randn(4, WINDOW)
    outputs = []
    for global_seed in (1, 2):
        model.dropout_stream = DropoutStream(5)
        torch.manual_seed(global_seed)  # must not matter
        outputs.append(model(x))
    torch.testing.assert_close(outputs[0], outputs[1], atol=0, rtol=0)
    model.dropout_stream = DropoutStream(6)
    assert not torch.equal(model(x), outputs[0])


def test_dropout_must_be_below_one():
    with pytest.raises(ValueError, match="dropout"):
        build_model("B", WINDOW, CLASSES, small_config(dropout=1.0))


def test_dropout_under_bf16_keeps_the_scale_at_full_precision():
    torch.manual_seed(0)
    x = (1 + torch.rand(100_000)).to(torch.bfloat16)
    out = dropout(x, 0.1, training=True, stream=DropoutStream(0))
    assert out.dtype == torch.bfloat16
    kept = out != 0
    ratio = (out[kept].float() / x[kept].float()).mean().item()
    # unbiased: 1 / 0.9 = 1.1111 on average over the bf16 roundings; a bf16 mask would give 1.109375 every time
    assert ratio == pytest.approx(1 / 0.9, abs=2e-4)
