"""Home: a live demo of order blindness first, then the story of why a Transformer needs positional encoding,
each part with a small figure, and a path through the rooms of the lab."""

import numpy as np
import pandas as pd
import streamlit as st

from core.explain.encodings import sinusoidal
from core.explain.figures import home as figures
from core.explain.order_demo import DEFAULT_TOKENS, MAX_TOKENS, for_figure, parse_tokens, random_order, shuffle_demo
from core.limits import BudgetExceeded
from core.safe_text import markdown_literal
from ui.common import data_section, show_figure
from ui.entry import use_app_navigation
from ui.rooms import built_rooms

# The range of each number widget and the options of each choice widget, the one place each is written: the
# widget and the link check read it. Together they name every key of this page's link.
LINK_NUMBERS = {"demo_seed": (0, 999)}
LINK_CHOICES = {"demo_pe": (False, True)}  # a toggle
use_app_navigation(LINK_NUMBERS, link_text=["demo_tokens"], link_choices=LINK_CHOICES)

st.title("PE Lab")
st.markdown(
    "An interactive explanation of **positional encoding** in Transformers, and an honest lab that tests "
    "whether it helps on real vibration signals. Every figure is computed live from the controls, and every "
    "view has its own link: copy the URL to share exactly what you see. "
    "**Positions are 0-based everywhere in the app**: the first token is position 0."
)
first_room = built_rooms()[0]
st.page_link(first_room.path, label=f"**Start here**: {first_room.title}", icon=":material/flag:")

st.header("Shuffle the words: self-attention does not notice")
text = st.text_input(
    "Tokens",
    DEFAULT_TOKENS,
    key="demo_tokens",
    bind="query-params",
    help=f"2 to {MAX_TOKENS} words; each gets a fixed random vector",
)
try:
    words = parse_tokens(text)
except BudgetExceeded as error:
    st.error(f'Tokens: {error} Showing "{DEFAULT_TOKENS}" instead.')
    words = parse_tokens(DEFAULT_TOKENS)
left, right = st.columns(2)
seed = left.number_input(
    "Shuffle", *LINK_NUMBERS["demo_seed"], 1, key="demo_seed", bind="query-params", help="the seed of the shuffle"
)
with_position = right.toggle("Add positional encoding before the layer", key="demo_pe", bind="query-params")
if len(words) < 2:
    st.error("Type at least two words.")
else:
    order = random_order(len(words), int(seed))
    if list(order) == list(range(len(words))):
        order = np.roll(order, 1)  # a shuffle that moves nothing would show nothing
    demo = shuffle_demo(words, order, with_position)
    st.markdown(f"Shuffled: **{' '.join(markdown_literal(demo.words[i]) for i in order)}**")
    rows = pd.DataFrame(
        [
            {
                "token": f"{i}: {w}",
                "dimension": j,
                "as typed": demo.outputs[i, j],
                "shuffled, put back": demo.shuffled_back[i, j],
            }
            for i, w in enumerate(demo.words)
            for j in range(demo.outputs.shape[1])
        ]
    )
    show_figure(figures.shuffle_demo(for_figure(demo)), rows, "shuffle_demo")
    st.metric("Largest difference between the two", f"{demo.largest_difference:.2g}")
    st.caption(
        "Without a position signal the two panels are the same up to rounding (about 1e-16): the layer gives every "
        "word the same output wherever it stands, so a shuffled sentence is the same bag of words. Switch on the "
        "positional encoding and the outputs change with the order."
        if not with_position
        else "With the positional encoding added, a word's output depends on where it stands: the shuffle shows."
    )

with data_section("home_story"):  # one download for the story's five small figures, at its end
    st.header("Why attention needs positions at all")
    st.markdown(
        "A recurrent network (RNN, LSTM) reads a sequence in order, one token per step: step t needs the state of "
        "step t−1, so it knows the order for free but cannot be parallelised over time. Self-attention reads all "
        "tokens **at once**: every token scores every other by a dot product q·k and mixes their values. That is "
        "fully parallel, and it is **blind to order**: shuffle the input tokens and the outputs are shuffled the "
        'same way, nothing else changes. "dog bites man" and "man bites dog" look alike. Positional encoding '
        "puts the order back by adding a position-dependent vector to each token before the first layer."
    )
    show_figure(figures.position_heatmap(sinusoidal(32, 16)), pd.DataFrame(sinusoidal(32, 16)), "home_positions")

    st.header("Multi-head and masked attention")
    st.markdown(
        "**Multi-head** attention runs several attentions side by side, each on its own learned projection of "
        "d_model/h dimensions, so one head can follow syntax while another follows nearby tokens; their outputs "
        "are concatenated. **Masked** (causal) attention sets the scores of future positions to −∞ before the "
        "softmax, so token t only sees tokens 0..t: that is what lets a decoder be trained on whole sentences "
        "while still predicting each next token from the past alone."
    )
    show_figure(figures.causal_mask(8), pd.DataFrame(np.tril(np.ones((8, 8)))), "home_mask")

    st.header("Parallel training, step-by-step decoding")
    st.markdown(
        "With the causal mask, training computes the predictions for every position of a sentence in one "
        "parallel pass (teacher forcing). Generation cannot: each new token depends on the ones produced before "
        "it, so decoding runs one step per token, feeding each output back in (with cached keys and values)."
    )
    n = np.arange(1, 65)
    show_figure(figures.steps(n), pd.DataFrame({"tokens": n, "training": 1, "decoding": n}), "home_steps")

    st.header("The fixed-vector bottleneck of seq2seq")
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

    st.header("The fixed-length context of a vanilla Transformer")
    st.markdown(
        "A vanilla Transformer language model sees a fixed window of tokens (512 in the early models, because "
        "attention costs O(n²) in the length). Long texts are cut into separate segments that are processed "
        "independently, so no information flows across a segment boundary and the first tokens of each segment "
        "have almost no context: **context fragmentation**. Transformer-XL fixed it with segment-level recurrence "
        "(reusing the previous segment's hidden states) and, because absolute positions then clash, **relative** "
        "positional encodings, which is where the offset view of the Similarity page leads."
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

st.header("A path through the lab")
st.markdown(
    "1. **Encoding matrix**: what the sinusoidal encoding looks like, and why simpler schemes fail.  \n"
    "2. **Similarity vs offset**: why it encodes relative position: PE(t)·PE(t+k) depends on k alone.  \n"
    "3. **Softmax saturation**: why attention scores are divided by √d_k.  \n"
    "4. **Fault lab**: does any of it help a classifier of real bearing faults? Start with its studies' verdicts."
)

st.header("The rooms of the lab")
for room in built_rooms():
    st.page_link(room.path, label=f"**{room.title}**: {room.blurb}", icon=room.icon)
