"""Make a deep link into a page run the app's own navigation, even as a fresh server's first request.

Streamlit still carries its first multipage scheme: when the entry script's folder holds a `pages/`
directory, the server treats the app as a folder of pages until some run calls `st.navigation`. A shared
link such as `/fault_lab?src=csv` that reaches a freshly started (or woken) server would then run
`pages/fault_lab.py` alone: no `app.py`, so no page config, no sections, no titles in the sidebar. Our
page files must keep their names (links and checks use them), so every page calls `use_app_navigation()`
first: if the folder scheme is still on, it is switched off and the run restarts through `app.py`. Being
first on every page, it is also where a link's values are checked before any widget reads them
(ui.link_values).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from ui.link_values import NumberRange, drop_unusable_link_values, rename_old_link_keys

_RESTARTED_KEY = "_restarted_through_app"


def use_app_navigation(
    link_numbers: Mapping[str, NumberRange] | None = None,
    link_text: Collection[str] = (),
    old_link_keys: Mapping[str, str] | None = None,
) -> None:
    """Run the page through app.py's navigation, read old link keys as their new ones (`old_link_keys`: old ->
    new), then drop the link values its widgets cannot take: `link_numbers` gives the range of each number
    widget's key, `link_text` the keys of free-text widgets."""
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False  # what st.navigation itself does on its first call
        # Once per session: a server flips the flag for good, but AppTest sets it back before every run,
        # and a second restart there would swallow the click that started the run.
        if not st.session_state.get(_RESTARTED_KEY):
            st.session_state[_RESTARTED_KEY] = True
            st.rerun()
    if old_link_keys:
        rename_old_link_keys(old_link_keys)
    drop_unusable_link_values(link_numbers, link_text)
