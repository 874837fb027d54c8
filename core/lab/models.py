"""The fault classifiers of the Fault lab: Transformer encoders with and without positional encoding, and a CNN.

The comparison under test comes from a published CWRU experiment: Model A feeds signal patches straight into
Transformer encoder layers; Model B puts an input embedding and the sinusoidal positional encoding in front
of the same encoder. The ablations separate the two ingredients of B:

    name        embedding   position                      input dropout
    A           -           -                             yes (before the study: none, see input_dropout_for_all)
    A+PE        -           sinusoidal, added             yes
    B-noPE      linear      -                             yes
    B           linear      sinusoidal, added             yes
    B-learned   linear      learned table, added          yes
    B-concat    linear      sinusoidal, concatenated      yes

so B against B-noPE isolates the PE exactly, and A against B-noPE isolates the embedding. `CNN` is the
baseline a practitioner would reach for instead (WDCNN style: a wide first kernel, then small ones).

Dropout draws from the model's own `dropout_stream` (a DropoutStream set by core.lab.training for each run)
rather than torch's global generator: a run's result then depends only on its seed, even when several runs
train at once in threads of one process (core.lab.jobs runs seeds side by side that way). The masks and, on the
CPU, the attention core come from core.lab.encoder_kernels (a drop probability there is a multiple of 1/65536).

Tokens: a window of `window` samples is cut into `window / patch` time tokens of `patch` samples, or, with
FFT tokens, the magnitudes of rfft bins 0 .. window/2 - 1 (DC up to just below Nyquist) are cut into bands
of `patch` bins, so that a token's index names a frequency band rather than a moment.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn as nn

from core.explain.encodings import sinusoidal
from core.lab.encoder_kernels import DropoutStream, attention_core, dropout
from core.lab.names import MODEL_KEY_RENAMES, renamed

TOKEN_KINDS = ("time", "fft")

# Which ingredients each Transformer variant has: (has_embedding, position, combine).
TRANSFORMER_VARIANTS: dict[str, tuple[bool, str | None, str]] = {
    "A": (False, None, "add"),
    "A+PE": (False, "sinusoidal", "add"),
    "B-noPE": (True, None, "add"),
    "B": (True, "sinusoidal", "add"),
    "B-learned": (True, "learned", "add"),
    "B-concat": (True, "sinusoidal", "concat"),
}
MODEL_NAMES: tuple[str, ...] = (*TRANSFORMER_VARIANTS, "CNN")
# baselines a study runs beside the trained models (not neural networks: no epochs, no learning rate);
# spectrum-LR is core.lab.spectrum_baseline
BASELINE_MODELS: tuple[str, ...] = ("spectrum-LR",)
STUDY_MODEL_NAMES: tuple[str, ...] = (*MODEL_NAMES, *BASELINE_MODELS)
MODEL_DESCRIPTIONS = {
    "A": "Transformer encoder on the raw tokens (d_model = patch), no positional encoding",
    "B": "input embedding + sinusoidal PE + the same encoder",
    "B-noPE": "B without the PE: the embedding alone",
    "A+PE": "A plus the PE: the PE alone",
    "B-learned": "B with a learned position table instead of the sinusoids",
    "B-concat": "B with the PE concatenated to the embedding instead of added",
    "CNN": "a small wide-first-kernel 1-D CNN (WDCNN style), the practitioner's baseline",
    "spectrum-LR": "logistic regression on the 32-band log power spectrum: blind to order, the order baseline",
}


def has_embedding(model_name: str) -> bool:
    """Whether the model embeds its tokens to d_model (so its width is d_model, not the patch)."""
    return model_name in TRANSFORMER_VARIANTS and TRANSFORMER_VARIANTS[model_name][0]


def has_position(model_name: str) -> bool:
    """Whether the model is given a position signal (sinusoidal or learned)."""
    return model_name in TRANSFORMER_VARIANTS and TRANSFORMER_VARIANTS[model_name][1] is not None


def embedding_models(models: Sequence[str]) -> list[str]:
    """The models whose width is d_model (A and A+PE run at the patch width; the CNN has no d_model)."""
    return [model for model in models if has_embedding(model)]


@dataclass
class ModelConfig:
    """Every setting of every model; the window length and class count come from the data."""

    patch: int = 32  # samples per time token, or rfft bins per FFT token
    tokens: str = "time"  # "time" or "fft"
    d_model: int | None = None  # width after the embedding; None means patch (A is always patch wide)
    heads: int = 4  # attention heads per encoder layer (n_heads before)
    layers: int = 2  # encoder layers (n_layers before)
    ff_dim: int | None = None  # encoder feed-forward width; None means 4 * d_model
    dropout: float = 0.1
    pe_base: float = 10000.0
    pe_scale: float = 1.0  # factor on the position signal
    embed_scale: bool = False  # multiply the token representation by sqrt(d_model), as in the original paper
    cnn_channels: int = 16  # channels of the CNN's first layer; later layers have 2x and 4x
    # dropout on the encoder's input for every Transformer variant (True), or only for those with an embedding or
    # a position signal (False, before the study): A then trained without it, and the comparison was confounded
    input_dropout_for_all: bool = True

    def width(self, model_name: str) -> int:
        """The encoder width d_model that `model_name` runs at."""
        if not has_embedding(model_name) or self.d_model is None:
            return self.patch
        return self.d_model

    @classmethod
    def from_dict(cls, settings: Mapping[str, Any]) -> ModelConfig:
        """The config a results or study JSON records (train.model); the old names n_heads and n_layers are read
        as heads and layers."""
        return cls(**renamed(settings, MODEL_KEY_RENAMES))


def count_tokens(window: int, config: ModelConfig) -> int:
    """How many tokens one window becomes; raises ValueError if the window does not cut evenly."""
    if config.tokens not in TOKEN_KINDS:
        raise ValueError(f"tokens must be one of {TOKEN_KINDS}, got {config.tokens!r}")
    if config.patch < 1:
        raise ValueError(f"patch must be a positive number of samples, got {config.patch}")
    if window % 2 and config.tokens == "fft":
        raise ValueError(f"FFT tokens need an even window, got window={window}")
    usable = window if config.tokens == "time" else window // 2
    if usable % config.patch:
        what = "samples" if config.tokens == "time" else "rfft bins (window / 2)"
        raise ValueError(
            f"{usable} {what} do not cut into patches of {config.patch}; pick a patch that divides {usable}"
        )
    return usable // config.patch


class Tokenizer(nn.Module):
    """(batch, window) signal -> (batch, tokens, patch) time patches or frequency bands."""

    def __init__(self, window: int, config: ModelConfig):
        super().__init__()
        self.n_tokens = count_tokens(window, config)
        self.kind = config.tokens
        self.patch = config.patch

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(batch, window) signal -> (batch, tokens, patch) tokens."""
        if self.kind == "fft":
            # "ortho" keeps a unit-variance window's band magnitudes near 1, the scale of the time tokens
            x = torch.fft.rfft(x.float(), norm="ortho").abs()[:, : x.shape[-1] // 2]  # (batch, window/2)
        return x.reshape(x.shape[0], self.n_tokens, self.patch)  # (batch, tokens, patch)


class TransformerClassifier(nn.Module):
    """Tokens -> [embedding] -> [+ position] -> encoder -> mean over tokens -> class logits."""

    def __init__(self, model_name: str, window: int, n_classes: int, config: ModelConfig):
        super().__init__()
        has_embedding, position, combine = TRANSFORMER_VARIANTS[model_name]
        self.model_name = model_name
        self.tokenizer = Tokenizer(window, config)
        n_tokens = self.tokenizer.n_tokens
        d_model = config.width(model_name)
        check_heads(d_model, config.heads)

        # B-concat keeps the encoder as wide as B's: half the width for the embedding, half for the PE
        position_width = d_model // 2 if combine == "concat" else d_model
        embed_width = d_model - position_width if combine == "concat" else d_model
        if combine == "concat" and position_width < 1:
            raise ValueError(f"B-concat needs d_model >= 2 to split between embedding and PE, got {d_model}")
        self.embedding = nn.Linear(config.patch, embed_width) if has_embedding else None
        self.embed_multiplier = math.sqrt(d_model) if config.embed_scale else 1.0
        self.pe_scale = config.pe_scale
        self.combine = combine
        self.position = position
        if position == "sinusoidal":
            table = torch.from_numpy(sinusoidal(n_tokens, position_width, config.pe_base)).float()
            self.register_buffer("position_table", table, persistent=False)  # (tokens, position_width)
        elif position == "learned":
            # BERT's initialisation of a learned position table
            self.position_table = nn.Parameter(torch.randn(n_tokens, position_width) * 0.02)
        if not 0.0 <= config.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {config.dropout}")
        uses_input_dropout = config.input_dropout_for_all or has_embedding or position is not None
        self.input_dropout_p = config.dropout if uses_input_dropout else 0.0

        layer = nn.TransformerEncoderLayer(
            d_model,
            config.heads,
            dim_feedforward=config.ff_dim or 4 * d_model,
            dropout=config.dropout,
            batch_first=True,
        )
        self.encoder = SeededTransformerEncoder(layer, config.layers)
        self.head = nn.Linear(d_model, n_classes)

    @property
    def dropout_stream(self) -> DropoutStream | None:
        """Where every dropout mask of this model is drawn from; None means torch's global generator."""
        return self.encoder.stream

    @dropout_stream.setter
    def dropout_stream(self, stream: DropoutStream | None) -> None:
        """Give the encoder the stream every dropout mask is drawn from."""
        self.encoder.stream = stream

    def forward(self, x: torch.Tensor, token_order: torch.Tensor | None = None) -> torch.Tensor:
        """(batch, window) -> (batch, n_classes) logits; `token_order` (batch, tokens) reorders the tokens first,
        before any embedding or position signal (the order test)."""
        tokens = self.tokenizer(x)  # (batch, tokens, patch)
        if token_order is not None:  # the order test: the input patches reordered, before embedding and position
            tokens = tokens.gather(1, token_order[:, :, None].expand(-1, -1, tokens.shape[-1]))
        h = self.embedding(tokens) if self.embedding is not None else tokens  # (batch, tokens, embed_width)
        h = h * self.embed_multiplier
        if self.position is not None:
            position = self.pe_scale * self.position_table  # (tokens, position_width)
            if self.combine == "concat":
                h = torch.cat([h, position.expand(h.shape[0], -1, -1).to(h.dtype)], dim=-1)  # (batch, tokens, d_model)
            else:
                h = h + position
        h = dropout(h, self.input_dropout_p, self.training, self.dropout_stream)
        h = self.encoder(h)  # (batch, tokens, d_model)
        return self.head(h.mean(dim=1))  # (batch, n_classes)

    @property
    def n_parameters(self) -> int:
        """Trainable parameters (the sinusoidal table is a buffer, not counted)."""
        return count_parameters(self)


class SeededTransformerEncoder(nn.TransformerEncoder):
    """nn.TransformerEncoder (same layers, parameters, initialisation and state_dict keys) whose forward
    draws its dropout masks from `stream` (a DropoutStream). Torch's own forward hides the attention-weight
    dropout in scaled_dot_product_attention, which only uses the global generator; on CPU, training with
    that dropout also takes SDPA's slower masked-math path. Evaluation gives the same numbers as torch's
    forward; the layers must be post-norm with ReLU, batch first (the only kind this module builds)."""

    def __init__(self, layer: nn.TransformerEncoderLayer, layers: int):
        if layer.norm_first or not layer.self_attn.batch_first or layer.activation is not nn.functional.relu:
            raise ValueError("SeededTransformerEncoder takes post-norm, batch-first encoder layers with ReLU")
        super().__init__(layer, layers, enable_nested_tensor=False)
        self.stream: DropoutStream | None = None
        self.captured: list[torch.Tensor] | None = None  # set to a list to collect each layer's attention

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        """(batch, tokens, d_model) through every layer, each dropout mask drawn from `stream`."""
        for layer in self.layers:
            p = layer.dropout.p
            h = layer.norm1(h + dropout(self._self_attention(layer.self_attn, h), p, self.training, self.stream))
            inner = dropout(torch.relu(layer.linear1(h)), p, self.training, self.stream)  # (batch, tokens, ff)
            h = layer.norm2(h + dropout(layer.linear2(inner), p, self.training, self.stream))
        return h  # (batch, tokens, d_model)

    def _self_attention(self, attention: nn.MultiheadAttention, h: torch.Tensor) -> torch.Tensor:
        qkv = nn.functional.linear(h, attention.in_proj_weight, attention.in_proj_bias)  # (batch, tokens, 3 d_model)
        if h.device.type == "cpu":
            batch, tokens, _ = h.shape
            shape = (batch * attention.num_heads, tokens, tokens)
            mask = self._mask(shape, attention.dropout) if self.training and attention.dropout > 0 else None
            return attention.out_proj(attention_core(qkv, attention.num_heads, mask, self.captured))
        return attention.out_proj(self._self_attention_autograd(qkv, attention))

    def _mask(self, shape: tuple[int, ...], p: float) -> torch.Tensor:
        if self.stream is not None:
            return self.stream.mask(shape, p)
        return dropout(torch.ones(shape), p, True, None)

    def _self_attention_autograd(self, qkv: torch.Tensor, attention: nn.MultiheadAttention) -> torch.Tensor:
        """The same attention through torch's autograd, for CUDA (bf16 under autocast)."""
        batch, tokens, width = qkv.shape
        heads, d_model = attention.num_heads, width // 3
        # torch's in_proj stacks q, k, v, each split into heads: (3, batch, heads, tokens, d_head)
        q, k, v = qkv.view(batch, tokens, 3, heads, d_model // heads).permute(2, 0, 3, 1, 4)
        scores = (q * (d_model // heads) ** -0.5) @ k.transpose(-2, -1)  # (batch, heads, tokens, tokens)
        weights = scores.softmax(dim=-1)  # (batch, heads, tokens, tokens)
        if self.captured is not None:
            self.captured.append(weights.detach())
        weights = dropout(weights, attention.dropout, self.training, self.stream)
        return (weights @ v).transpose(1, 2).reshape(batch, tokens, d_model)  # (batch, tokens, d_model)


class WideKernelCNN(nn.Module):
    """A small WDCNN-style 1-D CNN: a wide, strided first kernel sees a whole shaft-impact period at once,
    then four small kernels refine; global average pooling makes it work for any window length."""

    def __init__(self, window: int, n_classes: int, config: ModelConfig):
        super().__init__()
        if config.tokens not in TOKEN_KINDS:
            raise ValueError(f"tokens must be one of {TOKEN_KINDS}, got {config.tokens!r}")
        self.use_spectrum = config.tokens == "fft"
        c = config.cnn_channels
        widths = [c, 2 * c, 4 * c, 4 * c, 4 * c]
        blocks = [_conv_block(1, widths[0], kernel=64, stride=16, padding=24)]
        blocks += [_conv_block(w_in, w_out, kernel=3, stride=1, padding=1) for w_in, w_out in zip(widths, widths[1:])]
        self.features = nn.Sequential(*blocks)
        self.head = nn.Linear(widths[-1], n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(batch, window) -> (batch, n_classes) logits."""
        if self.use_spectrum:
            x = torch.fft.rfft(x.float(), norm="ortho").abs()[:, : x.shape[-1] // 2]  # (batch, window/2)
        h = self.features(x.unsqueeze(1))  # (batch, channels, length)
        return self.head(h.mean(dim=-1))  # (batch, n_classes)

    @property
    def n_parameters(self) -> int:
        """Trainable parameters."""
        return count_parameters(self)


def _conv_block(c_in: int, c_out: int, kernel: int, stride: int, padding: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv1d(c_in, c_out, kernel, stride=stride, padding=padding),
        nn.BatchNorm1d(c_out),
        nn.ReLU(),
        # ceil_mode keeps a length-1 feature map alive, so short windows still pass all five blocks
        nn.MaxPool1d(2, ceil_mode=True),
    )


def check_heads(d_model: int, heads: int) -> None:
    """ValueError, with the widths that would do, unless `heads` divides `d_model`."""
    if heads < 1 or d_model % heads:
        divisors = [h for h in range(1, d_model + 1) if d_model % h == 0]
        raise ValueError(
            f"heads={heads} must divide d_model={d_model} (each head gets d_model / heads dimensions); "
            f"choose one of {divisors}"
        )


def count_parameters(model: nn.Module) -> int:
    """Trainable parameters (buffers such as the sinusoidal table are not counted: they are not learned)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def build_model(model_name: str, window: int, n_classes: int, config: ModelConfig) -> nn.Module:
    """The model called `model_name` (one of MODEL_NAMES) for windows of `window` samples."""
    if model_name not in MODEL_NAMES:
        raise ValueError(f"unknown model {model_name!r}; choose from {', '.join(MODEL_NAMES)}")
    if n_classes < 2:
        raise ValueError(f"a classifier needs at least 2 classes, got {n_classes}")
    if model_name == "CNN":
        return WideKernelCNN(window, n_classes, config)
    return TransformerClassifier(model_name, window, n_classes, config)


def check_model_settings(models: Sequence[str], window: int, config: ModelConfig) -> None:
    """Raise ValueError, in words, when `models` cannot be built for windows of `window` samples with `config`:
    no model, an unknown one, a patch that does not cut the window, heads that do not divide a width. The
    Fault lab asks before training, so the same rules guard the page and the CLI."""
    if not models:
        raise ValueError("Choose at least one model.")
    unknown = [model for model in models if model not in MODEL_NAMES]
    if unknown:
        raise ValueError(f"unknown models {unknown}; choose from {', '.join(MODEL_NAMES)}")
    transformers = [model for model in models if model in TRANSFORMER_VARIANTS]
    if transformers:
        count_tokens(window, config)
    for width in sorted({config.width(model) for model in transformers}):
        check_heads(width, config.heads)
