"""core.lab.reopen: every file this lab writes opens again, and no bytes at all get anything but a one-line
ValueError out of it (deep nesting, too many classes, wrong types, a gzip bomb, unrelated JSON, fuzzing)."""

from __future__ import annotations

import copy
import gzip
import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.lab import contract, reopen
from core.lab.contract import SCHEMA_VERSION, json_extent, read_json
from core.lab.models import MODEL_NAMES
from core.lab.reopen import NOT_OURS, open_saved, sentence_markdown
from core.lab.shipped import SHIPPED_STUDIES
from core.lab.study.contract import read_study
from core.lab.study.migration import migrate
from core.limits import MAX_CLASSES, MAX_HISTORY_EPOCHS, MAX_JSON_DEPTH, MAX_MATRIX_CELLS, MAX_RUNS, BudgetExceeded
from core.safe_text import markdown_literal

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = tuple(SHIPPED_STUDIES)
FIXTURES = sorted((ROOT / "tests" / "data").glob("*.json"))


def fixture_results(name: str = "pipeline_random_split_cosine.json") -> dict[str, Any]:
    """A pipeline fixture's results, as the lab reads them: the stored file (results schema 4, kept so that a
    version-4 file is seen to open) migrated to the current schema (core.lab.study.migration)."""
    return migrate(json.loads((ROOT / "tests" / "data" / name).read_text())["results"])


def small_study() -> dict[str, Any]:
    """The fault-size study cut to its first fold, two seeds and five test windows: small, and still valid."""
    study = migrate(read_json((ROOT / "results" / "study_cwru_fault-size.json").read_bytes()))
    fold = study["folds"][0]
    study["folds"] = [{**fold, "recording": fold["recording"][:5], "start": fold["start"][:5], "n_test": 5}]
    study["config"]["seeds"] = [0, 1]
    study["runs"] = [run for run in study["runs"] if run["fold"] == fold["fold"] and run["seed"] in (0, 1)]
    study["tuning_runs"] = [run for run in study["tuning_runs"] if run["fold"] == fold["fold"]]
    for run in study["runs"]:
        run["predictions"] = {key: values[:5] for key, values in run["predictions"].items()}
    return study


def encoded(content: Any) -> bytes:
    return json.dumps(content).encode()


def refusal(raw: bytes, error: type[Exception] = ValueError) -> str:
    with pytest.raises(error) as caught:
        open_saved(raw)
    message = str(caught.value)
    assert message and "\n" not in message, message
    return message


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_study_opens_again_as_a_study(name):
    raw = (ROOT / "results" / name).read_bytes()
    kind, study = open_saved(raw)
    assert kind == "study"
    stored = json.loads(gzip.decompress(raw) if name.endswith(".gz") else raw)
    assert study == {**stored, "schema_version": SCHEMA_VERSION}  # a version-5 study: only its number moves


@pytest.mark.parametrize("path", FIXTURES, ids=[path.stem for path in FIXTURES])
def test_every_fixture_results_file_opens_again_as_results(path):
    stored = json.loads(path.read_text())["results"]  # results schema 4: opened through the migration
    results = migrate(stored)
    assert (stored["schema_version"], results["schema_version"]) == (4, SCHEMA_VERSION) and results["runs"] == stored[
        "runs"
    ]
    data = stored["config"]["data"]  # version 6's one rename, in its place
    assert list(results["config"]["data"]) == [k.replace("split_seed", "windowing_seed") for k in data]
    assert results["config"]["data"]["windowing_seed"] == data["split_seed"]
    assert open_saved(encoded(stored)) == ("results", results)
    assert open_saved(encoded(results)) == ("results", results)
    assert open_saved(gzip.compress(encoded(stored))) == ("results", results)  # a .json.gz opens alike


def test_the_cut_down_study_the_fuzzing_starts_from_opens():
    study = small_study()
    assert open_saved(encoded(study)) == ("study", study)


def test_deep_nesting_is_refused_by_the_scan_before_the_parser_runs(monkeypatch):
    def parser_must_not_run(*args, **kwargs):
        raise AssertionError("json.loads ran on a file the depth scan should have refused")

    monkeypatch.setattr(contract.json, "loads", parser_must_not_run)
    raw = b"[" * 100_000 + b"]" * 100_000  # 200 kB
    started = time.perf_counter()
    message = refusal(raw, BudgetExceeded)
    assert time.perf_counter() - started < 0.5
    assert message == f"the JSON is nested deeper than {MAX_JSON_DEPTH} levels, deeper than any file this lab writes"


def test_the_depth_scan_skips_strings_and_their_escapes():
    assert json_extent(b'["[[[[", "\\"[[[", [[1]]]', 99) == (3, 5)  # the escaped quote does not end a string
    assert json_extent(b'{"a\\\\": [{"b": "]]]}}}"}]}', 99) == (3, 6)  # an escaped backslash ends before the quote
    assert json_extent(b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)[0] == 33
    for depth in (MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH):  # at the limit the parser still runs
        assert read_json(b"[" * depth + b"]" * depth) is not None


def test_a_string_longer_than_any_this_lab_writes_is_refused_before_parsing():
    message = refusal(encoded({"schema_version": 3, "verdict": "x" * 20_000}), BudgetExceeded)
    assert message == "the file holds a string of 20,000 bytes, over the limit of 10,000"


def test_many_classes_are_refused_by_the_class_cap_before_any_cell_is_checked_or_drawn(monkeypatch):
    def must_not_run(*args, **kwargs):
        raise AssertionError("ran on a file the class cap should have refused")

    monkeypatch.setattr(reopen, "validate_results", must_not_run)
    monkeypatch.setattr(reopen, "_drawable", must_not_run)
    results = fixture_results()
    results["class_names"] = [f"class {i}" for i in range(5_000)]
    message = refusal(encoded(results), BudgetExceeded)
    assert (
        message == f"The number of classes is 5,000, over the limit of {MAX_CLASSES}. This lab draws at most that many."
    )


def test_runs_history_and_drawn_matrices_have_their_caps():
    results = fixture_results()
    results["runs"] = [{}] * (MAX_RUNS + 1)
    assert refusal(encoded(results), BudgetExceeded).startswith(f"The number of runs is {MAX_RUNS + 1:,}")
    results = fixture_results()
    results["runs"][1]["history"] = results["runs"][1]["history"][:1] * (MAX_HISTORY_EPOCHS + 1)
    assert refusal(encoded(results), BudgetExceeded).startswith("The history of runs[1] is 1,001 epochs")
    study = small_study()
    others = sum(len(p["attention_by_offset"]) * len(p["attention_by_offset"][0]) for p in study["profiles"].values())
    study["profiles"]["A"]["attention_by_offset"] = [[0.5] * (MAX_MATRIX_CELLS // 2)] * 2  # alone, at the limit
    cells = MAX_MATRIX_CELLS + others - 2 * len(SMALL_STUDY["profiles"]["A"]["attention_by_offset"][0])
    assert refusal(encoded(study), BudgetExceeded) == (
        f"The size of the attention profiles is {cells:,} cells, over the limit of {MAX_MATRIX_CELLS:,} cells."
    )


def _set(content: dict[str, Any], path: tuple, value: Any) -> None:
    for key in path[:-1]:
        content = content[key]
    content[path[-1]] = value


def _delete(content: dict[str, Any], path: tuple) -> None:
    for key in path[:-1]:
        content = content[key]
    del content[path[-1]]


@pytest.mark.parametrize(
    "path, value, message",
    [
        (("class_names", 0), 5, "class_names must be a list of at least two strings"),
        (("runs", 0, "per_class_f1"), [0.5], r"runs\[0\]\.per_class_f1 must be 10 fractions"),
        (("runs", 0, "confusion_matrix", 0, 0), "x", r"runs\[0\]\.confusion_matrix must be 10 x 10"),
        (("runs", 0, "confusion_matrix", 1), [1, 2], r"runs\[0\]\.confusion_matrix must be 10 x 10"),
        (("runs", 0, "history", 0, "val_loss"), "0.3", r"history\[0\]\.val_loss must be a finite number"),
        (("runs", 0, "best_epoch"), 1.5, r"runs\[0\]\.best_epoch out of range"),
        (("runs",), {}, "runs must be a list"),
        (("summary", "A", "accuracy", "mean"), None, r"\['accuracy'\]\.mean must be a fraction in 0\.\.1"),
        (("order_summary", "A", "shuffled_drop", "ci95"), [2, 1], r"shuffled_drop\.ci95 must be null or \[low, high\]"),
        (("config", "data", "window"), "128", "config.data.window must be a positive integer"),
        (("config", "models"), "A,B", "config.models must list distinct model names"),
        (("config", "seeds"), [0, "1"], "config.seeds must list integers"),
        # the page quotes config.train as the command that reproduces the file: only values a run could have had
        (("config", "train", "epochs"), "abc", "config.train is not a training configuration: epochs must be a pos"),
        (("config", "train", "learning_rate"), "x", "learning_rate must be positive, got 'x'"),
        (("config", "train", "weight_decay"), True, "weight_decay must be zero or positive, got True"),
        (("config", "train", "lr_schedule"), "warp", "lr_schedule must be one of"),
        (("config", "train", "rm -rf"), 1, "unexpected keyword argument 'rm -rf'"),
        (("config", "train", "model", "layers_"), 3, "unexpected keyword argument 'layers_'"),
    ],
)
def test_a_results_field_of_the_wrong_type_is_refused_by_name(path, value, message):
    results = fixture_results()
    _set(results, path, value)
    with pytest.raises(ValueError, match=message):
        open_saved(encoded(results))


def test_runs_of_a_model_this_lab_does_not_have_are_refused():
    raw = encoded(fixture_results()).replace(b'"B"', b'"Z"')  # every place the model is named
    assert refusal(raw) == "invalid results JSON: runs name models this lab does not have: ['Z']; it has " + ", ".join(
        MODEL_NAMES
    )


@pytest.mark.parametrize("key", ["verdict", "class_names", "config"])
def test_a_results_file_missing_a_field_is_refused_by_name(key):
    results = fixture_results()
    _delete(results, (key,))
    with pytest.raises(ValueError, match=rf"missing \['{key}'\]"):
        open_saved(encoded(results))


@pytest.mark.parametrize(
    "path, value, message",
    [
        (("recordings", 0, "label"), 3, r"recordings\[0\]\.label must be a class name"),
        (("recordings",), 7, "recordings must be a non-empty list"),
        (("folds", 0, "fold"), [1], r"folds\[0\]\.fold must be an integer"),
        (("folds", 0, "name"), {"x": 1}, r"folds\[0\]\.name must be a name"),
        (("runs", 0, "model"), None, r"runs\[0\]\.model must be a model name"),
        (("runs", 0, "fold"), [0], r"runs\[0\]\.fold must name a fold"),
        (("runs", 0, "predictions", "true"), "abcde", r"runs\[0\]\.predictions\.true must hold one value per"),
        (("runs", 0, "confusion_matrix"), [[1.5] * 4] * 4, r"runs\[0\]\.confusion_matrix must be 4 x 4"),
        (("profiles", "A", "attention_by_offset"), [[1, 2], [3]], "must be a rectangular table of finite numbers"),
        (("profiles", "B", "learned_similarity_by_offset"), ["x"], "must be a non-empty list of finite numbers"),
        (("comparisons", 0, "diff"), "1", r"comparisons\[0\]\.diff must be a number"),
        (("comparisons", 0, "ci95"), [1], r"comparisons\[0\]\.ci95 must be null or \[low, high\]"),
        (("comparisons", 0, "a"), "CNN", r"comparisons\[0\] must compare models that were run"),  # not run here
        (("order_summary", "A", "shuffled_drop", "mean"), None, r"shuffled_drop\.mean must be a finite number"),
        (("config", "models"), ["A", "A"], "config.models must list distinct model names"),
        (("config", "margin"), "2", "config.margin must be a positive number"),
        (("config", "train", "model", "d_model"), -3, "config.train.model.d_model must be null or >= 1"),
        (("config", "train", "patience"), 0, "config.train is not a training configuration: patience must be a pos"),
        (("config", "train", "min_delta"), 2.0, "min_delta must be at least 0 and below 1"),
    ],
)
def test_a_study_field_of_the_wrong_type_is_refused_by_name(path, value, message):
    study = small_study()
    _set(study, path, value)
    with pytest.raises(ValueError, match=message):
        open_saved(encoded(study))


def test_a_gzip_bomb_is_refused_after_expanding_one_byte_past_the_limit():
    bomb = gzip.compress(b" " * 20_000_001, compresslevel=1)  # 87 kB that expand past 20 MB
    assert refusal(bomb, BudgetExceeded) == "uncompressed, the file is over the 20 MB limit of a saved file"
    assert refusal(gzip.compress(b"{}")[:-6]).startswith("the file is not valid gzip")


@pytest.mark.parametrize("raw", [b'{"a": 1}', b"[]", b'"x"', b"null", b'{"kind": "notes", "schema_version": 6}'])
def test_unrelated_json_is_not_a_pe_lab_file(raw):
    assert refusal(raw).startswith(NOT_OURS)


def test_a_file_that_says_it_holds_results_is_read_as_results_and_refused_by_what_it_lacks():
    message = refusal(b'{"kind": "results", "schema_version": 3}')
    assert message.startswith("invalid results JSON: top level keys: missing ['class_names', 'comparisons'")


@pytest.mark.parametrize(
    "raw, message",
    [
        (b"{broken", "the file is not valid JSON (Expecting property name"),
        (b'{"schema_version": NaN}', "the file is not valid JSON (NaN is not a number a saved file holds)"),
        (b'{"schema_version": 1e999}', "the file is not valid JSON (1e999 is too large for a number)"),
        (b'{"schema_version": 3}\xff', "the file is not valid JSON: not UTF-8 (invalid start byte at byte 21)"),
        (b"\xef\xbb\xbf{}", "the file is not valid JSON (Unexpected UTF-8 BOM"),
    ],
)
def test_bytes_that_are_not_json_are_refused_in_one_line(raw, message):
    assert refusal(raw).startswith(message)


def test_an_integer_past_64_bits_is_refused_where_a_count_is_read():
    results = fixture_results()
    results["runs"][0]["confusion_matrix"][0][0] = 2**64
    with pytest.raises(ValueError, match=r"runs\[0\]\.confusion_matrix must be 10 x 10 non-negative integers"):
        open_saved(encoded(results))


def test_sentences_of_this_lab_show_as_written_and_anything_markdown_acts_on_is_escaped():
    verdict = fixture_results()["verdict"]
    assert sentence_markdown(verdict) == verdict
    assert sentence_markdown("bad.json cannot be opened: invalid study JSON: schema_version 0") == (
        "bad.json cannot be opened: invalid study JSON: schema_version 0"
    )
    for text in ("[x](http://e.vil)", "see www.e.vil", "mail a@e.vil", ":red[alarm]", "1. a list", "$x$", "_it_"):
        assert sentence_markdown(text) != text
    assert sentence_markdown("[x](http://e.vil)") == markdown_literal("[x](http://e.vil)")


# --- fuzzing: whatever the bytes, a (kind, content) or a one-line ValueError ------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=16,
)
SMALL_RESULTS, SMALL_STUDY = fixture_results(), small_study()


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return [prefix] + [path for key, child in children for path in _paths(child, (*prefix, key))]


PATHS = {"results": _paths(SMALL_RESULTS)[1:], "study": _paths(SMALL_STUDY)[1:]}
FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _opens_or_refuses_in_one_line(raw: bytes) -> None:
    try:
        kind, content = open_saved(raw)
    except ValueError as error:
        assert str(error) and "\n" not in str(error)
    else:
        assert kind in reopen.KINDS and isinstance(content, dict)


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes_open_or_are_refused_in_one_line(raw):
    _opens_or_refuses_in_one_line(raw)


@FUZZ
@given(JSON_VALUES, st.sampled_from([None, "results", "study"]))
def test_random_json_values_open_or_are_refused_in_one_line(value, kind):
    if kind is not None and isinstance(value, dict):  # get past the kind check into the validators
        value = {**value, **({"kind": "study", "schema_version": 2} if kind == "study" else {"schema_version": 3})}
    _opens_or_refuses_in_one_line(encoded(value))


@FUZZ
@given(st.data(), st.sampled_from(["results", "study"]))
def test_mutations_of_a_valid_file_open_or_are_refused_in_one_line(data, kind):
    content = copy.deepcopy(SMALL_RESULTS if kind == "results" else SMALL_STUDY)
    path = data.draw(st.sampled_from(PATHS[kind]))
    if data.draw(st.booleans()):
        _delete(content, path)
    else:
        _set(content, path, data.draw(JSON_VALUES))
    raw = encoded(content)
    cut = data.draw(st.integers(0, 3))  # sometimes the bytes are cut short or damaged too
    if cut == 1:
        raw = raw[: data.draw(st.integers(0, len(raw)))]
    elif cut == 2:
        raw = gzip.compress(raw)
    _opens_or_refuses_in_one_line(raw)


def test_a_file_of_the_previous_schema_opens_migrated_and_an_older_one_is_refused_by_its_version():
    previous = ROOT / "tests" / "data" / "previous"
    kind, results = open_saved((previous / "results_schema3.json").read_bytes())
    assert (kind, results["schema_version"], results["comparisons"][0]["margin"]) == ("results", SCHEMA_VERSION, 2.0)
    assert results["config"]["data"]["windowing"] == "time"
    kind, study = open_saved(gzip.compress((previous / "study_schema2.json").read_bytes()))
    assert (kind, study["schema_version"], study["config"]["design"]) == ("study", SCHEMA_VERSION, "time-cv")
    older = {**json.loads((previous / "results_schema3.json").read_text()), "schema_version": 2}
    assert refusal(encoded(older)).startswith("invalid results JSON: schema_version 2, but this PE Lab reads")


@pytest.mark.parametrize("version", [5, 6])
def test_a_results_file_that_carries_its_kind_opens_from_the_version_it_was_written_at(version):
    # versions 5 and 6 wrote kind "results"; the migration once stepped only files without a kind, so the page
    # refused every results file a visitor had saved at those versions as "not a PE Lab results or study file"
    current = migrate(json.loads(FIXTURES[0].read_text())["results"])
    saved = {**copy.deepcopy(current), "schema_version": version}
    if version == 5:  # version 6 renamed config.data.split_seed
        data = saved["config"]["data"]
        saved["config"]["data"] = {("split_seed" if k == "windowing_seed" else k): v for k, v in data.items()}
    assert saved["kind"] == "results"
    assert open_saved(encoded(saved)) == ("results", current)


@pytest.mark.parametrize("kind", [["results"], {"a": 1}, 7, None])
def test_a_file_of_a_foreign_kind_is_left_as_it_is_and_refused_in_words(kind):
    document = {"kind": kind, "schema_version": 3}
    assert migrate(document) == document  # no step, and no TypeError for a kind that cannot be looked up
    with pytest.raises(ValueError, match="invalid study JSON: it is not a PE Lab study"):
        read_study(json.dumps(document))
