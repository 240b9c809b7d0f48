"""The console's live stream (`/live`) on `mailfathom serve`, over real HTTP: only a
signed-in visit gets one, it says `ended` and closes at sign-out, a session holds a bounded
number at once, and `serve` stopped while a page is open stops at once, closing the stream
rather than waiting for it."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import lxml.html
import pytest

import log_audit
from browser.console import STOP_DEADLINE, Console, served_console
from console.conftest import PASSWORD, console_config
from mailfathom.app.console.live import ConsoleNews
from mailfathom.bootstrap import Services
from mailfathom.entrypoints.console import live
from mailfathom.entrypoints.console.live import STREAMS_PER_SESSION
from mailfathom.entrypoints.console.serving import (
    ConsoleServer,
    console_server,
    console_use_cases,
)
from waiting import wait_for

# Reading a stream that has news or ends well before this; past it the test fails.
READ_DEADLINE = 30.0


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    with served_console(tmp_path_factory.mktemp("live-stream")) as served:
        yield served


@contextlib.contextmanager
def signed_in(origin: str, password: str) -> Iterator[httpx2.Client]:
    timeout = httpx2.Timeout(30, read=READ_DEADLINE)
    with httpx2.Client(base_url=origin, timeout=timeout) as client:
        yield _signing_in(client, origin, password)


def _signing_in(client: httpx2.Client, origin: str, password: str) -> httpx2.Client:
    form = client.get("/login")
    (csrf,) = lxml.html.fromstring(form.text).xpath('//input[@name="csrf"]/@value')
    answer = client.post(
        "/login",
        data={"csrf": csrf, "password": password},
        headers={"Origin": origin},
    )
    assert answer.status_code == 303
    log_audit.register(client.cookies.get("mf_console"))
    return client


def lines_until(stream: httpx2.Response, wanted: str) -> list[str]:
    """The stream's lines up to and including `wanted`, or to its end."""
    said: list[str] = []
    for line in stream.iter_lines():
        said.append(line)
        if line == wanted:
            break
    return said


def test_a_visit_not_signed_in_gets_no_stream(console: Console) -> None:
    with httpx2.Client(base_url=console.origin, timeout=30) as client:
        client.get("/login")
        assert client.get("/live").status_code == 403


def test_the_stream_says_ended_and_closes_at_sign_out(console: Console) -> None:
    with (
        signed_in(console.origin, console.password) as client,
        client.stream("GET", "/live") as stream,
    ):
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        assert stream.headers["cache-control"] == "no-store"
        lines = stream.iter_lines()
        assert next(lines) == "retry: 5000"
        page = client.get("/")
        (csrf,) = lxml.html.fromstring(page.text).xpath('//input[@name="csrf"]/@value')
        out = client.post("/logout", data={"csrf": csrf}, headers={"Origin": console.origin})
        assert out.status_code == 303
        rest = list(lines)
    assert "event: ended" in rest
    assert rest[-2:] == ["data: signed-out", ""]


def test_a_session_holds_a_bounded_number_of_streams(console: Console) -> None:
    with signed_in(console.origin, console.password) as client, contextlib.ExitStack() as held:
        streams = [
            held.enter_context(client.stream("GET", "/live")) for _ in range(STREAMS_PER_SESSION)
        ]
        assert [s.status_code for s in streams] == [200] * STREAMS_PER_SESSION
        refused = client.get("/live")
        assert refused.status_code == 429
        assert refused.headers["retry-after"] == "5"
        # Another session is not held back by this one's streams.
        with (
            signed_in(console.origin, console.password) as other,
            other.stream("GET", "/live") as its_own,
        ):
            assert its_own.status_code == 200
        streams[0].close()

        def one_more_is_taken() -> bool:
            with client.stream("GET", "/live") as stream:
                return stream.status_code == 200

        wait_for(one_more_is_taken, "a closed stream gave its place back", timeout=30)


def rest_of(lines: Iterator[str]) -> list[str]:
    """What the stream still says until it ends, cleanly or cut off with the connection."""
    said: list[str] = []
    with contextlib.suppress(httpx2.RemoteProtocolError):
        said.extend(lines)
    return said


def test_serve_stopped_with_a_page_open_closes_its_stream_and_exits(tmp_path: Path) -> None:
    with (
        served_console(tmp_path) as console,
        signed_in(console.origin, console.password) as client,
        client.stream("GET", "/live") as stream,
    ):
        lines = stream.iter_lines()
        assert next(lines) == "retry: 5000"
        console.process.send_signal(signal.SIGTERM)
        try:
            code = console.process.wait(timeout=STOP_DEADLINE)
        except subprocess.TimeoutExpired:
            pytest.fail(f"serve did not stop within {STOP_DEADLINE:g} s with a page open")
        rest = rest_of(lines)
    assert code == 0, console.said()
    assert "event: ended" not in rest


@dataclass
class InProcess:
    origin: str
    server: ConsoleServer
    thread: threading.Thread


@pytest.fixture
def in_process(tmp_path: Path) -> Iterator[InProcess]:
    """The console's own server over a deployment in this process, on a loopback port."""
    log_audit.register(PASSWORD)
    with Services.open(console_config(tmp_path)) as services:
        services.console_access().set_password(PASSWORD)
        listener = socket.create_server(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        server = console_server(console_use_cases(services), "127.0.0.1", listener)
        thread = threading.Thread(target=server.run, args=([listener],), daemon=True)
        thread.start()
        wait_for(lambda: server.started, "the console listens")
        try:
            yield InProcess(f"http://127.0.0.1:{port}", server, thread)
        finally:
            server.should_exit = True
            thread.join(timeout=STOP_DEADLINE)


def test_the_console_server_stopped_alone_ends_its_streams_first(in_process: InProcess) -> None:
    """The console's server told to stop while the endpoint's goes on (as `serve_together`
    does when the endpoint's server ends for a reason of its own): uvicorn waits for open
    connections to close, so the streams must end first or it waits for ever."""
    with (
        signed_in(in_process.origin, PASSWORD) as client,
        client.stream("GET", "/live") as stream,
    ):
        lines = stream.iter_lines()
        assert next(lines) == "retry: 5000"
        in_process.server.should_exit = True
        in_process.thread.join(timeout=STOP_DEADLINE)
        assert not in_process.thread.is_alive(), f"the console did not stop in {STOP_DEADLINE:g} s"
        assert rest_of(lines) == [""]


def test_an_idle_stream_sends_a_heartbeat(
    in_process: InProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "HEARTBEAT_SECONDS", 0.5)
    with (
        signed_in(in_process.origin, PASSWORD) as client,
        client.stream("GET", "/live") as stream,
    ):
        said = lines_until(stream, ": idle")
    assert said[-1] == ": idle"
    assert "event: changed" not in said


def test_the_console_holds_a_bounded_number_of_streams_over_all_sessions(
    in_process: InProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "STREAMS_OVERALL", 2)
    with (
        signed_in(in_process.origin, PASSWORD) as first,
        signed_in(in_process.origin, PASSWORD) as second,
        first.stream("GET", "/live") as one,
        second.stream("GET", "/live") as two,
    ):
        assert (one.status_code, two.status_code) == (200, 200)
        assert first.get("/live").status_code == 429


def test_a_change_made_as_the_stream_opens_is_told(
    in_process: InProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page asks for itself again once the stream opens, so the stream must read the
    store's mark before its answer starts: a change between the two is told, never taken
    for the state the page already shows."""
    state = {"mark": 0}
    looked = ConsoleNews.look

    def slow_look(news: ConsoleNews, token: str | None) -> Hashable | None:
        signed = looked(news, token)
        time.sleep(0.5)  # a loaded machine reads the store slowly
        return None if signed is None else state["mark"]

    monkeypatch.setattr(ConsoleNews, "look", slow_look)
    monkeypatch.setattr(live, "HEARTBEAT_SECONDS", 0.5)
    with (
        signed_in(in_process.origin, PASSWORD) as client,
        client.stream("GET", "/live") as stream,
    ):
        state["mark"] = 1  # changed once the answer started, as the page is fetched again
        said: list[str] = []
        for line in stream.iter_lines():
            said.append(line)
            if line == "event: changed" or said.count(": idle") >= 3:
                break
    assert "event: changed" in said
