"""Home: the story of why a Transformer needs positional encoding, with a link to each room of the lab."""

import streamlit as st

from ui.entry import use_app_navigation
from ui.rooms import built_rooms

use_app_navigation()

st.title("PE Lab")
st.markdown(
    "An interactive explanation of **positional encoding** in Transformers, and an honest lab that tests "
    "whether it helps on real vibration signals. Every figure is computed live from the controls, and every "
    "view has its own link: copy the URL to share exactly what you see. "
    "**Positions are 0-based everywhere in the app**: the first token is position 0."
)

st.header("Why attention needs positions at all")
st.markdown(
    "A recurrent network (RNN, LSTM) reads a sequence in order, one token per step: step t needs the state of "
    "step t−1, so it knows the order for free but cannot be parallelised over time. Self-attention reads all "
    "tokens **at once**: every token scores every other by a dot product q·k and mixes their values. That is "
    "fully parallel, and it is **blind to order**: shuffle the input tokens and the outputs are shuffled the "
    'same way, nothing else changes. "dog bites man" and "man bites dog" look alike. Positional encoding '
    "puts the order back by adding a position-dependent vector to each token before the first layer."
)

st.header("Multi-head and masked attention")
st.markdown(
    "**Multi-head** attention runs several attentions side by side, each on its own learned projection of "
    "d_model/h dimensions, so one head can follow syntax while another follows nearby tokens; their outputs "
    "are concatenated. **Masked** (causal) attention sets the scores of future positions to −∞ before the "
    "softmax, so token t only sees tokens 0..t: that is what lets a decoder be trained on whole sentences "
    "while still predicting each next token from the past alone."
)

st.header("Parallel training, step-by-step decoding")
st.markdown(
    "With the causal mask, training computes the predictions for every position of a sentence in one "
    "parallel pass (teacher forcing). Generation cannot: each new token depends on the ones produced before "
    "it, so decoding runs one step per token, feeding each output back in (with cached keys and values)."
)

st.header("The fixed-vector bottleneck of seq2seq")
st.markdown(
    "The first neural translators (encoder–decoder RNNs) squeezed the whole source sentence into one "
    "fixed-size vector, the encoder's last state. Long sentences did not fit: quality fell with length. "
    "Attention removed the bottleneck by letting the decoder look back at every encoder state, and the "
    "Transformer kept only the attention."
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

st.header("The rooms of the lab")
for room in built_rooms():
    st.page_link(room.path, label=f"**{room.title}**: {room.blurb}", icon=room.icon)
