"""Visitor text reaches markdown and Plotly as literal characters."""

from core.safe_text import markdown_literal, plotly_literal, shown


def test_a_markdown_link_and_image_are_escaped_character_by_character():
    assert markdown_literal("[x](http://a.b/c)") == "\\[x\\]\\(http\u200b\\://a\\.b/c\\)"
    assert markdown_literal("![](http://e.vil/i.png)").startswith("\\!\\[\\]\\(http\u200b\\:")
    assert markdown_literal(":red[alarm] $x^2$ **bold**") == r"\:red\[alarm\] \$x\^2\$ \*\*bold\*\*"


def test_plain_words_pass_unchanged_and_long_or_multiline_text_is_one_short_line():
    assert markdown_literal("the cat sat") == "the cat sat"
    assert shown("a\nb\x00c") == "a b?c"
    assert shown("x" * 500, limit=10) == "x" * 9 + "…"


def test_plotly_markup_is_shown_as_typed():
    assert plotly_literal('<a href="http://e.vil">IR007</a>') == '&lt;a href="http://e.vil"&gt;IR007&lt;/a&gt;'
    assert plotly_literal("B&C") == "B&amp;C"


def test_bare_addresses_get_a_zero_width_space_inside_each_autolink_trigger():
    escaped = markdown_literal("see http://e.vil, HTTPS://x.y, www.e.vil and me@e.vil")
    for trigger in ("http\\:", "HTTPS\\:", "www\\.", "me\\@"):
        assert trigger not in escaped
    assert escaped.replace("\u200b", "").replace("\\", "") == "see http://e.vil, HTTPS://x.y, www.e.vil and me@e.vil"
    assert markdown_literal("3.5 Hz, at 12:00") == "3\\.5 Hz, at 12\\:00"
