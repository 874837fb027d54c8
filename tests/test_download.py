"""The CWRU downloader against a local HTTP server (127.0.0.1 only) that serves the shared CWRU files:
clean download, the cache, cut-short and wrong files, an unreachable and a silent server."""

from __future__ import annotations

import hashlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from core.lab.vibration import DataError, download, download_cwru

CWRU_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cwru"
FILES = [105, 118]  # two small official files, about 2.9 MB each

pytestmark = pytest.mark.skipif(
    not all((CWRU_DIR / f"{number}.mat").is_file() for number in FILES),
    reason=f"the shared CWRU files {FILES} are not in {CWRU_DIR} (see shared/data/README.md)",
)


def official_md5s() -> dict[str, str]:
    """The published checksums, from the shared MD5SUMS file (independent of the code's catalogue)."""
    lines = (CWRU_DIR / "MD5SUMS").read_text().split("\n")
    return {name: md5 for md5, name in (line.split() for line in lines if line.strip())}


def md5_of(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


class _Handler(BaseHTTPRequestHandler):
    """Serves /<number>.mat from the shared folder, honestly or, by the server's mode, cut short or altered."""

    def do_GET(self) -> None:  # noqa: N802 (the http.server name)
        self.server.requests.append(self.path)
        path = CWRU_DIR / Path(self.path).name
        if not path.is_file() or path.suffix != ".mat":
            self.send_error(404, "Not Found")
            return
        body = path.read_bytes()
        if self.server.mode == "wrong":
            body = body[:-16] + bytes(16)  # same length, different bytes
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if self.server.mode == "short" else body)

    def log_message(self, format, *args) -> None:  # keep the test output quiet
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.mode, httpd.requests = "ok", []
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    httpd.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/sites/default/files/"
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def no_proxy_and_short_pauses(monkeypatch):
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(download, "RETRY_PAUSE_S", 0.01)


def test_a_clean_download_verifies_and_reports_progress(server, tmp_path):
    updates = []

    def progress(fraction: float, text: str) -> None:
        updates.append((fraction, text))

    result = download_cwru(tmp_path, files=FILES, base_url=server.base_url, progress=progress)

    md5s = official_md5s()
    assert result.downloaded == FILES and result.cached == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["105.mat", "118.mat"]  # no temporary files left
    assert {path.name: md5_of(path) for path in result.paths} == {name: md5s[name] for name in ("105.mat", "118.mat")}
    assert server.requests == ["/sites/default/files/105.mat", "/sites/default/files/118.mat"]
    fractions = [fraction for fraction, _ in updates]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert any("105.mat:" in text and "of 2.9 MB" in text for _, text in updates)


def test_a_second_call_downloads_nothing(server, tmp_path):
    download_cwru(tmp_path, files=FILES, base_url=server.base_url)
    server.requests.clear()

    result = download_cwru(tmp_path, files=FILES, base_url=server.base_url)

    assert server.requests == []
    assert result.downloaded == [] and result.cached == FILES


def test_a_damaged_file_already_there_is_fetched_again(server, tmp_path):
    (tmp_path / "105.mat").write_bytes(b"not the real file")

    result = download_cwru(tmp_path, files=[105], base_url=server.base_url)

    assert result.downloaded == [105]
    assert md5_of(tmp_path / "105.mat") == official_md5s()["105.mat"]


@pytest.mark.parametrize(
    "mode, words",
    [("short", "cut short (1,455,384 of 2,910,768 bytes)"), ("wrong", "does not match the official CWRU checksum")],
)
def test_a_cut_or_wrong_file_is_a_data_error_and_leaves_no_file(server, tmp_path, mode, words):
    server.mode = mode

    with pytest.raises(DataError) as caught:
        download_cwru(tmp_path, files=[105], base_url=server.base_url, retries=1)

    message = str(caught.value)
    assert words in message
    assert "Download it by hand" in message and str(tmp_path) in message
    assert list(tmp_path.iterdir()) == []  # neither 105.mat nor a temporary file
    assert len(server.requests) == 2  # the first attempt and one retry


def test_a_missing_file_on_the_server_is_not_retried(server, tmp_path):
    assert not (CWRU_DIR / "98.mat").exists()  # in the catalogue, not in the shared copy: the server 404s

    with pytest.raises(DataError, match="98.mat .*HTTP 404 Not Found.*Download it by hand"):
        download_cwru(tmp_path, files=[98], base_url=server.base_url, retries=2)

    assert server.requests == ["/sites/default/files/98.mat"]
    assert list(tmp_path.iterdir()) == []


def test_an_unreachable_address_is_a_data_error(tmp_path):
    # A port that was just free and is now closed: the connection is refused at once, on every attempt.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    with pytest.raises(DataError, match="cannot be reached.*offline.*Download it by hand"):
        download_cwru(tmp_path, files=[105], base_url=f"http://127.0.0.1:{port}/")
    assert list(tmp_path.iterdir()) == []


def test_a_server_that_never_answers_times_out(tmp_path):
    # Listening but never accepting: the connection opens (the kernel's backlog) and no byte ever comes.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        port = silent.getsockname()[1]

        with pytest.raises(DataError, match="Could not download 105.mat"):
            download_cwru(tmp_path, files=[105], base_url=f"http://127.0.0.1:{port}/", timeout_s=0.3, retries=1)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"files": [104]}, "104 is not a CWRU file in the catalogue"),
        ({"files": ["abc"]}, "'abc' is not a CWRU file"),
        ({"files": [105], "base_url": "ftp://example.org/"}, "base_url must be an http"),
    ],
)
def test_bad_arguments_are_data_errors(tmp_path, kwargs, words):
    with pytest.raises(DataError, match=words):
        download_cwru(tmp_path, **kwargs)


def test_file_numbers_may_be_given_as_names():
    from core.lab.vibration.cwru import CWRU_CATALOGUE

    assert download._file_numbers(["105.mat", "118", 105], CWRU_CATALOGUE) == [105, 118]
    assert download._file_numbers(None, CWRU_CATALOGUE) == sorted(CWRU_CATALOGUE)
