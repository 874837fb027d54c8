"""A shared link or a typed folder that a visitor crafted never shows a traceback: values a number widget cannot
take are dropped with one line, typed folders that cannot be resolved are refused like any folder outside the
data roots, the smallest d of the Similarity page computes, and home-page tokens never link or load."""

import json
import os
import tomllib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core.explain.extrapolation import METHODS, scaled_frequencies
from core.explain.order_demo import parse_tokens
from core.lab import data_roots
from core.lab.data_roots import FolderRefused, confine
from core.limits import MAX_PATH_CHARS, MAX_TEXT_CHARS, BudgetExceeded
from core.safe_text import markdown_literal
from tests.apptest_utils import ROOT, TIMEOUT, errors, run_page
from ui.first_paint import COMPLETING
from ui.link_values import NOTICE_KEY, unusable

HOSTILE_FOLDERS = ["~root/x", "~nosuchuser123/x", "~/x", "~", "a\x00b", "a\nb", "x" * 5000]


@pytest.fixture
def roots(tmp_path, monkeypatch):
    inside = tmp_path / "data"
    (inside / "cwru").mkdir(parents=True)
    monkeypatch.setenv("PE_LAB_DATA_DIR", str(inside))
    monkeypatch.setattr(data_roots, "DOWNLOAD_CACHE", tmp_path / "cache")
    return inside


def refusal(folder: str) -> str:
    with pytest.raises(FolderRefused) as refused:
        confine(folder)
    return str(refused.value)


# --- error details ---------------------------------------------------------------------------------------


def test_the_config_shows_visitors_no_error_details():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] == "none"


def test_an_uncaught_error_reaches_the_page_without_its_message_type_or_trace():
    at = AppTest.from_string("raise ValueError('/srv/secret/path')", default_timeout=TIMEOUT).run()
    assert len(at.exception) == 1
    shown = at.exception[0]
    assert "/srv/secret/path" not in shown.message and "ValueError" not in shown.message
    assert not shown.stack_trace


# --- typed folders ---------------------------------------------------------------------------------------


def test_unresolvable_typed_folders_get_the_same_refusal_as_any_folder_outside_the_roots(roots, tmp_path):
    outside = refusal(str(tmp_path))  # exists, outside every root
    assert [refusal(folder) for folder in HOSTILE_FOLDERS] == [outside] * len(HOSTILE_FOLDERS)
    assert refusal("y" * (MAX_PATH_CHARS + 1)) == outside
    assert confine("cwru") == (roots / "cwru").resolve()  # a folder inside a root still works
    assert confine("y" * 200) == (roots / ("y" * 200)).resolve()  # long but within the limit: taken as typed


def test_a_folder_refused_by_its_text_is_never_expanded_or_resolved(roots, monkeypatch):
    fixed = data_roots.data_roots()

    def no_lookup(*args, **kwargs):
        raise AssertionError("the disk or the account database was consulted")

    monkeypatch.setattr(data_roots, "data_roots", lambda: fixed)
    monkeypatch.setattr(os.path, "expanduser", no_lookup)
    monkeypatch.setattr(data_roots.Path, "expanduser", no_lookup)
    monkeypatch.setattr(data_roots.Path, "resolve", no_lookup)
    for folder in HOSTILE_FOLDERS:
        with pytest.raises(FolderRefused):
            confine(folder)


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=40))
def test_any_typed_folder_is_either_inside_a_root_or_refused_with_the_one_message(tmp_path_factory, text):
    base = tmp_path_factory.getbasetemp() / "fuzz-roots"
    (base / "data").mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PE_LAB_DATA_DIR", str(base / "data"))
        patch.setattr(data_roots, "DOWNLOAD_CACHE", base / "cache")
        roots = data_roots.data_roots()
        expected = refusal("/")
        try:
            folder = confine(text)
        except FolderRefused as refused:
            assert str(refused) == expected
        else:
            assert any(folder == root or root in folder.parents for root in roots)


def test_the_fault_lab_refuses_hostile_cwru_and_seu_folders_with_one_line_and_no_traceback(roots):
    at = AppTest.from_file(str(ROOT / "pages" / "fault_lab.py"), default_timeout=TIMEOUT)
    at.query_params["dataset"] = "cwru"
    at.run()
    shown = []
    for folder in ["~root/x", "~nosuchuser123/x", "a\x00b"]:
        at.text_input(key="cwru_dir").set_value(folder)
        at.button(key="load_cwru").click().run()
        assert not at.exception, folder
        shown.append(errors(at))
    at.radio(key="dataset").set_value("seu").run()
    at.text_input(key="seu_dir").set_value("~nosuchuser123/x")
    at.button(key="load_seu").click().run()
    assert not at.exception
    shown.append(errors(at))
    assert shown == [[refusal("/")]] * 4


# --- link values -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e999", "9" * 400])
def test_a_number_that_is_not_finite_is_unusable_for_any_widget(value):
    assert unusable(value) and unusable(value, (0.01, 1000.0)) and unusable(value, (0, 999))


def test_a_value_must_be_a_number_in_its_widgets_range_and_whole_for_a_whole_number_widget():
    assert not unusable("12.5", (0.01, 1000.0)) and not unusable(" 7 ", (0, 999)) and not unusable("dog")
    assert unusable("abc", (0.01, 1000.0)) and unusable("5000", (0.01, 1000.0)) and unusable("-1", (0, 999))
    assert unusable("2.5", (2, 1024)) and unusable("1e3", (0, 4095))  # Streamlit reads neither as a whole number
    assert unusable("0" * MAX_TEXT_CHARS + "5", (0, 999))


@pytest.mark.parametrize("value", ["inf", "1e999"])
def test_the_softmax_page_resets_a_to_its_default_and_says_which_link_value_it_dropped(value):
    at = run_page("pages/softmax_saturation.py", {"a": value, "temp": "0.5"})
    assert at.select_slider(key="a").value == 10.0
    assert at.select_slider(key="temp").value == 0.5  # a usable value beside it is kept
    assert [info.value for info in at.info] == [
        f"Link value a\\={value} was not usable here and was reset to its default."
    ]


def test_the_line_of_dropped_values_outlives_the_run_that_completes_the_first_paint_and_no_other():
    # in a browser the page reruns by itself once its first figure paints (ui.first_paint); the link holds the bad
    # value no longer by then, and the line used to vanish before anyone could read it
    at = run_page("pages/softmax_saturation.py", {"a": "inf"})
    line = "Link value a\\=inf was not usable here and was reset to its default."
    assert [info.value for info in at.info] == [line]
    page, _ = at.session_state[NOTICE_KEY]
    at.session_state[COMPLETING] = True  # what the live view's callback sets before that run
    at.run()
    assert [info.value for info in at.info] == [line] and not at.query_params.get("a")
    at.run()  # the visitor's next run: the line has been read
    assert not at.info
    at = run_page("pages/softmax_saturation.py", {"a": "inf"})
    at.session_state[NOTICE_KEY] = ("another page", line)  # as if it had been said on another page
    at.session_state[COMPLETING] = True
    at.run()
    assert not at.info and page != "another page"
    # a first paint completed on a run with nothing to repeat vouches for no later run
    at = run_page("pages/softmax_saturation.py", {})
    at.session_state[COMPLETING] = True
    at.run()
    at.session_state[NOTICE_KEY] = (page, line)  # a line stored afterwards, then the visitor's own run
    at.run()
    assert not at.info


def test_several_bad_link_values_are_named_in_one_line_with_visitor_text_escaped():
    at = run_page("pages/similarity.py", {"t": "-inf", "k": "[x](http://e.vil)", "kmax": "5000", "n": "16"})
    assert (at.select_slider(key="t").value, at.select_slider(key="k").value) == (10, 5)
    assert at.select_slider(key="kmax").value == 64 and at.select_slider(key="n").value == 16
    assert [info.value for info in at.info] == [
        "Link values t\\=\\-inf, k\\=\\[x\\]\\(http\u200b\\://e\\.vil\\), kmax\\=5000 were not usable here and were "
        "reset to their defaults."
    ]


def test_the_smallest_d_on_the_similarity_page_computes_from_a_link_and_from_the_slider():
    at = run_page("pages/similarity.py", {"d": "2", "scale": "16"})
    assert at.select_slider(key="d").value == 2 and not at.info
    at.select_slider(key="d").set_value(4).run()
    at.select_slider(key="d").set_value(2).run()
    assert not at.exception and at.select_slider(key="d").value == 2
    caption = next(c.value for c in at.caption if c.value.startswith("At the largest offset"))
    assert "NTK-aware scaling" in caption


def test_every_d_and_scale_the_similarity_page_offers_gives_finite_frequencies():
    for d_model in range(2, 1025, 2):
        for scale in (1, 2, 4, 8, 16):
            for method in METHODS:
                omega = scaled_frequencies(d_model, 1e4, method, scale)
                assert omega.shape == (d_model // 2,) and np.isfinite(omega).all() and (omega > 0).all()
    # one pair: its frequency is base^0 = 1 under every method but interpolation, which divides it by s
    assert scaled_frequencies(2, 1e4, "NTK-aware scaling", 16).tolist() == [1.0]
    assert scaled_frequencies(2, 1e4, "position interpolation", 16).tolist() == [1 / 16]


# --- home-page tokens ------------------------------------------------------------------------------------


def test_home_tokens_written_as_links_and_images_show_as_text_in_markdown_and_figure():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params["demo_tokens"] = "[x](http://e.vil) ![](http://e.vil/i.png) <a>b</a>"
    at.query_params["demo_seed"] = "inf"
    at.run()
    assert not at.exception
    assert [info.value for info in at.info] == [
        "Link value demo\\_seed\\=inf was not a usable number here and was reset to its default."
    ]
    shuffled = next(m.value for m in at.markdown if m.value.startswith("Shuffled:"))
    assert "](http" not in shuffled and "<a>" not in shuffled
    assert sorted(shuffled.removeprefix("Shuffled: **").removesuffix("**").split()) == sorted(
        [markdown_literal(token) for token in ("[x](http://e.vil)", "![](http://e.vil/i.png)", "<a>b</a>")]
    )
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith("fig_shuffle_demo"))
    labels = json.loads(chart.proto.spec)["data"][0]["y"]
    assert labels == ["0: [x](http://e.vil)", "1: ![](http://e.vil/i.png)", "2: &lt;a&gt;b&lt;/a&gt;"]
    # a token text past the limit: one line, and the demo goes on with the default sentence
    at.text_input(key="demo_tokens").set_value("x " * 3000).run()
    assert not at.exception and not at.info
    assert [error.value for error in at.error] == [
        "Words: The token text is 6,000 characters, over the limit of 500 characters. Type a short sentence. "
        'Showing "dog bites man" instead.'
    ]
    assert next(m.value for m in at.markdown if m.value.startswith("Shuffled:")) == "Shuffled: **dog man bites**"


def test_token_text_over_the_limit_is_refused_before_it_is_split():
    with pytest.raises(BudgetExceeded, match="over the limit of 500 characters"):
        parse_tokens("x " * MAX_TEXT_CHARS)
    assert parse_tokens("a b " * 10) == ["a", "b"] * 6  # the first MAX_TOKENS words


def test_softmax_scores_from_a_link_written_as_markdown_show_as_text_in_the_error():
    at = run_page("pages/softmax_saturation.py", {"scores": "[click me](https://e.vil/x) ![](https://e.vil/i.png) zz"})
    shown = [error.value for error in at.error]
    assert len(shown) == 1 and "](http" not in shown[0] and "\\[click me\\]" in shown[0]
    assert errors(at)[0].startswith("Scores: could not read '[click me](https://e.vil/x)")  # as the visitor reads it


def test_a_walkthrough_link_with_an_overlong_sentence_and_an_unusable_step_shows_two_lines_and_no_traceback():
    at = run_page("pages/walkthrough.py", {"words": "x " * 3000, "step": "1e999", "pe": "maybe", "shuffle": "true"})
    assert (at.select_slider(key="step").value, at.toggle(key="pe").value) == ("tokens", True)
    assert [info.value for info in at.info] == [
        "Link values step\\=1e999, pe\\=maybe were not usable here and were reset to their defaults."
    ]
    assert errors(at) == [
        "Sentence: The token text is 6,000 characters, over the limit of 500 characters. Type a short sentence. "
        'Showing "the dog bites the man" instead.'
    ]
