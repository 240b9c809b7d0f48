"""The four draft tools over Streamable HTTP with the official client: every refusal code they
produce, the draft left as it was by a refused promotion, a repeated send answered with the
first record, and a repeated save after sending that claims no new draft."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.schema import drafts
from mailfathom.bootstrap import Services
from mcp_tests.client import call, code, structured, text
from sending.helpers import SMTP_PASSWORD, SMTP_USER
from sending.served import KEYS, Served, incoming, relaxed_config, serve, strict_config
from servers.smtp import SmtpServer

SUBJECT = "Seedlings for the neighbours"
BODY = "I have tomato seedlings to spare, would you like some?"
ANSWERED = "Question about the seedlings"
FRIEND = "friend@example.net"
ZERO = "00000000-0000-0000-0000-000000000000"
AGENT = KEYS["agent"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    smtp = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    try:
        root = tmp_path_factory.mktemp("drafts-http")
        register_all([ANSWERED, SUBJECT, BODY, FRIEND, "olga@example.net", "Olga Writer"])
        mail = {"work": incoming(ANSWERED, "work@example.org")}
        yield from serve(root, relaxed_config(root, smtp), smtp, deliver=False, mail=mail)
    finally:
        smtp.close()


def _own(**overrides: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "account": "work",
        "subject": SUBJECT,
        "to": [FRIEND],
        "plainTextBody": f"{BODY} {uuid.uuid4().hex}",
    }
    arguments.update(overrides)
    return {k: v for k, v in arguments.items() if v is not None}


def _answered_id(d: Served) -> str:
    found = structured(call(d.url, AGENT, "list_emails", {"subjectFragment": ANSWERED}))
    return str(found["emails"][0]["storedEmailId"])


def _draft_count(d: Served) -> int:
    with Services.open(load_config(d.config_path)) as services, services.engine.connect() as c:
        return int(c.execute(sa.select(sa.func.count()).select_from(drafts)).scalar_one())


def _save(d: Served, **overrides: Any) -> dict[str, Any]:
    return structured(call(d.url, AGENT, "save_draft", _own(**overrides)))


def test_a_saved_draft_answers_its_standing_and_nothing_of_its_message(served: Served) -> None:
    saved = _save(served, cc=["a@example.net", FRIEND.upper()], bcc=["b@example.net"])
    assert set(saved) <= {
        "draftId",
        "accountId",
        "state",
        "revision",
        "recipientCount",
        "savedAt",
        "attachmentCount",
        "alreadySent",
        "outgoingEmailId",
    }
    assert (saved["accountId"], saved["state"], saved["revision"]) == ("work", "held", 1)
    assert saved["attachmentCount"] == 0
    assert saved["recipientCount"] == 3
    answered = _answered_id(served)
    for answering, reached in (("senderOnly", 1), ("everyone", 2)):
        arguments = {"answeredEmailId": answered, "answering": answering, "plainTextBody": "Yes."}
        answer = structured(call(served.url, AGENT, "save_draft", arguments))
        assert answer["accountId"] == "work"
        # The sender; for everyone also the original's other addressee, not this account.
        assert answer["recipientCount"] == reached


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param({"account": None, "subject": None}, 51013, id="neither-shape"),
        pytest.param({"answering": "senderOnly", "answeredEmailId": ZERO}, 51013, id="both"),
        pytest.param({"subject": None}, 51013, id="account-without-subject"),
        pytest.param({"account": " "}, 51013, id="blank-account"),
        pytest.param({"account": "wo\u0007rk"}, 51013, id="account-control-character"),
        pytest.param({"subject": "one\ntwo"}, 51013, id="subject-line-break"),
        pytest.param({"to": ["Friend <friend@example.net>"]}, 51013, id="bad-address"),
        pytest.param({"htmlBody": "  "}, 51013, id="blank-html"),
        pytest.param({"to": [f"p{n}@example.net" for n in range(4)]}, 51014, id="recipients"),
        pytest.param({"plainTextBody": "x" * 2001}, 51014, id="body"),
        pytest.param({"account": "nobody"}, 53001, id="unserved-account"),
    ],
)
def test_save_refuses_with_the_contracts_codes(
    served: Served, arguments: dict[str, Any], expected: int
) -> None:
    assert code(call(served.url, AGENT, "save_draft", _own(**arguments))) == expected


@pytest.mark.parametrize(
    ("answered", "answering", "expected"),
    [
        pytest.param("not-an-identifier", "senderOnly", 51004, id="malformed"),
        pytest.param(str(uuid.uuid4()), "senderOnly", 53005, id="unknown"),
        pytest.param(None, "forward", 51013, id="answering-alone"),
        pytest.param(str(uuid.uuid4()), "replyAll", 51013, id="answering-none-of-the-three"),
    ],
)
def test_an_answer_refuses_like_a_reply(
    served: Served, answered: str | None, answering: str, expected: int
) -> None:
    arguments = {"plainTextBody": "Yes.", "answering": answering}
    if answered is not None:
        arguments = {"plainTextBody": "Yes.", "answeredEmailId": answered, "answering": answering}
    assert code(call(served.url, AGENT, "save_draft", arguments)) == expected


def test_every_draft_that_cannot_be_acted_on_is_one_answer(served: Served) -> None:
    deleted = _save(served)["draftId"]
    assert structured(call(served.url, AGENT, "delete_draft", {"draftId": deleted}))["state"] == (
        "deleted"
    )
    sent = _save(served)["draftId"]
    assert code(call(served.url, AGENT, "send_draft", {"draftId": sent})) is None
    live = _save(served)["draftId"]
    for draft_id in ("not-an-identifier", ZERO, str(uuid.uuid4()), deleted, sent):
        for tool in ("update_draft", "delete_draft"):
            arguments = {"draftId": draft_id, **_own()} if tool == "update_draft" else {}
            arguments.setdefault("draftId", draft_id)
            assert code(call(served.url, AGENT, tool, arguments)) == 53008, (tool, draft_id)
        if draft_id != sent:
            assert code(call(served.url, AGENT, "send_draft", {"draftId": draft_id})) == 53008
    # Another account's name never moves a draft: it is a draft that account does not hold.
    moved = call(served.url, AGENT, "update_draft", {"draftId": live, **_own(account="quiet")})
    assert code(moved) == 53008


def test_a_promotion_asks_every_bound_now_and_a_refusal_leaves_the_draft(served: Served) -> None:
    cases = [
        (_own(account="bare", to=[FRIEND]), 56002),
        (_own(account="quiet", to=[FRIEND]), 56003),
        (_own(to=None), 53010),
        (_own(to=["someone@blocked.example"]), 53006),
    ]
    register_all(["someone@blocked.example"])
    for arguments, expected in cases:
        saved = structured(call(served.url, AGENT, "save_draft", arguments))
        refused = call(served.url, AGENT, "send_draft", {"draftId": saved["draftId"]})
        assert code(refused) == expected
        # Left as it was: still a live draft at the same revision, edited and deleted normally.
        edited = structured(
            call(served.url, AGENT, "update_draft", {"draftId": saved["draftId"], **arguments})
        )
        assert edited["revision"] == 2
        gone = call(served.url, AGENT, "delete_draft", {"draftId": saved["draftId"]})
        assert structured(gone)["state"] == "deleted"


def test_a_repeated_send_answers_the_first_record_and_a_repeated_save_claims_nothing(
    served: Served,
) -> None:
    arguments = _own()
    saved = structured(call(served.url, AGENT, "save_draft", arguments))
    again = structured(call(served.url, AGENT, "save_draft", arguments))
    assert again["draftId"] == saved["draftId"]
    assert not again.get("alreadySent", False)
    first = structured(call(served.url, AGENT, "send_draft", {"draftId": saved["draftId"]}))
    assert first["state"] == "queued"
    assert first["recipientCount"] == 1
    repeat = structured(call(served.url, AGENT, "send_draft", {"draftId": saved["draftId"]}))
    assert repeat == first
    after = structured(call(served.url, AGENT, "save_draft", arguments))
    assert after["draftId"] == saved["draftId"]
    assert after["alreadySent"] is True
    assert after["outgoingEmailId"] == first["outgoingEmailId"]
    # A send-only caller may send a draft somebody prepared, and reads the send back.
    prepared = _save(served)["draftId"]
    sent = structured(call(served.url, KEYS["sendonly"], "send_draft", {"draftId": prepared}))
    status = call(
        served.url,
        KEYS["sendonly"],
        "get_outgoing_email",
        {"outgoingEmailId": sent["outgoingEmailId"]},
    )
    assert structured(status)["state"] == "queued"


def test_a_save_repeated_after_its_draft_was_edited_is_refused_and_writes_nothing(
    served: Served,
) -> None:
    # Save A, edit the draft to B, save A again: the repeat is not answered with the draft
    # now holding B, and no second draft is written either.
    first = _own()
    saved = structured(call(served.url, AGENT, "save_draft", first))
    edited = {"draftId": saved["draftId"], **_own(subject="Seedlings, the second thought")}
    assert structured(call(served.url, AGENT, "update_draft", edited))["revision"] == 2
    held = _draft_count(served)
    again = call(served.url, AGENT, "save_draft", first)
    assert code(again) == 58001
    assert saved["draftId"] in text(again)
    assert _draft_count(served) == held
    # Once that draft is sent, the repeat is still not told it was: what left was B.
    sent = structured(call(served.url, AGENT, "send_draft", {"draftId": saved["draftId"]}))
    assert sent["state"] == "queued"
    assert code(call(served.url, AGENT, "save_draft", first)) == 58001
    # A save never edited keeps answering its draft, before and after it is sent.
    untouched = _own()
    kept = structured(call(served.url, AGENT, "save_draft", untouched))
    assert structured(call(served.url, AGENT, "save_draft", untouched)) == kept


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    smtp = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    try:
        root = tmp_path_factory.mktemp("drafts-strict")
        yield from serve(root, strict_config(root, smtp), smtp, deliver=False)
    finally:
        smtp.close()


def test_a_promotion_is_held_to_vouching_and_the_ceilings_of_today(strict: Served) -> None:
    register_all(["stranger@example.net", "colleague@example.net"])
    stranger = structured(call(strict.url, AGENT, "save_draft", _own(to=["stranger@example.net"])))
    refused = call(strict.url, AGENT, "send_draft", {"draftId": stranger["draftId"]})
    assert code(refused) == 53009
    drafts = [
        structured(call(strict.url, AGENT, "save_draft", _own(to=["colleague@example.net"])))
        for _ in range(4)
    ]
    answers = [call(strict.url, AGENT, "send_draft", {"draftId": d["draftId"]}) for d in drafts]
    # The client may queue three sends an hour: the fourth promotion is refused, and its
    # draft is left as it was.
    assert [code(a) for a in answers] == [None, None, None, 57002]
    last = drafts[-1]["draftId"]
    assert code(call(strict.url, AGENT, "send_draft", {"draftId": last})) == 57002
    gone = call(strict.url, AGENT, "delete_draft", {"draftId": last})
    assert structured(gone)["state"] == "deleted"


def test_a_promotion_asks_the_message_size_bound_of_today(tmp_path: Path) -> None:
    """A draft saved while it fitted is refused once the operator lowered MaxMessageSize."""
    long_body = "The allotment rota for the coming season, week by week. " * 30
    register_all([long_body.strip()])
    arguments = _own(plainTextBody=long_body)
    smtp = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    try:
        for loose in serve(tmp_path, relaxed_config(tmp_path, smtp), smtp, deliver=False):
            saved = structured(call(loose.url, AGENT, "save_draft", arguments))
        tight_text = relaxed_config(tmp_path, smtp).replace(
            "MaxBodyCharacters = 2000", "MaxBodyCharacters = 2000\nMaxMessageSize = 1500"
        )
        for tight in serve(tmp_path, tight_text, smtp, deliver=False):
            refused = call(tight.url, AGENT, "send_draft", {"draftId": saved["draftId"]})
            assert code(refused) == 51014
            # Left as it was: a shorter edit is sent normally.
            shorter = {"draftId": saved["draftId"], **_own(plainTextBody="Rota later.")}
            edited = structured(call(tight.url, AGENT, "update_draft", shorter))
            assert edited["revision"] == 2
            queued = call(tight.url, AGENT, "send_draft", {"draftId": saved["draftId"]})
            assert structured(queued)["state"] == "queued"
    finally:
        smtp.close()
