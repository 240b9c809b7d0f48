"""The person's browser in a test of the loopback flow: it opens the authorization URL the
command shows, and follows the authorization server's redirect back to the listener."""

from __future__ import annotations

import threading
from urllib.parse import parse_qs, urlsplit

import httpx2


class Browser:
    """Opens each URL it is shown on a thread of its own, as a browser would while the
    command waits; `wait` joins them and returns the status of each last answer."""

    def __init__(self) -> None:
        self.shown: list[str] = []
        self.statuses: list[int] = []
        self._threads: list[threading.Thread] = []

    def __call__(self, url: str) -> None:
        self.shown.append(url)
        thread = threading.Thread(target=self._open, args=(url,), daemon=True)
        self._threads.append(thread)
        thread.start()

    def _open(self, url: str) -> None:
        with httpx2.Client(follow_redirects=True, timeout=30.0) as client:
            self.statuses.append(client.get(url).status_code)

    def wait(self) -> list[int]:
        for thread in self._threads:
            thread.join(timeout=60)
        return self.statuses

    def query(self, index: int = 0) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.shown[index]).query)
