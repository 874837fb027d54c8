"""The README's glossary is a table of one word per concept (`| word | definition | aliases |`): each word alone in
its cell with a one-sentence definition, the concepts issue 34 named among them, and every old link key and old
flag the lab still reads (core.lab.names) named where a reader looks for it."""

from __future__ import annotations

import re

from core.lab.names import EXPERIMENT_FLAG_ALIASES, STUDY_FLAG_ALIASES, URL_ALIASES
from tests.apptest_utils import ROOT

CONCEPTS = {"run", "stage", "plan", "job", "fold", "repeat", "seed", "windowing", "design", "comparison", "points"}


def glossary_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("\n## Glossary\n")
    return text[start : text.index("\n## ", start + 1)]


def glossary_rows() -> list[list[str]]:
    """The cells of the glossary's word table, its header first."""
    lines = glossary_section().splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("| word |")]
    assert len(headers) == 1, "one table whose header starts with | word |"
    rows = []
    for line in lines[headers[0] :]:
        if not line.startswith("|"):
            break  # the table ends at its first other line
        if not re.fullmatch(r"\|[-| ]+\|", line):  # past the |---| line
            rows.append([cell.strip() for cell in line.strip()[1:-1].split("|")])  # no cell holds a "|"
    return rows


def test_the_glossary_is_a_table_of_word_definition_and_aliases():
    header, *rows = glossary_rows()
    assert header == ["word", "definition", "aliases"]
    assert rows and all(len(row) == 3 for row in rows), [row for row in rows if len(row) != 3]
    words = [row[0] for row in rows]
    assert len(set(words)) == len(words)
    for word in words:  # the word alone: no code marks, no bold, no second term, no explanation
        assert re.fullmatch(r"[a-z][a-z_]*(-[a-z]+)?", word), word


def test_every_concept_has_one_sentence_of_definition():
    _, *rows = glossary_rows()
    assert CONCEPTS <= {row[0] for row in rows}
    for word, definition, *_ in rows:
        assert definition.endswith(".") and definition[0].isupper(), word
        assert not re.search(r"[.!?] [A-Z]", definition), f"{word}: one sentence"


def test_every_old_link_key_and_old_flag_the_lab_reads_is_named_in_the_glossary():
    section = glossary_section()
    for old in URL_ALIASES:
        assert f"`{old}`" in section or f"| {old} " in section or f"{old} (" in section, old
    for aliases in (EXPERIMENT_FLAG_ALIASES, STUDY_FLAG_ALIASES):
        for new, olds in aliases.items():
            assert f"`{new}`" in section and all(f"`{old}`" in section for old in olds), new
