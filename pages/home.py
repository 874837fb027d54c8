"""Home: a live demo of order blindness first, then the path through every page in story order, and (going
further) the side topics of why a Transformer needs positional encoding. The demo redraws in the browser while the
words, the shuffle or the encoding switch change (ui/live/views/home.js)."""

import numpy as np
import pandas as pd
import streamlit as st

from core.explain.encodings import sinusoidal
from core.explain.figures import home as figures
from core.explain.order_demo import (
    DEFAULT_TOKENS,
    MAX_TOKENS,
    for_figure,
    parse_tokens,
    random_order,
    shuffle_demo,
    visible_shuffle,
)
from core.limits import MAX_TEXT_CHARS, BudgetExceeded
from core.safe_text import markdown_literal
from ui.common import data_section, going_further, show_figure
from ui.first_paint import draw_first_figure_first
from ui.live import control, live_view
from ui.navigation import use_app_navigation
from ui.page_registry import built_rooms

# The range of each number widget and the options of each choice widget, the one place each is written: the
# widget and the link check read it. Together they name every key of this page's link.
LINK_NUMBERS = {"demo_seed": (0, 999)}
LINK_CHOICES = {"demo_pe": (False, True)}  # a toggle
use_app_navigation(LINK_NUMBERS, link_text=["demo_tokens"], link_choices=LINK_CHOICES)
draw_first_figure_first()  # ui/first_paint.py

st.title("PE Lab")
st.markdown(
    "A Transformer reads all the words of a sentence at once, and on its own it cannot tell in which order they "
    "came. **Positional encoding** gives it the order back. This lab shows how, figure by figure, and then tests "
    "whether it helps a classifier of real machine vibrations. Positions are counted from 0 (0-based) everywhere."
)
first_room = built_rooms()[0]
st.page_link(first_room.path, label=f"**Start here**: {first_room.title}", icon=":material/flag:")

st.header("Shuffle the words: self-attention does not notice")
text = st.text_input(
    "Words",
    DEFAULT_TOKENS,
    key="demo_tokens",
    bind="query-params",
    help=f"2 to {MAX_TOKENS} words: each gets a fixed random vector, and the figure follows as you type.",
)
try:
    words = parse_tokens(text)
except BudgetExceeded as error:
    st.error(f'Words: {error} Showing "{DEFAULT_TOKENS}" instead.')
    words = parse_tokens(DEFAULT_TOKENS)
left, right = st.columns(2)
seed = left.number_input(
    "Shuffle number",
    *LINK_NUMBERS["demo_seed"],
    1,
    key="demo_seed",
    bind="query-params",
    help="Each number puts the words in another order: step it and watch the bottom panel stay equal to the top.",
)
with_position = right.toggle(
    "Add positional encoding before the layer",
    key="demo_pe",
    bind="query-params",
    help="Adds each place's position vector to its word: now the order changes what the layer outputs.",
)
if len(words) < 2:
    st.error("Type at least two words.")
else:
    order = visible_shuffle(random_order(len(words), int(seed)))
    demo = shuffle_demo(words, order, with_position)
    st.container(key="live_shuffled").markdown(
        f"Shuffled: **{' '.join(markdown_literal(demo.words[i]) for i in order)}**"
    )
    rows = pd.DataFrame(
        [
            {"token": f"{i}: {w}", "dimension": j, "as typed": demo.outputs[i, j], "shuffled, put back": value}
            for i, w in enumerate(demo.words)
            for j, value in enumerate(demo.shuffled_back[i])
        ]
    )
    show_figure(figures.shuffle_demo(for_figure(demo)), rows, "shuffle_demo")
    st.container(key="live_verdict").markdown(f"**{figures.demo_verdict(demo.largest_difference)}**")
    st.caption(
        "Without a position signal the two panels are the same up to rounding: the layer gives every word the same "
        "output wherever it stands, so a shuffled sentence is the same bag of words. With the encoding switched "
        "on, a word's output depends on its place, and the shuffle shows."
    )

st.header("The path through the lab")
st.markdown("Each page answers one question and leads to the next:")
for room in built_rooms():
    st.page_link(room.path, label=f"**{room.title}**: {room.blurb}", icon=room.icon)

with going_further(), data_section("home_story"):  # one download for the side topics' small figures
    st.subheader("Why attention needs positions at all")
    st.markdown(
        "A recurrent network (RNN, LSTM) reads a sequence in order, one token per step: step t needs the state of "
        "step t−1, so it knows the order for free but cannot be parallelised over time. Self-attention reads all "
        "tokens **at once**: every token scores every other by a dot product q·k and mixes their values. That is "
        "fully parallel, and it is **blind to order**: shuffle the input tokens and the outputs are shuffled the "
        'same way, nothing else changes. "dog bites man" and "man bites dog" look alike. Positional encoding '
        "puts the order back by adding a position-dependent vector to each token before the first layer."
    )
    show_figure(figures.position_heatmap(sinusoidal(32, 16)), pd.DataFrame(sinusoidal(32, 16)), "home_positions")

    st.subheader("Masked attention and parallel training")
    st.markdown(
        "**Masked** (causal) attention sets the scores of future positions to −∞ before the softmax, so token t "
        "only sees tokens 0..t. That lets a decoder train on whole sentences in one parallel pass (teacher "
        "forcing) while still predicting each next word from the past alone; generating text cannot be "
        "parallel: each new word depends on the ones before it, so decoding takes one step per word."
    )
    show_figure(figures.causal_mask(8), pd.DataFrame(np.tril(np.ones((8, 8)))), "home_mask")
    n = np.arange(1, 65)
    show_figure(figures.steps(n), pd.DataFrame({"tokens": n, "training": 1, "decoding": n}), "home_steps")

    st.subheader("The fixed-vector bottleneck of seq2seq")
    st.markdown(
        "The first neural translators (encoder–decoder RNNs) squeezed the whole source sentence into one "
        "fixed-size vector, the encoder's last state. Long sentences did not fit: quality fell with length. "
        "Attention removed the bottleneck by letting the decoder look back at every encoder state, and the "
        "Transformer kept only the attention."
    )
    lengths = np.arange(1, 101)
    show_figure(
        figures.bottleneck(lengths, 512),
        pd.DataFrame({"tokens": lengths, "sentence": lengths * 512, "fixed vector": 512}),
        "home_bottleneck",
    )

    st.subheader("The fixed-length context of a vanilla Transformer")
    st.markdown(
        "A vanilla Transformer language model sees a fixed window of tokens (512 in the early models, because "
        "attention costs grow with the square of the length). Long texts are cut into separate segments, so no "
        "information flows across a segment boundary: **context fragmentation**. Transformer-XL reused the "
        "previous segment's states and, because absolute positions then clash, moved to **relative** positional "
        "encodings, where the Similarity page leads."
    )
    positions = np.arange(0, 2048, 8)
    show_figure(
        figures.context(positions, 512),
        pd.DataFrame(
            {
                "position": positions,
                "vanilla": positions % 512,
                "recurrence": np.minimum(positions, 512 + positions % 512),
            }
        ),
        "home_context",
    )

live_view(
    "home",
    {
        "demo_tokens": control("text"),
        "demo_seed": control("number", min=LINK_NUMBERS["demo_seed"][0], max=LINK_NUMBERS["demo_seed"][1]),
        "demo_pe": control("toggle"),
    },
    {"demo_tokens": text, "demo_seed": int(seed), "demo_pe": bool(with_position)},
    max_tokens=MAX_TOKENS,
    max_chars=MAX_TEXT_CHARS,
)
