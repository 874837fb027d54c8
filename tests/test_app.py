"""AppTest of app.py: navigation, the home page's story, and every registered page running without error."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
PAGE_FILES = [
    "pages/home.py",
    "pages/encoding_matrix.py",
    "pages/wavelengths.py",
    "pages/similarity.py",
    "pages/softmax_saturation.py",
    "pages/fault_lab.py",
]


def test_home_tells_the_story_and_links_every_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    headers = [h.value for h in at.header]
    assert "Why attention needs positions at all" in headers
    assert any("context" in h for h in headers)
    text = " ".join(m.value for m in at.markdown)
    assert "0-based" in text and "Transformer-XL" in text and "parallel" in text
    links = [link.proto.label for link in at.get("page_link")]
    existing = [p for p in PAGE_FILES[1:] if (ROOT / p).exists()]
    assert len(links) == len(existing) >= 2
    assert any("Encoding matrix" in label for label in links)


def test_every_page_runs_through_navigation():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    for page in PAGE_FILES[1:]:
        if not (ROOT / page).exists():
            continue
        at.switch_page(page).run()
        assert not at.exception, (page, [e.message for e in at.exception])
        assert at.title, page
