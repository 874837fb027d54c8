"""Fetch the official CWRU files (`<number>.mat`) into a folder, each checked against its official MD5.

Each file is written under a temporary name in the destination folder, checked, and only then renamed to
its final name, so a cut or corrupted download never sits where `load_cwru` looks. A file already there
with the right checksum is skipped: the folder is the cache. Every network wait is bounded (a timeout per
connection and per read, a deadline per file, a few retries), and every failure is a DataError that says
how to get the file by hand.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from core.lab.vibration.types import DataError

DEFAULT_BASE_URL = "https://engineering.case.edu/sites/default/files/"
DATA_CENTER_URL = "https://engineering.case.edu/bearingdatacenter/download-data-file"
TIMEOUT_S = 20.0  # to connect, and for each read
RETRIES = 2  # further attempts after a failed one
RETRY_PAUSE_S = 0.5  # before the first retry; doubles each time
FILE_DEADLINE_S = 600.0  # a server that drips bytes cannot hold a download forever
MAX_FILE_BYTES = 64_000_000  # the largest official file (99.mat) is 15.5 MB
CHUNK_BYTES = 1 << 16

Progress = Callable[[float, str], None]  # (fraction done 0..1, text): the shape of Streamlit's bar.progress


@dataclass
class DownloadResult:
    """What `download_cwru` did: file numbers fetched now and those already present and valid."""

    dest_dir: Path
    downloaded: list[int] = field(default_factory=list)
    cached: list[int] = field(default_factory=list)

    @property
    def paths(self) -> list[Path]:
        """The paths of every file fetched or found, in file-number order."""
        return [self.dest_dir / f"{number}.mat" for number in sorted(self.downloaded + self.cached)]


class _DownloadFailed(Exception):
    """One attempt failed; `retry` says whether another attempt could help."""

    def __init__(self, reason: str, retry: bool = True) -> None:
        super().__init__(reason)
        self.retry = retry


def download_cwru(
    dest_dir: str | Path,
    files: Iterable[int | str] | None = None,
    base_url: str = DEFAULT_BASE_URL,
    progress: Progress | None = None,
    *,
    timeout_s: float = TIMEOUT_S,
    retries: int = RETRIES,
) -> DownloadResult:
    """Download the CWRU files numbered in `files` (default: every file in the catalogue) into `dest_dir`.

    `progress(fraction, text)` is called as bytes arrive. Files already in `dest_dir` with the official
    MD5 are not fetched again. Raises DataError when a file cannot be fetched or does not verify.
    """
    from core.lab.vibration.cwru import CWRU_CATALOGUE, file_md5

    numbers = _file_numbers(files, CWRU_CATALOGUE)
    _check_base_url(base_url)
    dest_dir = Path(dest_dir)
    try:
        dest_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DataError(f"Cannot create the folder {dest_dir}: {error.strerror or error}.") from error

    report = progress or (lambda fraction, text: None)
    result = DownloadResult(dest_dir)
    for index, number in enumerate(numbers):
        entry = CWRU_CATALOGUE[number]
        final = dest_dir / entry.filename
        if final.is_file() and file_md5(final) == entry.md5:
            result.cached.append(number)
            report((index + 1) / len(numbers), f"{entry.filename} already present and verified")
            continue

        url = urllib.parse.urljoin(base_url.rstrip("/") + "/", entry.filename)
        report_bytes = _byte_reporter(report, index, len(numbers), final.name)
        _fetch_verified(url, final, entry.md5, timeout_s, retries, report_bytes)
        result.downloaded.append(number)

    report(
        1.0,
        f"{len(numbers)} CWRU files ready in {dest_dir} ({len(result.downloaded)} downloaded, "
        f"{len(result.cached)} already there)",
    )
    return result


def _file_numbers(files: Iterable[int | str] | None, catalogue: dict) -> list[int]:
    if files is None:
        return sorted(catalogue)
    if isinstance(files, (int, str)):
        files = [files]
    numbers = []
    for item in files:
        text = str(item).strip().removesuffix(".mat")
        if not text.isdigit() or int(text) not in catalogue:
            raise DataError(
                f"{item!r} is not a CWRU file in the catalogue; known files: {', '.join(map(str, sorted(catalogue)))}."
            )
        numbers.append(int(text))
    return list(dict.fromkeys(numbers))


def _check_base_url(base_url: str) -> None:
    parts = urllib.parse.urlsplit(str(base_url))
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise DataError(f"base_url must be an http(s) address such as {DEFAULT_BASE_URL}, got {base_url!r}.")


def _byte_reporter(report: Progress, index: int, count: int, name: str) -> Callable[[int, int | None], None]:
    def report_bytes(received: int, total: int | None) -> None:
        share = min(received / total, 1.0) if total else 0.0
        size = f"{received / 1e6:.1f} of {total / 1e6:.1f} MB" if total else f"{received / 1e6:.1f} MB"
        report((index + share) / count, f"{name}: {size} (file {index + 1} of {count})")

    return report_bytes


def _fetch_verified(
    url: str,
    final: Path,
    md5: str,
    timeout_s: float,
    retries: int,
    report_bytes: Callable[[int, int | None], None],
) -> None:
    """Download `url` to `final` through a temporary file; it is renamed into place only when its MD5 matches."""
    failure = _DownloadFailed("no attempt was made")
    for attempt in range(max(0, int(retries)) + 1):
        if attempt:
            time.sleep(RETRY_PAUSE_S * 2 ** (attempt - 1))
        temporary = None
        try:
            handle, temporary = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".part")
            with os.fdopen(handle, "wb") as out:
                actual = _fetch(url, _disk_writer(out, final), timeout_s, report_bytes)
            if actual == md5:
                os.replace(temporary, final)
                return
            failure = _DownloadFailed(
                f"the file received does not match the official CWRU checksum (MD5 {actual}, expected {md5})"
            )
        except _DownloadFailed as error:
            failure = error
        except OSError as error:  # the local disk (network errors are _DownloadFailed by now)
            raise DataError(f"Cannot write {final}: {error.strerror or error}.") from error
        finally:
            if temporary is not None and os.path.exists(temporary):
                os.remove(temporary)
        if not failure.retry:
            break
    raise DataError(
        f"Could not download {final.name} from {url}: {failure}. It was not saved. Download it by hand "
        f"(a browser will do; the list is at {DATA_CENTER_URL}) and put it in {final.parent} as {final.name}."
    )


def _disk_writer(out, final: Path) -> Callable[[bytes], None]:
    # A disk error is a DataError at once, so that _fetch can read every OSError as a network error.
    def write(chunk: bytes) -> None:
        try:
            out.write(chunk)
        except OSError as error:
            raise DataError(f"Cannot write {final}: {error.strerror or error}.") from error

    return write


def _fetch(
    url: str, write: Callable[[bytes], None], timeout_s: float, report_bytes: Callable[[int, int | None], None]
) -> str:
    """Stream `url` through `write`; the MD5 of what arrived. Network trouble raises _DownloadFailed."""
    request = urllib.request.Request(url, headers={"User-Agent": "PE-Lab CWRU downloader"})
    deadline = time.monotonic() + FILE_DEADLINE_S
    digest, received = hashlib.md5(), 0
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            while chunk := response.read(CHUNK_BYTES):
                received += len(chunk)
                if received > MAX_FILE_BYTES:
                    raise _DownloadFailed(f"the server sent more than {MAX_FILE_BYTES / 1e6:g} MB", retry=False)
                if time.monotonic() > deadline:
                    raise _DownloadFailed(f"it took longer than {FILE_DEADLINE_S:g} s")
                digest.update(chunk)
                write(chunk)
                report_bytes(received, total)
    except urllib.error.HTTPError as error:
        # 4xx will not change on a retry; 5xx may.
        reason = f"the server answered HTTP {error.code} {error.reason}"
        raise _DownloadFailed(reason, retry=error.code >= 500) from error
    except urllib.error.URLError as error:
        raise _DownloadFailed(f"the server cannot be reached ({error.reason}); are you offline?") from error
    except (OSError, http.client.HTTPException) as error:  # timeouts, resets, TLS errors while reading
        raise _DownloadFailed(f"the connection failed ({type(error).__name__}: {error})") from error
    if total is not None and received < total:
        raise _DownloadFailed(f"the download was cut short ({received:,} of {total:,} bytes)")
    return digest.hexdigest()
