"""The Fault lab's link values are checked like every other page's: a value no widget can take is dropped before
the widgets exist and named in one line, a valid link opens exactly as linked, every old key still opens as before
and leaves the link, every widget the page binds to its link is one it names (ui.lab.links), with the options or
range it is given, and every key is the long name of the CLI flag that sets the same thing.

No test trains: the page opens on the built-in synthetic set without pressing the button."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from core.lab import evaluations
from core.lab.experiment.cli import build_parser
from core.lab.names import EXPERIMENT_FLAG_ALIASES, URL_ALIASES, URL_KEYS_WITHOUT_A_FLAG, new_url_key, url_key_of_flag
from tests.apptest_utils import open_lab
from ui.lab import keys
from ui.lab.links import LINK_CHOICES, LINK_NUMBERS, SOURCE_CHOICE_KEYS, SOURCES, SPECTRAQUEST_LOADS

BAD_LINK = {
    "window": "999",
    "models": "Z",
    "epochs": "500",
    "n_seeds": "0",
    "heads": "3",
    "data_seed": "inf",
    "colour": "red",
}

# keys set to valid values that are not their defaults (a value at its default leaves the address: Streamlit);
# two loads, so the cross-load settings show; the other sources' keys: the per-source test below
VALID_LINK = {
    "data_seed": "4",
    "loads": ["0", "2"],
    "models": ["A", "B-noPE", "CNN"],  # B-noPE has an embedding: its width, d_model, applies
    "tokens": "fft",
    "windowing": "random",
    "window": "512",
    "patch": "16",
    "d_model": "64",
    "heads": "8",
    "layers": "3",
    "epochs": "5",
    "n_seeds": "2",
    "learning_rate": "0.001",
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
    assert at.selectbox(key="window").value == 1024 and at.multiselect(key="models").value == default
    assert (at.slider(key="epochs").value, at.slider(key="n_seeds").value) == (40, 3)
    assert at.selectbox(key="heads").value == 4 and at.number_input(key="data_seed").value == 0
    assert info_lines(at) == [
        "Link values window\\=999, models\\=Z, epochs\\=500, n\\_seeds\\=0, heads\\=3, data\\_seed\\=inf were not "
        "usable here and were reset to their defaults. Link value colour\\=red is not a setting of this page and was "
        "removed."
    ]
    assert dict(at.query_params) == {}  # the address shows only what the page shows


def test_a_multivalued_link_keeps_its_usable_values_and_names_the_others():
    at = open_lab({"models": ["A", "Z", "CNN"], "loads": ["1", "7"], "snr": ["0", "5"]})
    assert at.multiselect(key="models").value == ["A", "CNN"] and at.multiselect(key="loads").value == [1]
    assert at.multiselect(key="snr").value == [0]
    assert at.session_state[keys.DATA_KEY].loads == [1]  # the link's usable loads were loaded
    assert info_lines(at) == [
        "Link values models\\=Z, loads\\=7, snr\\=5 were not usable here and were reset to their defaults."
    ]


def test_a_valid_full_link_opens_exactly_as_linked_and_names_nothing():
    at = open_lab(VALID_LINK)
    assert info_lines(at) == []
    assert at.number_input(key="data_seed").value == 4
    assert at.multiselect(key="loads").value == [0, 2] and at.session_state[keys.DATA_KEY].loads == [0, 2]
    assert at.multiselect(key="models").value == ["A", "B-noPE", "CNN"]
    assert (at.radio(key="tokens").value, at.radio(key="windowing").value) == ("fft", "random")
    shape = [at.selectbox(key=key).value for key in ("window", "patch", "d_model", "heads", "learning_rate")]
    assert shape == [512, 16, 64, 8, 0.001]
    assert [at.slider(key=key).value for key in ("layers", "epochs", "n_seeds")] == [3, 5, 2]
    assert at.checkbox(key="compare_windowings").value is True
    assert at.multiselect(key="snr").value == [0, 8]
    assert (at.multiselect(key="train_loads").value, at.multiselect(key="test_loads").value) == ([0], [2])
    assert at.multiselect(key="d_model_sweep").value == [16, 32]
    assert at.multiselect(key="pe_scale_sweep").value == [0.0, 1.0]
    assert dict(at.query_params) == VALID_LINK  # nothing dropped from the address


@pytest.mark.parametrize("source", ["cwru", "seu", "order_control", "spectraquest"])
def test_a_valid_link_into_each_source_opens_its_controls_as_linked(source):
    link = {
        "cwru": {"loads": ["1", "3"], "channel": "FE"},
        "seu": {"seu_condition": "30_2", "seu_channel": "5"},
        "order_control": {"data_seed": "7", "order_classes": "6", "order_patch": "16"},
        "spectraquest": {"channel": "a3", "loads": ["10", "90"]},
    }[source]
    at = open_lab({"dataset": source, **link})
    assert info_lines(at) == []
    for key, value in link.items():
        shown = at.session_state[key]
        assert [str(v) for v in (shown if isinstance(shown, list) else [shown])] == (
            value if isinstance(value, list) else [value]
        ), key


# --- old keys -----------------------------------------------------------------------------------------------------

# one link per old key (two old keys that name one new key cannot share a link), with a usable value and the
# source whose control reads it
OLD_LINKS = [
    {"src": "csv"},
    {"dseed": "7"},
    {"dataset": "order_control", "oseed": "7"},
    {"dloads": ["0", "1"]},
    {"dataset": "cwru", "cloads": ["1", "3"]},
    {"dataset": "spectraquest", "sqloads": ["10", "90"]},
    {"dataset": "cwru", "cch": "FE"},
    {"dataset": "spectraquest", "sqch": "a3"},
    {"dataset": "seu", "scond": "30_2", "sch": "5"},
    {"dataset": "order_control", "oclasses": "6", "opatch": "16"},
    {"tok": "fft", "win": "512", "lr": "0.001", "seeds": "2"},
    {"models": ["A", "B"], "dm": "64"},
    {"split": "random", "cmp": "true", "loads": ["0", "1"], "trl": "0", "tel": "1"},
    {"dms": ["16", "32"], "pes": ["0.0", "1.0"]},
]


def _as_shown(value) -> list[str]:
    """A widget's value or a link's values as the link writes them (a checkbox's True as "true")."""
    return [str(v).lower() if isinstance(v, bool) else str(v) for v in (value if isinstance(value, list) else [value])]


def test_the_old_links_name_every_old_key_once_or_with_another_source():
    named = [key for link in OLD_LINKS for key in link if key in URL_ALIASES]
    assert sorted(named) == sorted(URL_ALIASES)


@pytest.mark.parametrize("link", OLD_LINKS, ids=lambda link: "-".join(key for key in link if key in URL_ALIASES))
def test_a_link_with_old_keys_opens_as_before_under_the_new_keys_and_names_nothing(link):
    at = open_lab(link)
    assert info_lines(at) == []
    for key, value in link.items():
        new = new_url_key(key)
        assert _as_shown(at.session_state[new]) == _as_shown(value), key
    assert not set(URL_ALIASES) & set(at.query_params)  # the old keys left the link (the address is rewritten)
    for key, value in link.items():  # the values stay, under the new keys (the defaults leave, as Streamlit does)
        assert _as_shown(at.query_params.get(new_url_key(key), [])) in (_as_shown(value), []), key


def test_an_old_key_with_a_value_no_widget_can_take_is_named_under_its_new_key():
    at = open_lab({"split": "sideways", "win": "999"})
    assert at.radio(key="windowing").value == "time" and at.selectbox(key="window").value == 1024
    assert info_lines(at) == [
        "Link values windowing\\=sideways, window\\=999 were not usable here and were reset to their defaults."
    ]


# --- every key the page binds is one it names, with the options it is given --------------------------------------


def _loads_keys() -> set[str]:
    """The evaluation settings whose widget offers the current data's loads: a subset of the declared ones."""
    return {s.key for e in evaluations.registered() for s in e.settings if s.key and s.choices == "loads"}


def test_every_widget_the_page_binds_under_every_source_is_named_with_the_options_it_is_given():
    at = open_lab({"loads": ["0", "1"]})  # two loads: the cross-load settings show too
    rendered: dict[str, object] = {}
    per_source: dict[str, dict[str, object]] = {}
    for source in SOURCES:
        at.radio(key="dataset").set_value(source).run()
        assert not at.exception, [e.message for e in at.exception]
        assert at.radio(key="dataset").value == source
        per_source[source] = bound_widgets(at)
        rendered.update(per_source[source])
    assert set(rendered) == {*LINK_NUMBERS, *LINK_CHOICES}  # nothing forgotten, nothing stale
    assert not set(LINK_NUMBERS) & set(LINK_CHOICES)
    for key, (low, high) in LINK_NUMBERS.items():
        assert (rendered[key].min, rendered[key].max) == (low, high), key
    for key, options in LINK_CHOICES.items():
        shown = list(getattr(rendered[key], "options", []))
        if not shown:  # a checkbox: true or false
            assert tuple(options) == (False, True), key
        elif key in _loads_keys() or key in SOURCE_CHOICE_KEYS:
            offered = {str(option) for option in options}
            for widgets in per_source.values():  # each source's control: some of the options the link takes
                assert key not in widgets or set(widgets[key].options) <= offered, key
        else:
            assert shown == [str(option) for option in options], key
    shared = {key: [s for s, widgets in per_source.items() if key in widgets] for key in SOURCE_CHOICE_KEYS}
    assert shared == {"loads": ["synthetic", "cwru", "spectraquest"], "channel": ["cwru", "spectraquest"]}


def test_another_source_opens_its_loads_and_channel_at_its_own_defaults():
    at = open_lab({"dataset": "cwru", "loads": ["1", "3"], "channel": "FE"})
    at.radio(key="dataset").set_value("spectraquest").run()
    assert at.multiselect(key="loads").value == list(SPECTRAQUEST_LOADS) and at.selectbox(key="channel").value == "a2"
    at.radio(key="dataset").set_value("cwru").run()
    assert at.multiselect(key="loads").value == [0] and at.selectbox(key="channel").value == "DE"
    assert not at.exception and info_lines(at) == []


# --- one word per concept: the link's keys are the CLI's long names ------------------------------------------------


def _long_names(parser) -> set[str]:
    return {
        url_key_of_flag(flag)
        for action in parser._actions
        for flag in action.option_strings
        if flag.startswith("--") and flag not in {old for olds in EXPERIMENT_FLAG_ALIASES.values() for old in olds}
    }


def test_every_key_of_the_link_is_the_long_name_of_the_cli_flag_that_sets_it():
    link_keys = {*LINK_NUMBERS, *LINK_CHOICES}
    flags = _long_names(build_parser())
    assert link_keys - flags == set(URL_KEYS_WITHOUT_A_FLAG)  # compare_windowings: --windowing time,random
    assert {"dataset", "data_seed", "window", "d_model", "n_seeds", "learning_rate", "tokens"} <= link_keys & flags
    assert not set(URL_ALIASES) & link_keys and set(URL_ALIASES.values()) <= link_keys  # every old key has a new one
