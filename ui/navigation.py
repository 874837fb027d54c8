"""Make a deep link into a page run the app's own navigation, even as a fresh server's first request; keep each
page's link to that page's own settings; and give every view its own entry in the browser's history.

Streamlit still carries its first multipage scheme: when the entry script's folder holds a `pages/`
directory, the server treats the app as a folder of pages until some run calls `st.navigation`. A shared
link such as `/fault_lab?src=csv` that reaches a freshly started (or woken) server would then run
`pages/fault_lab.py` alone: no `app.py`, so no page config, no sections, no titles in the sidebar. Our
page files must keep their names (links and checks use them), so every page calls `use_app_navigation()`
first: if the folder scheme is still on, it is switched off and the run restarts through `app.py`. Being
first on every page, it is also where a link's values are checked before any widget reads them
(ui.link_values), and where the three gaps below are closed.

- **Back restores the previous view.** Streamlit writes a widget's new value into the address with
  `history.replaceState` (its frontend, 1.67): the entry of the view before is overwritten, so Back left the
  page instead of restoring the settings. Streamlit does restore widgets from the address when the browser
  goes back or forward (it reruns with `is_history_navigation` and seeds every bound widget from the URL);
  it only never makes the entries. So when a run on the same page starts from a link that differs from the
  previous run's, and the browser did not get there by Back or Forward, the page sends a five-line script
  that puts the previous link back into the current entry and pushes the new one after it. The script
  checks the address first: if the visitor has moved on again meanwhile, it leaves the history alone.
- **A page's link carries only its own keys.** On a page change the browser keeps the previous page's query,
  and a widget's value stays in session state under its key, which the next page's widget of the same key
  (`d` on Similarity and Encoding matrix) then took: the setting leaked into the other page and its link.
  On a page change that is not Back or Forward, values carried over unchanged from the previous page's link
  leave the link silently (the visitor never gave them to this page), and this page's keys forget values
  that other pages' widgets left in session state, so the page opens at its defaults or at its own link.
- **Back from another page restores the page as it was left.** On a page change through the sidebar the
  browser sends the previous page's query with the new page; the new page drops it (above), and Streamlit's
  frontend records that as a history entry of its own, the previous page without its settings, before it
  pushes the new page. Back from the new page then landed on the previous page at its defaults. So each
  session's first run installs a small wrapper of `history.pushState` in the page: a push that goes to
  another page while the current entry is one a query-only push made a moment before replaces that entry
  instead. The entries are then the previous page with its settings, then the new page. Back onto that
  entry then needs one more step: before a page runs, Streamlit drops the address's values whose key a widget
  of another page was bound to last, and pages share keys (`t`, `d`); the page puts its own back.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import NamedTuple
from urllib import parse

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import ScriptRunContext, get_script_run_ctx

from ui.link_values import Choices, NumberRange, drop_unusable_link_values, forget_link_values, rename_old_link_keys

_RESTARTED_KEY = "_restarted_through_app"
_LAST_VIEW_KEY = "_last_view"  # the page and link the previous run of this session started from
_PUSHES_KEY = "_history_pushes"  # makes each history script unique, so the browser runs each one once
_HISTORY_WRAPPED_KEY = "_history_wrapped"  # this session's page has the pushState wrapper
# how soon after a query-only push a push to another page counts as the same page change (Streamlit makes the
# two from consecutive messages of one run; a visitor's own click comes much later)
STRIPPED_ENTRY_MS = 1500
# Installed once per page (window.__peLabHistory guards a second copy). window.__peLabOwnPush marks the
# pushes of push_history_entry's script, which are views the visitor made and must stay.
HISTORY_WRAPPER = f"""<script>(() => {{
  if (window.__peLabHistory) return;
  window.__peLabHistory = true;
  const push = history.pushState.bind(history), replace = history.replaceState.bind(history);
  let queryOnly = null;
  history.pushState = function (state, title, url) {{
    const target = new URL(url ?? location.href, location.href), now = Date.now();
    const replaces = queryOnly !== null && queryOnly.href === location.href && now - queryOnly.at < {STRIPPED_ENTRY_MS};
    if (replaces && target.pathname !== location.pathname) {{
      queryOnly = null;
      return replace(state, title, url);
    }}
    const same = target.pathname === location.pathname && !window.__peLabOwnPush;
    queryOnly = same ? {{ href: target.href, at: now }} : null;
    return push(state, title, url);
  }};
}})();</script>"""


class View(NamedTuple):
    page: str  # the page's script hash
    link: tuple[tuple[str, str], ...]  # the link's (key, value) pairs, sorted


def use_app_navigation(
    link_numbers: Mapping[str, NumberRange] | None = None,
    link_text: Collection[str] = (),
    old_link_keys: Mapping[str, str] | None = None,
    link_choices: Mapping[str, Choices] | None = None,
) -> None:
    """Run the page through app.py's navigation, read old link keys as their new ones (`old_link_keys`: old ->
    new), keep the link to this page's own keys, then drop the link values its widgets cannot take:
    `link_numbers` gives the range of each number widget's key, `link_text` the keys of free-text widgets,
    `link_choices` the options of each choice widget. A page that gives `link_choices` (even empty) has named
    every key of its link, and a key it did not name is dropped and named too (ui.link_values). Last, a changed
    link on the same page becomes a new entry in the browser's history."""
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False  # what st.navigation itself does on its first call
        # Once per session: a server flips the flag for good, but AppTest sets it back before every run,
        # and a second restart there would swallow the click that started the run.
        if not st.session_state.get(_RESTARTED_KEY):
            st.session_state[_RESTARTED_KEY] = True
            st.rerun()
    if old_link_keys:
        rename_old_link_keys(old_link_keys)
    own_keys = None if link_choices is None else {*(link_numbers or {}), *link_text, *link_choices}
    context = get_script_run_ctx()
    before = st.session_state.get(_LAST_VIEW_KEY)
    history_move = context is not None and context.is_history_navigation
    if context is not None and before is not None and before.page != context.page_script_hash:
        if history_move:
            _restore_own_link_values(context, own_keys or ())
        else:
            _leave_other_pages_values(before, own_keys)
    drop_unusable_link_values(link_numbers, link_text, link_choices)
    if context is None:  # bare mode: no session, no browser
        return
    if not st.session_state.get(_HISTORY_WRAPPED_KEY):
        st.session_state[_HISTORY_WRAPPED_KEY] = True
        st._event.html(HISTORY_WRAPPER, unsafe_allow_javascript=True)
    now = View(context.page_script_hash, _link_pairs())
    st.session_state[_LAST_VIEW_KEY] = now
    if before is not None and before.page == now.page and before.link != now.link and not history_move:
        push_history_entry(before.link, now.link)


def _restore_own_link_values(context: ScriptRunContext, own_keys: Collection[str]) -> None:
    """Back or Forward onto another page: put back the link values of this page's own keys that Streamlit
    filtered out. Before the page runs, Streamlit drops every value of the address whose key a widget of another
    page was bound to last; pages share keys (`t`, `d`), so Back from Encoding matrix to Similarity lost
    Similarity's `t`. The values go back into the query and into the values widgets are seeded from (through
    Streamlit's own QueryParams, as its script runner does), and the address is sent again."""
    original = parse.parse_qs(context.query_string, keep_blank_values=True)
    missing = {key: values for key, values in original.items() if key in own_keys and key not in st.query_params}
    if not missing:
        return
    restored = {key: st.query_params.get_all(key) for key in st.query_params} | missing
    query = parse.urlencode(restored, doseq=True)
    try:
        with context.session_state.query_params() as query_params:
            query_params.populate_from_query_string(query)
            query_params.set_initial_query_params(query)
            query_params._send_query_param_msg()  # the address shows the restored view again
    except AttributeError:  # a Streamlit without these internals: Back lands on the page's defaults, as before
        return


def _link_pairs() -> tuple[tuple[str, str], ...]:
    return tuple(sorted((key, value) for key in st.query_params for value in st.query_params.get_all(key)))


def _leave_other_pages_values(before: View, own_keys: Collection[str] | None) -> None:
    """On a page change: drop the link values carried over unchanged from the previous page's link, and forget
    what other pages' widgets left in session state under this page's keys."""
    previous = {}
    for key, value in before.link:
        previous.setdefault(key, []).append(value)
    carried = {key: [] for key in st.query_params if previous.get(key) == st.query_params.get_all(key)}
    forget_link_values(carried)
    for key in own_keys or ():
        if key in st.session_state and key not in st.query_params:
            del st.session_state[key]


def push_history_entry(before: tuple[tuple[str, str], ...], now: tuple[tuple[str, str], ...]) -> None:
    """Make the browser's current entry the `before` link and push the `now` link after it, if the address still
    shows `now` (the visitor may have moved on while this run ran). Streamlit's frontend runs the script once,
    in the page itself; it sits in the event container, so it takes no room on the page."""
    st.session_state[_PUSHES_KEY] = st.session_state.get(_PUSHES_KEY, 0) + 1
    # JSON inside a script: "<" escaped, so a link value can never close the script element
    data = json.dumps({"before": before, "now": now, "n": st.session_state[_PUSHES_KEY]}).replace("<", "\\u003c")
    script = f"""<script>(() => {{
  const view = {data}, here = window.location;
  const sorted = pairs => JSON.stringify(pairs.map(pair => [String(pair[0]), String(pair[1])]).sort());
  if (sorted([...new URLSearchParams(here.search)]) !== sorted(view.now)) return;
  const address = pairs => here.pathname + (pairs.length ? "?" + new URLSearchParams(pairs) : "") + here.hash;
  window.history.replaceState(window.history.state, "", address(view.before));
  window.__peLabOwnPush = true;
  try {{ window.history.pushState(window.history.state, "", address(view.now)); }}
  finally {{ window.__peLabOwnPush = false; }}
}})();</script>"""
    st._event.html(script, unsafe_allow_javascript=True)
