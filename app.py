"""PE Lab entry point: `streamlit run app.py`. One st.Page per script in pages/ (ui.page_registry lists them)."""

import streamlit as st

from ui.first_paint import new_run
from ui.garbage import collect_garbage
from ui.page_registry import built_rooms
from ui.style import apply_global_style

collect_garbage()  # once per full run, not after every fragment rerun (ui/garbage.py says why and how)
st.set_page_config(page_title="PE Lab", page_icon=":material/waves:", layout="wide")
apply_global_style()

sections: dict[str, list[st.Page]] = {
    "Story": [st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)]
}
for room in built_rooms():
    sections.setdefault(room.section, []).append(st.Page(room.path, title=room.title, icon=room.icon))

new_run()
st.navigation(sections).run()
