"""`mfctl outbox`: an operator lists, shows and withdraws queued sends, and sees no content."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.bootstrap import Services

from .helpers import AGENT, sending_config

SUBJECT = "Operator view check"
BODY = "Nothing of this may appear in the operator's view.\n"


def _mfctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mailfathom", "outbox", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_an_operator_lists_shows_and_cancels_a_send(tmp_path: Path) -> None:
    register_all([SUBJECT, BODY, "listed@example.net"])
    config_path = sending_config(tmp_path, None, mail_delivery="HoldSeconds = 3600")
    with Services.open(load_config(config_path)) as services:
        record = services.sending().send.send(
            AGENT,
            SendRequest(
                account="work",
                to=["listed@example.net"],
                subject=SUBJECT,
                plain_text_body=BODY,
                idempotency_key="operator",
            ),
        )
    identifier = str(record.outgoing_id)
    listed = _mfctl("list", "--config", str(config_path))
    assert listed.returncode == 0, listed.stderr
    assert identifier[:8] in listed.stdout
    assert "queued" in listed.stdout

    shown = _mfctl("show", identifier, "--config", str(config_path))
    assert shown.returncode == 0, shown.stderr
    assert "listed@example.net" in shown.stdout
    assert "queued by       agent" in shown.stdout
    for output in (listed.stdout, shown.stdout):
        assert SUBJECT not in output
        assert "Nothing of this" not in output

    cancelled = _mfctl("cancel", identifier, "--config", str(config_path))
    assert cancelled.returncode == 0, cancelled.stderr
    assert "cancelled" in cancelled.stdout
    again = _mfctl("cancel", identifier, "--config", str(config_path))
    assert again.returncode == 0
    assert _mfctl("show", "not-an-id", "--config", str(config_path)).returncode == 2
    unknown = "0f8fad5b-d9cb-469f-a165-70867728950e"
    assert _mfctl("show", unknown, "--config", str(config_path)).returncode == 1
    assert _mfctl("list", "--state", "bogus", "--config", str(config_path)).returncode == 2
