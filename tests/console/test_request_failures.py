"""A console request whose handling fails is answered 500 in the page's language, with the
console's headers, and logged by code and kind alone: never the failure's text, which may
carry mail (here, a store failing with a subject in its message)."""

from __future__ import annotations

import logging
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from structlog.testing import capture_logs

import log_audit
from console.conftest import ORIGIN, console_config
from mailfathom.app.console.signing_in import ConsoleAccess
from mailfathom.bootstrap import Services
from mailfathom.entrypoints.console.pages import build_console_app
from mailfathom.entrypoints.console.serving import console_use_cases


@pytest.mark.parametrize(
    ("language", "words"),
    [("en", "could not answer"), ("cs", "nemohla odpovědět"), ("sk", "nemohla odpovedať")],
)
def test_a_failing_page_answers_500_and_logs_no_word_of_the_failure(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, language: str, words: str
) -> None:
    subject = "Quarterly salary review " + uuid.uuid4().hex
    log_audit.register(subject)

    def failing() -> ConsoleAccess:
        raise RuntimeError(f"store failed while reading {subject!r}")

    with Services.open(console_config(tmp_path)) as services:
        uses = replace(console_use_cases(services), access=failing)
        app = build_console_app(uses, "127.0.0.1")
        caplog.set_level(logging.DEBUG)
        with (
            capture_logs() as logged,
            TestClient(app, base_url=ORIGIN, raise_server_exceptions=False) as client,
        ):
            answer = client.get(f"/login?lang={language}")
    assert answer.status_code == 500
    assert words in answer.text
    assert "default-src 'none'" in answer.headers["content-security-policy"]
    assert subject not in answer.text
    assert subject not in caplog.text
    assert subject not in repr(logged)
    assert {"event": "console.request_failed", "code": 54001, "error": "RuntimeError"} in [
        {key: entry.get(key) for key in ("event", "code", "error")} for entry in logged
    ]
