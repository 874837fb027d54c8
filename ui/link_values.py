"""Link values a page's widgets cannot take, dropped before the widgets exist, with one line naming each.

A widget bound to the URL (bind="query-params") takes its link value when the page opens. Streamlit resets a
value its widget cannot take without a word (a number out of range, an option that is not among the options, a
toggle that is neither true nor false), and a number it converts to a float that is not finite ("inf", "nan",
"1e999", a 400-digit number) raises inside a whole-number widget: a traceback for whoever opened the link.
`drop_unusable_link_values`, which every page runs before its first widget (through ui.navigation.use_app_navigation),
removes such values from the link, so each widget opens at its default (or at the link's other, usable values),
and tells the visitor in one line which `key=value` it dropped.

- Every link value that spells a number that is not finite is dropped, except under the page's free-text keys
  (a token may be any word): no widget of this app takes one.
- A page may name the range of each of its number widgets (`NumberRange`); a value there must be a number in
  that range, and a whole number written as one when both ends are whole.
- A page may name the options of each of its choice widgets (`Choices`: selectbox, radio, select_slider,
  multiselect, toggle); a value there must spell one of them as the link writes it (str(option); "true" or
  "false" in any case for a toggle's (False, True)). An empty value is never named: it is how a link says
  "nothing chosen", which Streamlit reads itself.
- A page that names its choices (even none) has named every key of its link. A key it does not name is no
  setting of this page, so it leaves the link and is named too ("not a setting of this page"): a visitor who
  edited or pasted a link learns that the value did nothing, and the address shows only what it shows.
  Values the app itself carried over from the page before are not the visitor's and leave silently first
  (ui.navigation: when the browser moves between pages, Streamlit keeps the previous page's query in the address).

A page whose widget keys were renamed names its old keys (`rename_old_link_keys`, run first): an old shared link
then opens as it did, its values under the new keys.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core.limits import MAX_TEXT_CHARS, finite_or_none
from core.safe_text import markdown_literal
from ui.first_paint import take_completion

NumberRange = tuple[float, float]  # (lowest, highest); two ints mean a whole-number widget
Choices = Sequence[object]  # the options of a choice widget, as the widget is given them
_WHOLE = re.compile(r"\s*[+-]?\d+\s*")
SHOWN_VALUE_CHARS = 40  # a dropped value is quoted this far: enough to recognise it, never a wall of digits
NOTICE_KEY = "link_values_notice"  # session state: (page, the line of dropped values), for the next run only


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


def unusable_choice(value: str, options: Choices) -> bool:
    """Whether `value` spells none of a choice widget's `options` as its link writes them (an empty value is
    "nothing chosen", for the widget itself to read)."""
    if value == "":
        return False
    if options and all(isinstance(option, bool) for option in options):
        return value.lower() not in {str(option).lower() for option in options}  # Streamlit reads "TRUE" too
    return value not in {str(option) for option in options}


def drop_unusable_link_values(
    numbers: Mapping[str, NumberRange] | None = None,
    text: Collection[str] = (),
    choices: Mapping[str, Choices] | None = None,
) -> list[str]:
    """Remove from the link every value this page's widgets cannot take, and every key that is no setting of
    this page when it names its `choices` (see the module docstring), before any widget reads them; show one line
    naming them. Returns the dropped values as "key=value"."""
    numbers = numbers or {}
    completing = take_completion()  # asked on every run, so a paint long ago cannot vouch for a later run
    own = None if choices is None else {*numbers, *text, *choices}
    unusable_values: list[tuple[str, str]] = []
    foreign: list[tuple[str, str]] = []
    kept: dict[str, list[str]] = {}
    for key in list(st.query_params):
        values = st.query_params.get_all(key)
        if own is not None and key not in own:
            foreign += [(key, value) for value in values or [""]]
            kept[key] = []
            continue
        if key in text:
            continue
        if choices is not None and key in choices:
            bad = [value for value in values if unusable_choice(value, choices[key])]
        else:
            bad = [value for value in values if unusable(value, numbers.get(key))]
        if bad:
            unusable_values += [(key, value) for value in bad]
            kept[key] = [value for value in values if value not in bad]
    if not kept:
        _repeat_notice(completing)
        return []
    forget_link_values(kept)
    every_number = all(key in numbers for key, _ in unusable_values)
    line = _dropped_line(unusable_values, foreign, every_number)
    st.session_state[NOTICE_KEY] = (_page(), line)
    st.info(line)
    return [f"{key}={value}" for key, value in unusable_values + foreign]


def _page() -> str:
    context = get_script_run_ctx()
    return "" if context is None else context.page_script_hash


def _repeat_notice(completing: bool) -> None:
    """The line of values dropped on the run before, shown again on the run that completes a first paint
    (ui.first_paint): that run is the page's own, the link no longer holds the values, and without this it took
    the line away before anyone could read it. Any other run, the visitor's, forgets it."""
    stored = st.session_state.pop(NOTICE_KEY, None)
    if stored is not None and completing and stored[0] == _page():
        st.info(stored[1])


def _dropped_line(unusable_values: list[tuple[str, str]], foreign: list[tuple[str, str]], numbers: bool) -> str:
    """One line naming the dropped values: those the page's widgets could not take, then the foreign keys."""

    def named(pairs: list[tuple[str, str]]) -> str:
        return ", ".join(markdown_literal(f"{key}={value}", SHOWN_VALUE_CHARS) for key, value in pairs)

    parts = []
    if len(unusable_values) == 1:
        what = "a usable number" if numbers else "usable"
        parts.append(f"Link value {named(unusable_values)} was not {what} here and was reset to its default.")
    elif unusable_values:
        what = "usable numbers" if numbers else "usable"
        parts.append(f"Link values {named(unusable_values)} were not {what} here and were reset to their defaults.")
    if len(foreign) == 1:
        parts.append(f"Link value {named(foreign)} is not a setting of this page and was removed.")
    elif foreign:
        parts.append(f"Link values {named(foreign)} are not settings of this page and were removed.")
    return " ".join(parts)


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


def forget_link_values(kept: Mapping[str, Sequence[str]]) -> None:
    """Keep only `kept[key]` of each key's link values (none: the key leaves the link), in the browser's address
    too and in the values widgets are seeded from.

    Widgets are seeded from a copy of the link taken when the run started, which st.query_params does not touch,
    and st.query_params refuses to delete a key once a widget is bound to it; so this goes through the session's
    own query-parameter object, as Streamlit does when it clears a value it cannot parse."""
    context = get_script_run_ctx()
    if context is None or not kept:  # bare mode: no session, no widgets to seed
        return
    with context.session_state.query_params() as params:
        for key, values in kept.items():  # each call sends the address as it now stands to the browser
            if not values:
                params.remove_param(key)
            elif len(values) == 1:
                params.set_corrected_value(key, values[0], "string_value")
            else:
                params.set_corrected_value(key, list(values), "string_array_value")
        params.set_initial_query_params_from_current()
