"""PE Lab entry point: `streamlit run app.py`. One st.Page per script in pages/ (ui.rooms lists them)."""

import gc

import streamlit as st

from ui.rooms import built_rooms

# Streamlit's own collection after every run is off (.streamlit/config.toml: runner.postScriptGC): it also
# ran after each one-second progress-fragment rerun while the Fault lab trains. A full run (a click, a page)
# collects here instead, so the cycles a page leaves behind still go before the next one allocates.
gc.collect()
st.set_page_config(page_title="PE Lab", page_icon=":material/waves:", layout="wide")

sections: dict[str, list[st.Page]] = {
    "Story": [st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)]
}
for room in built_rooms():
    sections.setdefault(room.section, []).append(st.Page(room.path, title=room.title, icon=room.icon))

st.navigation(sections).run()
