"""AppTest of the Fault lab's "Open a saved file": hostile files are refused in one line and the page stays
usable, a file that cannot be drawn is closed instead of breaking the session, and every string of a reopened
file shows as text."""

from __future__ import annotations

import gzip
import json

import pytest

import core.lab.figures.fault_lab
from core.lab.reopen import sentence_markdown
from core.lab.study.migration import migrate
from core.limits import MAX_JSON_DEPTH
from core.safe_text import markdown_literal
from tests.apptest_utils import open_lab
from tests.apptest_utils import raw_errors as errors
from tests.test_reopen import ROOT, encoded, fixture_results, small_study
from ui.lab import keys
from ui.lab import study as lab_study

LINK = "[x](http://e.vil)"


def open_file(at, name: str, raw: bytes) -> None:
    at.file_uploader(key="open_json").set_value((name, raw, "application/json")).run()
    at.button(key="open_file").click().run()
    assert not at.exception, [e.message for e in at.exception]


def open_control_is_there(at) -> bool:
    return [u.key for u in at.file_uploader if u.key == "open_json"] == ["open_json"] and any(
        b.key == "open_file" for b in at.button
    )


def shown_text(at) -> list[str]:
    """Every element that renders markdown."""
    kinds = (at.markdown, at.caption, at.info, at.error, at.success, at.warning)
    return [element.value for elements in kinds for element in elements]


def test_hostile_files_are_refused_in_one_line_and_the_open_control_stays():
    at = open_lab()
    results = fixture_results()
    open_file(at, "good.json", encoded(results))
    kept = at.session_state[keys.RESULTS_KEY]
    assert kept == migrate(results)  # as core reads it: at the current schema version
    wrong_type = fixture_results()
    wrong_type["runs"][0]["confusion_matrix"][0][0] = "7"
    many_classes = fixture_results()
    many_classes["class_names"] = [f"c{i}" for i in range(5_000)]
    for name, raw, message in (
        (
            "deep.json",
            b"[" * 100_000 + b"]" * 100_000,
            f"the JSON is nested deeper than {MAX_JSON_DEPTH} levels, deeper than any file this lab writes",
        ),
        (
            "typed.json",
            encoded(wrong_type),
            "invalid results JSON: runs[0].confusion_matrix must be 10 x 10 non-negative integers",
        ),
        (
            "classes.json",
            encoded(many_classes),
            "The number of classes is 5,000, over the limit of 64. This lab draws at most that many.",
        ),
        (
            "bomb.json.gz",
            gzip.compress(b" " * 20_000_001, compresslevel=1),
            "uncompressed, the file is over the 20 MB limit of a saved file",
        ),
    ):
        open_file(at, name, raw)
        assert errors(at) == [sentence_markdown(f"{name} cannot be opened: {message}")]
        assert at.session_state[keys.RESULTS_KEY] is kept  # nothing the visitor had is lost
        at.run()
        assert not at.exception and open_control_is_there(at)


def test_a_gzip_compressed_study_opens_and_is_shown():
    at = open_lab()
    raw = (ROOT / "results" / "study_cwru_load-out.json.gz").read_bytes()
    open_file(at, "load-out.json.gz", raw)
    assert [s.value for s in at.success] == ["Opened load-out.json.gz: the study is under 5 · Study."]
    assert at.session_state[keys.STUDY_KEY] == migrate(json.loads(gzip.decompress(raw)))


def test_a_class_name_that_is_a_markdown_link_shows_as_its_characters():
    at = open_lab()
    results = fixture_results()
    results["class_names"][0] = LINK
    open_file(at, "link.json", encoded(results))
    assert at.session_state[keys.RESULTS_KEY] == migrate(results)
    texts = shown_text(at)
    assert any(f"classes {markdown_literal(LINK)}, IR007" in text for text in texts), texts
    assert not any("](http" in text for text in texts)
    # a refusal that names the file's text is escaped too
    study = small_study()
    study["folds"][0]["name"] = {LINK: 1}
    open_file(at, f"{LINK}.json", encoded(study))
    line = f"{LINK}.json cannot be opened: invalid study JSON: folds[0].name must be a name"
    assert errors(at) == [sentence_markdown(line)] and "](http" not in errors(at)[0]


@pytest.mark.parametrize("kind", ["results", "study"])
def test_a_file_that_cannot_be_drawn_is_closed_and_the_page_stays_usable(monkeypatch, kind):
    def broken(*args, **kwargs):
        raise RuntimeError("a figure no check foresaw")

    original = lab_study.fold_scores

    def broken_for_the_opened_study(study, *args):
        return broken() if study["folds"][0]["n_test"] == 5 else original(study, *args)

    at = open_lab()
    if kind == "results":
        monkeypatch.setattr(core.lab.figures.fault_lab, "per_class_f1", broken)
        open_file(at, "results.json", encoded(fixture_results()))
    else:
        open_file(at, "study.json", encoded(small_study()))
        at.selectbox(key="study_pick").set_value("the study run or opened here").run()
        monkeypatch.setattr(lab_study, "fold_scores", broken_for_the_opened_study)
        at.toggle(key="study_more").set_value(True).run()
    assert not at.exception, [e.message for e in at.exception]
    what = "The results" if kind == "results" else "The study"
    assert errors(at) == [f"{what} could not be drawn: RuntimeError a figure no check foresaw. It was closed."]
    assert (keys.RESULTS_KEY if kind == "results" else keys.STUDY_KEY) not in at.session_state
    at.run()
    assert not at.exception and open_control_is_there(at)
