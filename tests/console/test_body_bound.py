"""Every POST the console takes is bounded before any page reads it: a body declared larger
than its route's bound is answered 413 unread, a chunked one is cut at the bound, and the
page behind it never runs. The drafts' Edit form has the largest bound, one a whole message
of `MailDelivery.MaxBodyCharacters` fits in however it is encoded."""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from console import test_drafts_page as drafts_page
from console.conftest import ORIGIN, Console, console_config
from console.streamed_body import CHUNK, stream_body
from console.test_drafts_page import Owner, form_fields
from mailfathom.bootstrap import Services
from mailfathom.entrypoints.console.pages import build_console_app
from mailfathom.entrypoints.console.serving import console_use_cases
from mailfathom.entrypoints.mcp.run import listener_config
from mcp_tests.deployment import _free_port
from waiting import wait_for

# More than any route's bound under the default configuration.
OVERSIZED = 8 * 1024 * 1024
STREAMED = 200 * 1024 * 1024
SOME_ID = "00000000-0000-4000-8000-000000000000"
FORM = {"Origin": ORIGIN, "Content-Type": "application/x-www-form-urlencoded"}


def post_paths(app: object) -> list[str]:
    """Every route of the app taking a POST, its parameters filled with one identifier."""
    paths = []
    for route in getattr(app, "routes", []):
        if isinstance(route, Route) and "POST" in (route.methods or ()):
            path = route.path
            for name in route.param_convertors:
                path = path.replace("{" + name + "}", SOME_ID)
            paths.append(path)
    return paths


def _chunks(total: int) -> Iterator[bytes]:
    yield b"csrf=x&pad="
    for _ in range(total // CHUNK):
        yield b"a" * CHUNK


def test_an_oversized_body_to_every_post_route_is_refused_before_it_is_read(
    signed_in: Console,
) -> None:
    client = signed_in.client
    paths = post_paths(client.app)
    assert len(paths) >= 15
    declared = b"csrf=x&pad=" + b"a" * OVERSIZED
    for path in paths:
        answer = client.post(path, content=declared, headers=FORM, follow_redirects=False)
        assert answer.status_code == 413, path
        streamed = client.post(
            path, content=_chunks(OVERSIZED), headers=FORM, follow_redirects=False
        )
        assert streamed.status_code == 413, path
    assert client.get("/").status_code == 200


def test_a_short_form_is_bounded_tighter_than_the_edit_form(signed_in: Console) -> None:
    """Signing out takes no more than a small form: twenty kilobytes is already too much."""
    body = b"csrf=x&pad=" + b"a" * 20_000
    answer = signed_in.client.post("/logout", content=body, headers=FORM)
    assert answer.status_code == 413
    assert signed_in.client.get("/").status_code == 200


@pytest.fixture
def owner(tmp_path: Path) -> Iterator[Owner]:
    with drafts_page.signed_in(tmp_path) as signed:
        yield signed


def test_an_edit_past_the_bound_saves_nothing(owner: Owner) -> None:
    draft_id = owner.keep(subject="Kept", body="Kept words.\n")
    fields = form_fields(owner.page(f"/drafts/{draft_id}/edit"), f"/drafts/{draft_id}/edit")
    edit = {**fields, "to": "friend@example.net", "subject": "Changed", "body": "New words."}
    refused = owner.client.post(
        f"/drafts/{draft_id}/edit",
        data={**edit, "pad": "a" * (4 * 1024 * 1024)},
        headers={"Origin": ORIGIN},
        follow_redirects=False,
    )
    assert refused.status_code == 413
    (section,) = owner.page().xpath(f'//section[@id="draft-{draft_id}"]')
    assert section.xpath(".//h2")[0].text_content() == "Kept"
    whole = owner.client.post(
        f"/drafts/{draft_id}/edit",
        data={**edit, "body": "\U0001f600" * 100_000},
        headers={"Origin": ORIGIN},
        follow_redirects=False,
    )
    assert whole.status_code == 200
    (section,) = owner.page().xpath(f'//section[@id="draft-{draft_id}"]')
    assert section.xpath(".//h2")[0].text_content() == "Changed"


class Counting:
    """The console's application, counting the body octets it was handed."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.received = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def counted() -> Message:
            message = await receive()
            self.received += len(message.get("body", b""))
            return message

        await self.app(scope, counted, send)


@contextmanager
def served_console(root: Path) -> Iterator[tuple[int, Counting]]:
    """The console with every page, served by uvicorn as `serve` configures it."""
    with Services.open(console_config(root)) as services:
        counting = Counting(build_console_app(console_use_cases(services), "127.0.0.1"))
        port = _free_port()
        listener = socket.create_server(("127.0.0.1", port))
        server = uvicorn.Server(listener_config(counting, "127.0.0.1", listener, lifespan="off"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
        thread.start()
        try:
            wait_for(lambda: server.started, "the console listens")
            yield port, counting
        finally:
            server.should_exit = True
            thread.join(timeout=30)
            listener.close()


def test_a_streamed_200_mb_body_is_cut_early(tmp_path: Path) -> None:
    with served_console(tmp_path) as (port, counting):
        for path in ("/outbox/" + SOME_ID + "/cancel", "/login", f"/drafts/{uuid.uuid4()}/edit"):
            counting.received = 0
            streamed = stream_body(port, path, STREAMED, {"Origin": f"http://127.0.0.1:{port}"})
            assert streamed.sent < STREAMED, path
            assert streamed.status in (413, None), path
            assert counting.received < 4 * 1024 * 1024, path
            declared = stream_body(
                port, path, STREAMED, {"Origin": f"http://127.0.0.1:{port}"}, chunked=False
            )
            assert declared.status == 413, path


def test_the_edit_bound_needs_a_signed_in_session(signed_in: Console) -> None:
    """Nobody signed in is read a message's worth of body: without a live session an Edit
    is bounded as any small form is, and the page behind it never runs."""
    path = f"/drafts/{SOME_ID}/edit"
    body = b"csrf=x&pad=" + b"a" * 100_000
    assert signed_in.client.post(path, content=body, headers=FORM).status_code != 413
    signed_in.client.cookies.clear()
    assert signed_in.client.post(path, content=body, headers=FORM).status_code == 413
    forged = {**FORM, "Cookie": "mf_console=not-a-session"}
    assert signed_in.client.post(path, content=body, headers=forged).status_code == 413
    small = b"csrf=x"
    # Read whole and small, it is a form whose session ended: back to the sign-in page.
    ended = signed_in.client.post(path, content=small, headers=FORM, follow_redirects=False)
    assert (ended.status_code, ended.headers["location"]) == (303, "/login?expired=1")
