"""The demo as a user starts it: served over HTTP, and sending works between its two
accounts with no mail server configured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from log_audit import register_all
from mailfathom.domain.api_keys import is_api_key_shaped
from mcp_tests.client import call, code, structured
from mcp_tests.deployment import _free_port, _wait_for_port
from waiting import wait_for

SUBJECT = "Demo hello between the two accounts"


def test_the_served_demo_sends_from_one_account_to_the_other(tmp_path: Path) -> None:
    register_all([SUBJECT, "colleague@example.org"])
    port = _free_port()
    log_path = tmp_path / "demo.log"
    with log_path.open("wb") as log:
        demo = subprocess.Popen(
            [sys.executable, "-m", "mailfathom", "demo", "--data-dir", str(tmp_path / "demo"),
             "--messages", "10", "--port", str(port)],
            stdout=log, stderr=log, env={**os.environ}, cwd=tmp_path,
        )  # fmt: skip
    try:
        _wait_for_port(port, demo, timeout=120)
        url = f"http://127.0.0.1:{port}/mcp"
        key = (tmp_path / "demo" / "demo-api-key").read_text("ascii").strip()
        assert is_api_key_shaped(key)
        sent = call(
            url,
            key,
            "send_email",
            {
                "account": "demo",
                "to": ["colleague@example.org"],
                "subject": SUBJECT,
                "plainTextBody": "Sent through the demo's peer mailboxes.\n",
                "idempotencyKey": "demo-hello",
            },
        )
        assert code(sent) is None
        identifier = structured(sent)["outgoingEmailId"]

        def delivered() -> bool:
            status = structured(
                call(url, key, "get_outgoing_email", {"outgoingEmailId": identifier})
            )
            return bool(status["state"] == "sent")

        wait_for(delivered, "the demo's delivery pass did not send the message", interval=0.5)

        def arrived() -> list[str]:
            page = structured(
                call(url, key, "list_emails", {"accounts": ["colleague"], "folders": ["INBOX"]})
            )
            return [e["subject"] for e in page["emails"]]

        assert wait_for(
            arrived, "the message did not reach the colleague's inbox", interval=0.5
        ) == [SUBJECT]
    finally:
        demo.terminate()
        try:
            demo.wait(timeout=30)
        except subprocess.TimeoutExpired:
            demo.kill()
            demo.wait()
