"""Walkthrough: one short sentence through one attention layer, a step at a time, and what a shuffle of its words
does to the attention weights with and without a position signal."""

import pandas as pd
import streamlit as st

from core.explain import walkthrough as walk
from core.explain.figures import walkthrough as figures
from core.safe_text import markdown_literal, markdown_text
from ui.common import next_page_link, page_intro, show_figure
from ui.first_paint import draw_first_figure_first
from ui.live import control, live_view
from ui.navigation import use_app_navigation

# The options of each choice widget, the one place each is written: the widget and the link check read it.
# Together with the text key they name every key of this page's link.
LINK_CHOICES = {"step": walk.STEP_NAMES, "pe": (False, True), "shuffle": (False, True), "scheme": walk.SCHEMES}
use_app_navigation(link_text=["words"], link_choices=LINK_CHOICES)
draw_first_figure_first()  # ui/first_paint.py

STEPS = {step.name: step for step in walk.STEPS}


def move_step(by: int) -> None:
    """Previous / Next: the step selector moves, and with it the link."""
    index = walk.STEP_NAMES.index(st.session_state["step"]) + by
    st.session_state["step"] = walk.STEP_NAMES[min(max(index, 0), len(walk.STEP_NAMES) - 1)]


def matrix_table(matrix, words: list[str], columns: list) -> pd.DataFrame:
    """A step's matrix as the CSV offers it: one row per word, its columns named as in the figure."""
    table = pd.DataFrame(matrix, columns=[str(column) for column in columns])
    table.insert(0, "word", [f"{i}: {word}" for i, word in enumerate(words)])
    return table


page_intro(
    "One sentence through attention",
    "Follow a short sentence through one attention layer, one step at a time: each step is a small table of "
    "numbers, one row per word. Then shuffle the words: without a position signal the layer only moves its "
    "numbers around with the words; with one, the numbers themselves change.",
)

text = st.text_input(
    "Sentence",
    walk.DEFAULT_SENTENCE,
    key="words",
    bind="query-params",
    help=f"2 to {walk.MAX_TOKENS} words. Each word gets a fixed random vector, the same every time it appears: "
    "repeat a word to see it.",
)
try:
    sentence = walk.parse_sentence(text)
except ValueError as error:  # too long (BudgetExceeded) or one word (SentenceRefused): one line, then the default
    st.error(markdown_text(f'Sentence: {error} Showing "{walk.DEFAULT_SENTENCE}" instead.', 2_000))
    sentence = walk.parse_sentence(walk.DEFAULT_SENTENCE)
if sentence.left_off:
    st.caption(f"Only the first {walk.MAX_TOKENS} words are used ({sentence.left_off} left off).")

left, right = st.columns(2)
with_position = left.toggle(
    "Positional encoding",
    True,
    key="pe",
    bind="query-params",
    help="Off: nothing tells the layer where a word stands (the same as the scheme none).",
)
shuffle = right.toggle(
    "Shuffle the words",
    key="shuffle",
    bind="query-params",
    help="Follow the sentence with its words in another order, and compare its attention weights with the "
    "original's below the step.",
)
chosen = st.radio(
    "How the position gets in",
    LINK_CHOICES["scheme"],
    key="scheme",
    bind="query-params",
    horizontal=True,
    disabled=not with_position,
    help="sinusoidal and learned add a vector to each word; RoPE turns the queries and keys instead; none adds "
    "nothing. Switch the positional encoding on to choose.",
)
scheme = chosen if with_position else "none"

step_name = st.select_slider("Step", LINK_CHOICES["step"], key="step", bind="query-params")  # starts at the first
index = walk.STEP_NAMES.index(step_name)
with st.container(horizontal=True):  # one row, on a phone too (columns would stack)
    st.button(
        "Previous", key="previous", on_click=move_step, args=(-1,), disabled=index == 0, icon=":material/arrow_back:"
    )
    st.button(
        "Next",
        key="next",
        on_click=move_step,
        args=(1,),
        disabled=index == len(walk.STEP_NAMES) - 1,
        icon=":material/arrow_forward:",
        icon_position="right",
    )

comparison = walk.compare_shuffle(sentence.words, walk.shuffle_order(sentence.words), scheme)
shown = comparison.shuffled if shuffle else comparison.original
step = STEPS[step_name]
vocabulary = walk.vocabulary(sentence.words)
# Keyed containers: the browser view (ui/live/views/walkthrough.js) rewrites their text as the controls change.
st.container(key="live_walk_heading").subheader(f"Step {index + 1} of {len(walk.STEPS)}: {step.title}")
st.container(key="live_walk_words").markdown(
    f"{'Shuffled' if shuffle else 'As typed'}: **{' '.join(markdown_literal(word) for word in shown.words)}**"
)
st.container(key="live_walk_sentence").markdown(walk.step_sentence(step_name, scheme))
matrix = shown.matrices[step_name]
columns = {"dimensions": list(range(matrix.shape[1])), "tokens": shown.words, "vocabulary": vocabulary}[step.columns]
show_figure(
    figures.step_matrix(
        matrix,
        shown.words,
        step.columns,
        step.quantity,
        step.signed,
        f"{step.title}, {'shuffled' if shuffle else 'as typed'} ({scheme})",
        vocabulary,
    ),
    matrix_table(matrix, shown.words, columns),
    "walkthrough_step",
)

if shuffle:
    st.subheader("Did the shuffle change the weights?")
    st.container(key="live_walk_verdict").markdown(walk.shuffle_verdict(comparison))
    if comparison.moved:
        show_figure(
            figures.weight_difference(comparison.difference, sentence.words),
            matrix_table(comparison.difference, sentence.words, sentence.words),
            "walkthrough_difference",
        )

st.subheader("The formula")
st.latex(r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V")
st.markdown(
    f"Q, K and V are the queries, keys and values of the steps above; d_k = {walk.D_K}, the width of a query. "
    f"This layer is one head with d_model = {walk.D_MODEL}, and its three matrices are fixed random numbers "
    "(seeded), not trained ones: the point here is what the layer can and cannot see, not what it has learned."
)

live_view(
    "walkthrough",
    {
        "step": control("select_slider", walk.STEP_NAMES),
        "pe": control("toggle"),
        "shuffle": control("toggle"),
        "scheme": control("radio", walk.SCHEMES),
    },
    {"step": step_name, "pe": bool(with_position), "shuffle": bool(shuffle), "scheme": chosen},
    walk=walk.walkthrough_data(sentence.words),
    labels=figures.live_labels(sentence.words, comparison.shuffled.words, vocabulary),
)
next_page_link("pages/walkthrough.py")
