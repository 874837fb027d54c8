"""Link values a page's number widgets cannot take, dropped before the widgets exist, with one line saying so.

A widget bound to the URL (bind="query-params") takes its link value when the page opens. Streamlit resets a
value out of range or not a number at all without a word, but one it converts to a float that is not finite
("inf", "nan", "1e999", a 400-digit number) raises inside a whole-number widget: a traceback for whoever opened
the link. `drop_unusable_link_values`, which every page runs before its first widget (through
ui.entry.use_app_navigation), removes such values from the link, so each widget opens at its default, and
tells the visitor which values it dropped.

- Every link value that spells a number that is not finite is dropped, except under the page's free-text keys
  (a token may be any word): no widget of this app takes one.
- A page may name the range of each of its number widgets (`NumberRange`); a value there must be a number in
  that range, and a whole number written as one when both ends are whole.

A page whose widget keys were renamed names its old keys (`rename_old_link_keys`, run first): an old shared link
then opens as it did, its values under the new keys.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core.limits import MAX_TEXT_CHARS, finite_or_none
from core.safe_text import markdown_literal

NumberRange = tuple[float, float]  # (lowest, highest); two ints mean a whole-number widget
_WHOLE = re.compile(r"\s*[+-]?\d+\s*")
SHOWN_VALUE_CHARS = 40  # a dropped value is quoted this far: enough to recognise it, never a wall of digits


def unusable(value: str, allowed: NumberRange | None = None) -> bool:
    """Whether `value` cannot seed a number widget whose range is `allowed` (None: a widget of any kind, so only
    a number that is not finite is unusable)."""
    if allowed is None:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return False  # not a number at all: an option or a word, for its own widget to judge
        return not math.isfinite(number)
    if len(value) > MAX_TEXT_CHARS:
        return True
    number = finite_or_none(value)
    if number is None or not allowed[0] <= number <= allowed[1]:
        return True
    whole = all(isinstance(end, int) for end in allowed)
    return whole and not _WHOLE.fullmatch(value)  # Streamlit refuses "5.0" or "1e3" for a whole number


def drop_unusable_link_values(
    numbers: Mapping[str, NumberRange] | None = None, text: Collection[str] = ()
) -> list[str]:
    """Remove from the link every value this page's widgets cannot take (see the module docstring), before any
    widget reads it; show one line naming them. Returns the dropped values as "key=value"."""
    numbers = numbers or {}
    dropped: dict[str, str] = {}
    for key in list(st.query_params):
        if key in text:
            continue
        values = st.query_params.get_all(key)
        bad = [value for value in values if unusable(value, numbers.get(key))]
        if bad:
            dropped[key] = bad[-1]
    if not dropped:
        return []
    _forget(dropped)
    shown = [markdown_literal(f"{key}={value}", SHOWN_VALUE_CHARS) for key, value in dropped.items()]
    if len(shown) == 1:
        st.info(f"Link value {shown[0]} was not a usable number here and was reset to its default.")
    else:
        st.info(f"Link values {', '.join(shown)} were not usable numbers here and were reset to their defaults.")
    return [f"{key}={value}" for key, value in dropped.items()]


def rename_old_link_keys(aliases: Mapping[str, str]) -> list[str]:
    """Read each old link key of `aliases` (old -> new) as its new key, before any widget reads the link: the
    value moves to the new key unless the link gives that one too, and the old key leaves the link (and the
    browser's address). Returns the old keys found."""
    found = [key for key in list(st.query_params) if key in aliases]
    context = get_script_run_ctx()
    if not found or context is None:  # bare mode: no session, no widgets to seed
        return found
    with context.session_state.query_params() as params:
        for old in found:
            values = params.get_all(old)
            if values and not params.has_param(aliases[old]):
                params.set_with_no_forward_msg(aliases[old], values if len(values) > 1 else values[0])
            params.remove_param(old)  # sends the link as it now stands to the browser
        params.set_initial_query_params_from_current()
    return found


def _forget(keys: Collection[str]) -> None:
    """Take `keys` out of the link (the browser's address too) and out of the values widgets are seeded from.

    Widgets are seeded from a copy of the link taken when the run started, which st.query_params does not touch,
    and st.query_params refuses to delete a key once a widget is bound to it; so this goes through the session's
    own query-parameter object, as Streamlit does when it clears a value it cannot parse."""
    context = get_script_run_ctx()
    if context is None:  # bare mode: no session, no widgets to seed
        return
    with context.session_state.query_params() as params:
        for key in keys:
            params.remove_param(key)
        params.set_initial_query_params_from_current()
