"""send_draft racing an edit of the draft and the delivery pass, on SQLite and PostgreSQL.

The moment the outbox has written the draft's send, an edit of the draft arrives and a real
delivery pass hands whatever is due to the capture SMTP server. The send and the draft's mark
are one write, so the edit finds the draft sent and loses, and what the call answers is what
the outbox holds: the one send of the draft, which the draft names and the SMTP server
received once. Both callers are tried: one asked nobody, and one whose person answered Send.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from log_audit import register_all
from mailfathom.adapters.mime.viewing import MimeMessageViewer
from mailfathom.adapters.sql.drafts import SqlDraftStore
from mailfathom.adapters.sql.outbox import SqlOutbox
from mailfathom.adapters.sql.owner_alerts import SqlOwnerAlerts
from mailfathom.app.confirmation.confirmed_sending import ConfirmedSending
from mailfathom.app.confirmation.ports import Answer, AnswerKind, Choice, Question
from mailfathom.app.confirmation.wording import Language
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.app.drafting.send_draft import DraftPromotion
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode
from mailfathom.domain.codes import Code
from mailfathom.domain.drafts import DraftLife
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import OutgoingRecord, Stage
from sending.helpers import SMTP_PASSWORD, SMTP_USER, SendingDeployment, open_deployment
from servers.smtp import SmtpServer

PLAIN = Caller(ALL_PERMISSIONS, "agent")
CAREFUL = Caller(ALL_PERMISSIONS, "careful", ConfirmationMode.ASK)
RECIPIENT = "friend@example.net"


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def deployment(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    smtp: SmtpServer,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[SendingDeployment]:
    store = ""
    if request.param == "postgresql":
        store = f'DatabaseUrl = "{request.getfixturevalue("migrated_postgres_url")}"'
    # No hold: a send is due the moment it is written.
    yield from open_deployment(
        tmp_path, smtp, monkeypatch, deployment=store, mail_delivery="HoldSeconds = 0"
    )


class RacedOutbox(SqlOutbox):
    """The outbox, with `then` run once right after its first write of a send returns."""

    def __init__(self, engine: Any, then: Callable[[], None]) -> None:
        super().__init__(engine)
        self._then: Callable[[], None] | None = then

    def record(self, *args: Any, **kwargs: Any) -> tuple[OutgoingRecord, bool]:
        written = super().record(*args, **kwargs)
        then, self._then = self._then, None
        if then is not None:
            then()
        return written


class SaysSend:
    def ask(self, question: Question) -> Answer:
        return Answer(AnswerKind.CHOSEN, question.binding, Choice.SEND)


def _request(body: str) -> DraftRequest:
    register_all([body.strip(), RECIPIENT])
    return DraftRequest(plain_text_body=body, account="work", subject="Race", to=[RECIPIENT])


def _promotion(d: SendingDeployment, outbox: SqlOutbox) -> DraftPromotion:
    services = d.services
    return DraftPromotion(
        services.config,
        SqlDraftStore(services.engine),
        outbox,
        [ServedAccount("work", "Work", "local")],
        ConfirmedSending(SqlOwnerAlerts(services.engine), clock=d.clock),
        MimeMessageViewer(),
        clock=d.clock,
        recipients=services.vouching(),
    )


def _leaving(d: SendingDeployment, draft_id: uuid.UUID) -> Sequence[OutgoingRecord]:
    """The draft's sends that have left or may still leave."""
    key = f"\x1fdraft {draft_id} "
    return [
        entry.record
        for entry in d.services.outbox().listing(100)
        if entry.idempotency_key.startswith(key) and entry.record.stage is not Stage.CANCELLED
    ]


@pytest.mark.parametrize("caller", [PLAIN, CAREFUL], ids=["asks-nobody", "person-says-send"])
def test_the_answer_of_send_draft_is_what_the_outbox_holds_when_an_edit_and_delivery_race_it(
    deployment: SendingDeployment, smtp: SmtpServer, caller: Caller
) -> None:
    d = deployment
    reference = f"Ref{uuid.uuid4().hex[:12]}"
    drafting = d.services.drafting()
    saved = drafting.save.save(PLAIN, _request(f"First words. {reference}\n"))
    edits: list[object] = []

    def edit_then_deliver() -> None:
        try:
            edits.append(
                drafting.update.update(
                    PLAIN, str(saved.draft_id), _request(f"Second words. {reference}\n")
                )
            )
        except Refusal as refused:
            edits.append(refused.code)
        d.services.delivery_pass(tls_context=smtp.client_context).run_once()

    promotion = _promotion(d, RacedOutbox(d.services.engine, edit_then_deliver))
    answer: OutgoingRecord | int
    try:
        if caller is PLAIN:
            answer = promotion.send(caller, str(saved.draft_id))
        else:
            settled = promotion.settle(caller, str(saved.draft_id), SaysSend(), Language.EN.value)
            assert settled.record is not None
            answer = settled.record
    except Refusal as refused:
        answer = refused.code

    leaving = _leaving(d, saved.draft_id)
    received = [m for m in smtp.received() if reference.encode() in m.content]
    draft = SqlDraftStore(d.services.engine).find(saved.draft_id)
    assert draft is not None
    answered = [answer.outgoing_id] if isinstance(answer, OutgoingRecord) else []
    assert [r.outgoing_id for r in leaving] == answered, "the answer is not what the outbox holds"
    # The send was written with the draft marked sent as it: the edit that came after lost,
    # the call answers that send, and it is the one message that left.
    assert edits == [Code.DRAFT_NOT_HELD]
    assert isinstance(answer, OutgoingRecord)
    assert (draft.life, draft.outgoing_id) == (DraftLife.SENT, answer.outgoing_id)
    assert len(received) == 1
    assert b"First words." in received[0].content
