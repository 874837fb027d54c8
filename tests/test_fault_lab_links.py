"""The Fault lab's link values are checked like every other page's: a value no widget can take is dropped before
the widgets exist and named in one line, a valid link opens exactly as linked, old keys still open as before, and
every widget the page binds to its link is one it names (ui.lab.links), with the options or range it is given.

No test trains: the page opens on the built-in synthetic set without pressing the button."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from core.lab import evaluations
from core.lab.names import URL_ALIASES
from tests.apptest_utils import open_lab
from ui.lab import keys
from ui.lab.links import LINK_CHOICES, LINK_NUMBERS, SOURCES

BAD_LINK = {
    "win": "999",
    "models": "Z",
    "epochs": "500",
    "seeds": "0",
    "heads": "3",
    "dseed": "inf",
    "colour": "red",
}

# keys set to valid values that are not their defaults (a value at its default leaves the address: Streamlit);
# two loads, so the cross-load settings show; the other sources' keys: the per-source test below
VALID_LINK = {
    "dseed": "4",
    "dloads": ["0", "2"],
    "models": ["A", "B-noPE", "CNN"],  # B-noPE has an embedding: its width, dm, applies
    "tok": "fft",
    "windowing": "random",
    "win": "512",
    "patch": "16",
    "dm": "64",
    "heads": "8",
    "layers": "3",
    "epochs": "5",
    "seeds": "2",
    "lr": "0.001",
    "compare_windowings": "true",
    "snr": ["0", "8"],
    "train_loads": "0",
    "test_loads": "2",
    "d_model_sweep": ["16", "32"],
    "pe_scale_sweep": ["0.0", "1.0"],
}


def _nodes(node) -> Iterator:
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _nodes(child)


def bound_widgets(at: AppTest) -> dict[str, object]:
    """Every widget the page rendered bound to its link (bind="query-params"), by its link key."""
    found = {}
    for root in (at.main, at.sidebar):
        for node in _nodes(root):
            key = getattr(getattr(node, "proto", None), "query_param_key", "")
            if key:
                found[key] = node.proto
    return found


def info_lines(at: AppTest) -> list[str]:
    return [info.value for info in at.info]


# --- a dropped value says which ---------------------------------------------------------------------------------


def test_a_link_with_values_no_widget_can_take_opens_at_the_defaults_and_names_each_dropped_value():
    at = open_lab(BAD_LINK)  # asserts no exception
    default = list(at.session_state[keys.DEFAULT_MODELS_KEY])  # B-noPE and B, A beside them if the wait allows
    assert at.selectbox(key="win").value == 1024 and at.multiselect(key="models").value == default
    assert (at.slider(key="epochs").value, at.slider(key="seeds").value) == (40, 3)
    assert at.selectbox(key="heads").value == 4 and at.number_input(key="dseed").value == 0
    assert info_lines(at) == [
        "Link values win\\=999, models\\=Z, epochs\\=500, seeds\\=0, heads\\=3, dseed\\=inf were not usable here "
        "and were reset to their defaults. Link value colour\\=red is not a setting of this page and was removed."
    ]
    assert dict(at.query_params) == {}  # the address shows only what the page shows


def test_a_multivalued_link_keeps_its_usable_values_and_names_the_others():
    at = open_lab({"models": ["A", "Z", "CNN"], "dloads": ["1", "7"], "snr": ["0", "5"]})
    assert at.multiselect(key="models").value == ["A", "CNN"] and at.multiselect(key="dloads").value == [1]
    assert at.multiselect(key="snr").value == [0]
    assert at.session_state[keys.DATA_KEY].loads == [1]  # the link's usable loads were loaded
    assert info_lines(at) == [
        "Link values models\\=Z, dloads\\=7, snr\\=5 were not usable here and were reset to their defaults."
    ]


def test_a_valid_full_link_opens_exactly_as_linked_and_names_nothing():
    at = open_lab(VALID_LINK)
    assert info_lines(at) == []
    assert at.number_input(key="dseed").value == 4
    assert at.multiselect(key="dloads").value == [0, 2] and at.session_state[keys.DATA_KEY].loads == [0, 2]
    assert at.multiselect(key="models").value == ["A", "B-noPE", "CNN"]
    assert (at.radio(key="tok").value, at.radio(key="windowing").value) == ("fft", "random")
    shape = [at.selectbox(key=key).value for key in ("win", "patch", "dm", "heads", "lr")]
    assert shape == [512, 16, 64, 8, 0.001]
    assert [at.slider(key=key).value for key in ("layers", "epochs", "seeds")] == [3, 5, 2]
    assert at.checkbox(key="compare_windowings").value is True
    assert at.multiselect(key="snr").value == [0, 8]
    assert (at.multiselect(key="train_loads").value, at.multiselect(key="test_loads").value) == ([0], [2])
    assert at.multiselect(key="d_model_sweep").value == [16, 32]
    assert at.multiselect(key="pe_scale_sweep").value == [0.0, 1.0]
    assert dict(at.query_params) == VALID_LINK  # nothing dropped from the address


@pytest.mark.parametrize("source", ["cwru", "seu", "order_control", "spectraquest"])
def test_a_valid_link_into_each_source_opens_its_controls_as_linked(source):
    link = {
        "cwru": {"cloads": ["1", "3"], "cch": "FE"},
        "seu": {"scond": "30_2", "sch": "5"},
        "order_control": {"oseed": "7", "oclasses": "6", "opatch": "16"},
        "spectraquest": {"sqch": "a3", "sqloads": ["10", "90"]},
    }[source]
    at = open_lab({"src": source, **link})
    assert info_lines(at) == []
    for key, value in link.items():
        shown = at.session_state[key]
        assert [str(v) for v in (shown if isinstance(shown, list) else [shown])] == (
            value if isinstance(value, list) else [value]
        ), key


# --- old keys -----------------------------------------------------------------------------------------------------


def test_a_link_with_old_keys_opens_as_before_and_names_nothing():
    old = {"split": "random", "cmp": "true", "trl": "0", "tel": "1", "dms": ["16", "32"], "pes": ["0.0", "1.0"]}
    assert set(old) == set(URL_ALIASES)  # every old key
    at = open_lab({**old, "dloads": ["0", "1"]})
    assert info_lines(at) == []
    assert at.radio(key="windowing").value == "random" and at.checkbox(key="compare_windowings").value is True
    assert (at.multiselect(key="train_loads").value, at.multiselect(key="test_loads").value) == ([0], [1])
    assert at.multiselect(key="d_model_sweep").value == [16, 32]
    assert at.multiselect(key="pe_scale_sweep").value == [0.0, 1.0]
    assert not set(URL_ALIASES) & set(at.query_params)  # the old keys left the link


def test_an_old_key_with_a_value_no_widget_can_take_is_named_under_its_new_key():
    at = open_lab({"split": "sideways"})
    assert at.radio(key="windowing").value == "time"
    assert info_lines(at) == ["Link value windowing\\=sideways was not usable here and was reset to its default."]


# --- every key the page binds is one it names, with the options it is given --------------------------------------


def _loads_keys() -> set[str]:
    """The evaluation settings whose widget offers the current data's loads: a subset of the declared ones."""
    return {s.key for e in evaluations.registered() for s in e.settings if s.key and s.choices == "loads"}


def test_every_widget_the_page_binds_under_every_source_is_named_with_the_options_it_is_given():
    at = open_lab({"dloads": ["0", "1"]})  # two loads: the cross-load settings show too
    rendered: dict[str, object] = {}
    for source in SOURCES:
        at.radio(key="src").set_value(source).run()
        assert not at.exception, [e.message for e in at.exception]
        assert at.radio(key="src").value == source
        rendered.update(bound_widgets(at))
    assert set(rendered) == {*LINK_NUMBERS, *LINK_CHOICES}  # nothing forgotten, nothing stale
    assert not set(LINK_NUMBERS) & set(LINK_CHOICES)
    for key, (low, high) in LINK_NUMBERS.items():
        assert (rendered[key].min, rendered[key].max) == (low, high), key
    for key, options in LINK_CHOICES.items():
        shown = list(getattr(rendered[key], "options", []))
        if not shown:  # a checkbox: true or false
            assert tuple(options) == (False, True), key
        elif key in _loads_keys():
            assert set(shown) <= {str(option) for option in options}, key
        else:
            assert shown == [str(option) for option in options], key
