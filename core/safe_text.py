"""Visitor text shown as text: strings a visitor typed, uploaded or reopened never act as markdown or markup.

Streamlit renders markdown (links, images, colour and icon directives, LaTeX) and Plotly renders a small HTML
subset in labels (<a href>, <img>-free but clickable links, <b>, <br>). A token, file name, class name or any
string from a reopened file goes through one of these before it reaches either, so "[x](http://...)" or
"![](http://...)" shows its characters instead of a link or an image the visitor's browser would fetch.
"""

from __future__ import annotations

import html
import re

MAX_SHOWN_CHARS = 200  # a longer visitor string is cut where it is shown (it is kept whole where it is used)
# every ASCII punctuation character CommonMark lets a backslash escape, plus ':' (Streamlit's :color[] and
# :material/icon: directives) and '$' (LaTeX)
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$&\"'=^])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# GitHub-flavoured markdown also links bare addresses ("http://…", "www.…", "a@b.c") after escapes are undone:
# an invisible zero-width space inside each trigger keeps the text as typed and stops the link
_AUTOLINK = re.compile(r"(?i)(https?|ftp|mailto|www)(?=[:.])|(?=@)")
ZERO_WIDTH_SPACE = "\u200b"


def shown(text: object, limit: int = MAX_SHOWN_CHARS) -> str:
    """`text` as one printable line of at most `limit` characters (control characters become '?')."""
    line = _CONTROL.sub("?", str(text)).replace("\n", " ").replace("\r", " ")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def markdown_literal(text: object, limit: int = MAX_SHOWN_CHARS) -> str:
    """`text` escaped for st.markdown (and any widget label or message that renders markdown): every character
    shows as itself, nothing links, loads or formats. Only for places that render markdown: st.text, tables and
    st.code show text as it is and need no escaping (the backslashes would show there)."""
    unlinked = _AUTOLINK.sub(lambda match: (match.group(1) or "") + ZERO_WIDTH_SPACE, shown(text, limit))
    return _MARKDOWN_SPECIAL.sub(r"\\\1", unlinked)


# anything markdown (or Streamlit's directives, LaTeX or an autolink) could act on
_MARKDOWN_ACTIVE = re.compile(r"[\[\]<>`*~$&|\\!#@{}^]|(?<!\w)_|_(?!\w)|:\S|www\.|^[^\w(]|^\d+[.)]")


def markdown_text(text: object, limit: int = MAX_SHOWN_CHARS) -> str:
    """A message or sentence that may hold visitor text, for st.markdown / st.info / st.error: as written when
    markdown has nothing in it to act on (so this lab's own sentences read the same everywhere), otherwise
    escaped whole with `markdown_literal`."""
    line = shown(text, limit)
    return markdown_literal(line, limit) if _MARKDOWN_ACTIVE.search(line) else line


def plotly_literal(text: object, limit: int = MAX_SHOWN_CHARS) -> str:
    """`text` escaped for a Plotly title, axis label, tick label, legend entry or hover text (its HTML subset
    reads entities, so '<a href=...>' shows as typed)."""
    return html.escape(shown(text, limit), quote=False)
