"""Outgoing screening at the use cases, on the in-memory store: a send or a draft send whose
subject or text carries sensitive content is not queued as it stands. Refused with 53013, or
kept as a draft with an owner alert, as `[SensitiveContent] Outgoing` says; a caller whose
entry asks a person has the person asked, told which categories were found and never the
values, in English, Czech and Slovak."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.deployment import FakeDeployment
from fakes.person import ANSWERS, ScriptedPerson, chooses
from log_audit import register_all
from mailfathom.adapters.sensitive import scanner
from mailfathom.app.confirmation.confirmed_sending import NobodyToAsk, Status
from mailfathom.app.confirmation.ports import Choice
from mailfathom.app.confirmation.question import ShownFile, ShownMessage
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.sensitive_content import Finding, SensitiveCategory

from .helpers import AGENT, fake_deployment

ASKS = Caller(ALL_PERMISSIONS, "careful", ConfirmationMode.ASK)
CARD = "4111 1111 1111 1111"
IBAN = "CZ65 0800 0000 1920 0014 5399"


def _deployment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outgoing: str) -> FakeDeployment:
    register_all([CARD, IBAN, CARD.replace(" ", ""), IBAN.replace(" ", "")])
    tmp_path.mkdir(parents=True, exist_ok=True)
    screening = f'[SensitiveContent]\nEnabled = true\nOutgoing = "{outgoing}"\n'
    return fake_deployment(
        tmp_path, monkeypatch, mail_delivery="HoldSeconds = 60", deployment=screening
    )


def _request(**changes: object) -> SendRequest:
    fields: dict[str, object] = {
        "account": "work",
        "to": ["friend@example.net"],
        "subject": "Booking",
        "plain_text_body": f"Please charge {CARD} for the room.\n",
        "idempotency_key": "k1",
    }
    fields.update(changes)
    return SendRequest(**fields)  # type: ignore[arg-type]


def test_a_send_carrying_a_finding_is_refused_and_nothing_is_queued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _deployment(tmp_path, monkeypatch, "refuse")
    for request in (_request(), _request(plain_text_body="Hi.\n", subject=f"IBAN {IBAN}")):
        with pytest.raises(Refusal) as refused:
            d.send().settle(AGENT, request, NobodyToAsk())
        assert refused.value.code == Code.OUTGOING_SENSITIVE_CONTENT
        assert "4111" not in refused.value.message
        assert "CZ65" not in refused.value.message
    with pytest.raises(Refusal) as unasked:
        d.send().send(AGENT, _request(idempotency_key="k2"))
    assert unasked.value.code == Code.OUTGOING_SENSITIVE_CONTENT
    assert d.memory.outbox.listing(10) == []
    clean = d.send().settle(AGENT, _request(plain_text_body="Noon?\n"), NobodyToAsk())
    assert clean.status is Status.QUEUED


def test_keep_draft_keeps_the_send_as_a_draft_and_alerts_the_owner_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _deployment(tmp_path, monkeypatch, "keepDraft")
    first = d.send().settle(AGENT, _request(), NobodyToAsk())
    assert (first.status, first.reason) == (Status.DRAFT, "sensitive_content")
    assert d.memory.outbox.listing(10) == []
    (alert,) = d.memory.alerts.listing(True, 10)
    assert (alert.reason, alert.draft_id) == ("sensitive_content", first.draft_id)
    again = d.send().settle(AGENT, _request(), NobodyToAsk())
    assert (again.status, again.draft_id, again.reason) == (
        Status.DRAFT,
        first.draft_id,
        "sensitive_content",
    )
    assert len(d.memory.alerts.listing(True, 10)) == 1


def test_allow_sends_unscreened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = _deployment(tmp_path, monkeypatch, "allow")
    assert d.send().settle(AGENT, _request(), NobodyToAsk()).status is Status.QUEUED


@pytest.mark.parametrize(
    ("language", "named"),
    [
        ("en", "a payment card number"),
        ("cs", "číslo platební karty"),
        ("sk", "číslo platobnej karty"),
    ],
)
def test_the_person_asked_is_told_the_category_and_never_the_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, language: str, named: str
) -> None:
    d = _deployment(tmp_path, monkeypatch, "refuse")
    person = chooses(Choice.SEND)
    settled = d.send().settle(ASKS, _request(language=language), person)
    assert settled.status is Status.QUEUED
    (question,) = person.asked
    assert named in question.text
    assert "[redacted:paymentCard]" in question.text
    assert "4111" not in question.text
    # What leaves is what the caller wrote: the answer is bound to the message as sent.
    assert settled.record is not None


def test_a_draft_send_carrying_a_finding_is_refused_or_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    draft_request = DraftRequest(
        account="work",
        subject="Booking",
        to=["friend@example.net"],
        plain_text_body=f"Card {CARD}\n",
    )
    refusing = _deployment(tmp_path / "refusing", monkeypatch, "refuse")
    saved = refusing.save_draft().save(AGENT, draft_request)
    with pytest.raises(Refusal) as refused:
        refusing.send_draft().settle(AGENT, str(saved.draft_id), NobodyToAsk(), None)
    assert refused.value.code == Code.OUTGOING_SENSITIVE_CONTENT
    with pytest.raises(Refusal):
        refusing.send_draft().send(AGENT, str(saved.draft_id))
    assert refusing.memory.outbox.listing(10) == []

    keeping = _deployment(tmp_path / "keeping", monkeypatch, "keepDraft")
    saved = keeping.save_draft().save(AGENT, draft_request)
    kept = keeping.send_draft().settle(AGENT, str(saved.draft_id), NobodyToAsk(), None)
    assert (kept.status, kept.draft_id, kept.reason) == (
        Status.DRAFT,
        str(saved.draft_id),
        "sensitive_content",
    )
    assert keeping.memory.outbox.listing(10) == []
    assert [a.reason for a in keeping.memory.alerts.listing(True, 10)] == ["sensitive_content"]


def test_nobody_to_ask_for_a_caller_that_asks_keeps_its_draft_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _deployment(tmp_path, monkeypatch, "refuse")
    settled = d.send().settle(ASKS, _request(), ScriptedPerson(ANSWERS["nobody-to-ask"]))
    assert (settled.status, settled.reason) == (Status.DRAFT, "confirmation_unavailable")


def test_a_file_name_carrying_a_finding_stops_the_send_and_a_failing_scan_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _deployment(tmp_path, monkeypatch, "refuse")
    step = d.confirmed()
    named = ShownMessage(
        account_id="work",
        sender="me@example.org",
        to=("friend@example.net",),
        cc=(),
        bcc=(),
        subject="Statement",
        files=(ShownFile(f"statement {IBAN}.pdf", 10),),
        body="Attached.\n",
        html=None,
        envelope=("to:friend@example.net",),
    )
    with pytest.raises(Refusal) as refused:
        step.refuse_sensitive(named)
    assert refused.value.code == Code.OUTGOING_SENSITIVE_CONTENT

    def broken(_text: str) -> Iterator[Finding]:
        raise RuntimeError("detector broke")

    monkeypatch.setitem(scanner.DETECTORS, SensitiveCategory.CREDENTIAL, broken)
    with pytest.raises(Refusal) as failed:
        d.send().settle(AGENT, _request(plain_text_body="Noon?\n"), NobodyToAsk())
    assert failed.value.code == Code.OUTGOING_SCAN_FAILED
    assert d.memory.outbox.listing(10) == []
