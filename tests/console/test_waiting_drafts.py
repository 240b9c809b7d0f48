"""The owner's Send, Edit and Delete of a draft kept for a person, at the use case, on the
in-memory store: Send queues exactly the draft shown through the confirmation step's bounds,
a draft changed after it was shown is refused with nothing queued, Edit is a new revision,
Delete gives the draft up; each leaves no alert waiting."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakes.deployment import FakeDeployment
from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.confirmation.confirmed_sending import NobodyToAsk, Status
from mailfathom.app.console.waiting_drafts import DraftChanged, Edit, WaitingDrafts
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode
from mailfathom.domain.codes import Code
from mailfathom.domain.drafts import DraftLife
from mailfathom.domain.errors import Refusal

AGENT = Caller(ALL_PERMISSIONS, "agent", ConfirmationMode.ASK)
PEOPLE = ["me@example.org", "friend@example.net", "stranger@example.com", "Plans", "Edited"]


def _config(root: Path, policy: str = "") -> Path:
    path = root / "mailfathom.toml"
    path.write_text(
        f"""
[Store]
DataDir = "{root / "data"}"

[MailDelivery]
HoldSeconds = 0
{policy}

[[Accounts]]
Id = "home"
DisplayName = "Home"
Kind = "local"
Addresses = ["me@example.org"]

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Drafts"
Role = "Drafts"

[Accounts.Delivery]
Enabled = true
Address = "me@example.org"
"""
    )
    return path


def _deployment(root: Path, policy: str = "") -> FakeDeployment:
    register_all(PEOPLE)
    return FakeDeployment(load_config(_config(root, policy)))


@pytest.fixture
def d(tmp_path: Path) -> FakeDeployment:
    return _deployment(tmp_path)


def waiting(d: FakeDeployment) -> WaitingDrafts:
    return WaitingDrafts(
        d.memory.alerts,
        d.memory.drafts,
        d.send_draft(),
        d.update_draft(),
        d.delete_draft(),
        d.confirmed(),
    )


def kept(d: FakeDeployment, to: str = "friend@example.net", subject: str = "Plans") -> str:
    """A draft an agent asked to send when nobody could be asked: kept, the owner alerted."""
    request = DraftRequest(
        account="home", subject=subject, to=[to], plain_text_body="The plan is ready.\n"
    )
    draft_id = str(d.save_draft().save(AGENT, request).draft_id)
    settled = d.send_draft().settle(AGENT, draft_id, NobodyToAsk(), None)
    assert (settled.status, settled.draft_id) == (Status.DRAFT, draft_id)
    return draft_id


def test_a_kept_draft_is_listed_with_the_message_as_it_will_be_sent(d: FakeDeployment) -> None:
    draft_id = kept(d)
    (shown,) = waiting(d).listing()
    assert str(shown.draft.draft_id) == draft_id
    assert shown.shown.to == ("friend@example.net",)
    assert shown.shown.subject == "Plans"
    assert shown.shown.body.strip() == "The plan is ready."
    assert len(shown.binding) == 64


def test_send_queues_exactly_the_draft_shown_and_dismisses_its_alert(d: FakeDeployment) -> None:
    draft_id = kept(d)
    (shown,) = waiting(d).listing()
    record = waiting(d).send(draft_id, shown.binding)
    (entry,) = d.memory.outbox.listing(10)
    assert entry.record.outgoing_id == record.outgoing_id
    assert d.memory.outbox.find(record.outgoing_id) is not None
    draft = d.memory.drafts.find(shown.draft.draft_id)
    assert draft is not None
    assert (draft.life, draft.outgoing_id) == (DraftLife.SENT, record.outgoing_id)
    assert waiting(d).listing() == []
    assert d.alert_administration().listing() == []


def test_a_draft_edited_by_an_agent_after_it_was_shown_is_refused_and_nothing_sent(
    d: FakeDeployment,
) -> None:
    draft_id = kept(d)
    (shown,) = waiting(d).listing()
    d.update_draft().update(
        AGENT,
        draft_id,
        DraftRequest(
            account="home",
            subject="Edited",
            to=["stranger@example.com"],
            plain_text_body="Other words.\n",
        ),
    )
    with pytest.raises(DraftChanged):
        waiting(d).send(draft_id, shown.binding)
    assert d.memory.outbox.listing(10) == []
    (now,) = waiting(d).listing()
    assert now.shown.subject == "Edited"
    assert now.binding != shown.binding
    waiting(d).send(draft_id, now.binding)
    assert len(d.memory.outbox.listing(10)) == 1


def test_a_send_goes_through_the_recipient_policy(tmp_path: Path) -> None:
    d = _deployment(tmp_path, 'RecipientPolicy = { Allow = ["friend@example.net"] }')
    draft_id = kept(d, to="friend@example.net")
    d.update_draft().update(
        AGENT,
        draft_id,
        DraftRequest(
            account="home",
            subject="Plans",
            to=["stranger@example.com"],
            plain_text_body="The plan is ready.\n",
        ),
    )
    (shown,) = waiting(d).listing()
    with pytest.raises(Refusal) as refused:
        waiting(d).send(draft_id, shown.binding)
    assert refused.value.code == Code.RECIPIENT_NOT_ADMITTED
    assert d.memory.outbox.listing(10) == []
    assert len(waiting(d).listing()) == 1


def test_edit_saves_a_new_revision_and_the_draft_still_waits(d: FakeDeployment) -> None:
    draft_id = kept(d)
    (shown,) = waiting(d).listing()
    edit = Edit(
        to=("friend@example.net",),
        cc=(),
        bcc=("me@example.org",),
        subject="Edited",
        body="New words.\n",
    )
    standing = waiting(d).edit(draft_id, shown.binding, edit)
    assert standing.revision == 2
    (now,) = waiting(d).listing()
    assert (now.shown.subject, now.shown.bcc) == ("Edited", ("me@example.org",))
    assert now.shown.body.strip() == "New words."
    with pytest.raises(DraftChanged):
        waiting(d).edit(draft_id, shown.binding, edit)


def test_delete_gives_the_draft_up_and_dismisses_its_alert(d: FakeDeployment) -> None:
    draft_id = kept(d)
    (shown,) = waiting(d).listing()
    waiting(d).delete(draft_id, shown.binding)
    draft = d.memory.drafts.find(shown.draft.draft_id)
    assert draft is not None
    assert draft.life is DraftLife.DELETED
    assert waiting(d).listing() == []
    with pytest.raises(Refusal) as refused:
        waiting(d).send(draft_id, shown.binding)
    assert refused.value.code == Code.DRAFT_NOT_HELD
    assert d.memory.outbox.listing(10) == []


def test_a_draft_no_alert_names_is_not_the_consoles_to_send(d: FakeDeployment) -> None:
    request = DraftRequest(
        account="home", subject="Plans", to=["friend@example.net"], plain_text_body="Mine.\n"
    )
    draft_id = str(d.save_draft().save(AGENT, request).draft_id)
    assert waiting(d).listing() == []
    with pytest.raises(Refusal) as refused:
        waiting(d).send(draft_id, "0" * 64)
    assert refused.value.code == Code.DRAFT_NOT_HELD
    assert d.memory.outbox.listing(10) == []


def _agent_writes_first(d: FakeDeployment, monkeypatch: pytest.MonkeyPatch, draft_id: str) -> None:
    """An agent's update_draft lands between the owner's check of the binding and the
    owner's write: just before the store's next revise or mark_deleted."""
    store = d.memory.drafts
    revise, mark_deleted = store.revise, store.mark_deleted
    armed = [True]

    def agent_edit() -> None:
        if armed.pop() if armed else False:
            d.update_draft().update(
                AGENT,
                draft_id,
                DraftRequest(
                    account="home",
                    subject="Edited",
                    to=["stranger@example.com"],
                    plain_text_body="Other words.\n",
                ),
            )

    def revising(*args: Any, **kwargs: Any) -> Any:
        agent_edit()
        return revise(*args, **kwargs)

    def deleting(*args: Any, **kwargs: Any) -> Any:
        agent_edit()
        return mark_deleted(*args, **kwargs)

    monkeypatch.setattr(store, "revise", revising)
    monkeypatch.setattr(store, "mark_deleted", deleting)


def test_an_edit_racing_an_agents_update_is_refused_and_keeps_the_agents_version(
    d: FakeDeployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    draft_id = kept(d)
    (shown,) = waiting(d).listing()
    _agent_writes_first(d, monkeypatch, draft_id)
    edit = Edit(to=("friend@example.net",), cc=(), bcc=(), subject="Mine", body="Mine.\n")
    with pytest.raises(DraftChanged):
        waiting(d).edit(draft_id, shown.binding, edit)
    (now,) = waiting(d).listing()
    assert (now.draft.revision, now.shown.subject) == (2, "Edited")


def test_a_delete_racing_an_agents_update_is_refused_and_the_draft_still_waits(
    d: FakeDeployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    draft_id = kept(d)
    (shown,) = waiting(d).listing()
    _agent_writes_first(d, monkeypatch, draft_id)
    with pytest.raises(DraftChanged):
        waiting(d).delete(draft_id, shown.binding)
    (now,) = waiting(d).listing()
    assert (now.draft.life, now.draft.revision, now.shown.subject) == (
        DraftLife.LIVE,
        2,
        "Edited",
    )
