"""`mfctl outbox`: an operator lists, shows and withdraws queued sends, and sees no content."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.codes import DeliveryCode

from .helpers import AGENT, sending_config

SUBJECT = "Operator view check"
BODY = "Nothing of this may appear in the operator's view.\n"


def _mfctl(*args: str, columns: int | None = None) -> subprocess.CompletedProcess[str]:
    env = None if columns is None else {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run(
        [sys.executable, "-m", "mailfathom", "outbox", *args],
        env=env,
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


def _queue(services: Services, to: str, key: str) -> str:
    record = services.sending().send.send(
        AGENT,
        SendRequest(
            account="work", to=[to], subject=SUBJECT, plain_text_body=BODY, idempotency_key=key
        ),
    )
    return str(record.outgoing_id)


def test_an_empty_outbox_says_there_are_no_queued_sends(tmp_path: Path) -> None:
    config_path = sending_config(tmp_path, None)
    listed = _mfctl("list", "--config", str(config_path))
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.strip() == "No queued sends."
    filtered = _mfctl("list", "--state", "refused", "--config", str(config_path))
    assert filtered.returncode == 0, filtered.stderr
    assert filtered.stdout.strip() == "No sends in the state(s) asked for."


def test_a_refused_send_is_explained_and_cannot_be_cancelled(tmp_path: Path) -> None:
    """No submission server is configured, so mail to an outsider ends as 71004; mail to the
    account's own address is carried as a peer delivery and ends as sent."""
    register_all([SUBJECT, BODY, "outsider@example.net"])
    config_path = sending_config(tmp_path, None)
    with Services.open(load_config(config_path)) as services:
        refused = _queue(services, "outsider@example.net", "refused")
        sent = _queue(services, "me@example.org", "sent")
        services.delivery_pass().run_once()
        cancelled = _queue(services, "me@example.org", "cancelled")
        assert services.outbox().cancel(uuid.UUID(cancelled)) is not None

    for identifier, state, exit_code in (
        (refused, "refused", 1),
        (sent, "sent", 1),
        (cancelled, "cancelled", 0),
    ):
        again = _mfctl("cancel", identifier, "--config", str(config_path))
        assert again.returncode == exit_code, again.stderr
        assert f"already {state}" in again.stdout + again.stderr
        assert f"state           {state}" in again.stdout

    from mailfathom.app.sending.explanations import FAILURE_EXPLANATIONS

    shown = _mfctl("show", refused, "--config", str(config_path))
    assert shown.returncode == 0, shown.stderr
    (line,) = [x for x in shown.stdout.splitlines() if x.startswith("failure code")]
    code, _, explanation = line.removeprefix("failure code").strip().partition(": ")
    assert int(code) == DeliveryCode.NO_ROUTE
    assert explanation == FAILURE_EXPLANATIONS[DeliveryCode.NO_ROUTE]
    assert SUBJECT not in shown.stdout
    assert "Nothing of this" not in shown.stdout


def test_every_delivery_failure_code_is_explained_in_words() -> None:
    from mailfathom.app.sending.explanations import FAILURE_EXPLANATIONS

    assert set(FAILURE_EXPLANATIONS) == set(DeliveryCode)
    for sentence in FAILURE_EXPLANATIONS.values():
        assert sentence.endswith(".")
        assert "{" not in sentence


def test_delivery_failure_codes_are_numbered_in_their_own_block() -> None:
    """71xxx: the 72xxx block is the checks `init` makes of a server."""
    assert all(71001 <= code <= 71999 for code in DeliveryCode)
    assert DeliveryCode.WAITING_FOR_CONSENT.value == 71009


def test_a_send_asked_to_wait_is_listed_and_shown_with_its_instant(tmp_path: Path) -> None:
    from mailfathom.app.drafting.composition import DraftRequest

    register_all([SUBJECT, BODY, "waiting@example.net"])
    config_path = sending_config(tmp_path, None)
    instant = datetime(2026, 12, 24, 9, 30, tzinfo=UTC)
    clock = lambda: datetime(2026, 12, 20, 8, 0, tzinfo=UTC)  # noqa: E731
    with Services.open(load_config(config_path), clock=clock) as services:
        uses = services.drafting()
        request = DraftRequest(
            plain_text_body=BODY, account="work", subject=SUBJECT, to=["waiting@example.net"]
        )
        saved = uses.save.save(AGENT, request)
        waiting = uses.send.send(AGENT, str(saved.draft_id), "2026-12-24T10:30:00+01:00")
        unscheduled = _queue(services, "me@example.org", "unscheduled")
    listed = _mfctl("list", "--config", str(config_path), columns=200)
    assert listed.returncode == 0, listed.stderr
    assert "send after" in listed.stdout
    (line,) = [x for x in listed.stdout.splitlines() if str(waiting.outgoing_id) in x]
    assert "2026-12-24T09:30:00+00:00" in line
    (other,) = [x for x in listed.stdout.splitlines() if unscheduled in x]
    assert "2026-12-24" not in other
    # In a narrow terminal the instant is folded onto more lines, never cut short.
    narrow = _mfctl("list", "--config", str(config_path), columns=80)
    assert "…" not in narrow.stdout
    shown = _mfctl("show", str(waiting.outgoing_id), "--config", str(config_path))
    assert shown.returncode == 0, shown.stderr
    assert f"send after      {instant.isoformat()}" in shown.stdout
    plain = _mfctl("show", unscheduled, "--config", str(config_path))
    assert "send after" not in plain.stdout
