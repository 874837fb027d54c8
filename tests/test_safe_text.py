"""Visitor text reaches markdown and Plotly as literal characters."""

from core.safe_text import markdown_literal, plotly_literal, shown


def test_a_markdown_link_and_image_are_escaped_character_by_character():
    assert markdown_literal("[x](http://a.b/c)") == r"\[x\]\(http\://a\.b/c\)"
    assert markdown_literal("![](http://e.vil/i.png)").startswith(r"\!\[\]\(http\:")
    assert markdown_literal(":red[alarm] $x^2$ **bold**") == r"\:red\[alarm\] \$x\^2\$ \*\*bold\*\*"


def test_plain_words_pass_unchanged_and_long_or_multiline_text_is_one_short_line():
    assert markdown_literal("the cat sat") == "the cat sat"
    assert shown("a\nb\x00c") == "a b?c"
    assert shown("x" * 500, limit=10) == "x" * 9 + "…"


def test_plotly_markup_is_shown_as_typed():
    assert plotly_literal('<a href="http://e.vil">IR007</a>') == '&lt;a href="http://e.vil"&gt;IR007&lt;/a&gt;'
    assert plotly_literal("B&C") == "B&amp;C"
