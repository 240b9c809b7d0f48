"""Every word of the console in Czech and Slovak: the pages rendered with content in each
language, and nothing a person reads left in English that is not the same in every language
(names, codes, dates, addresses)."""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections.abc import Iterator
from datetime import timedelta
from importlib import resources
from pathlib import Path

import lxml.html
import pytest
from starlette.testclient import TestClient

import log_audit
from mailfathom.adapters.local.sample_mail import _PEOPLE as SAMPLE_PEOPLE
from mailfathom.adapters.sql.folder_creations import SqlFolderCreations
from mailfathom.adapters.sql.mutations import SqlMutationStore
from mailfathom.adapters.sql.outbox import SqlOutbox
from mailfathom.app.confirmation.wording import Language
from mailfathom.app.flags import explanations as change_explanations
from mailfathom.app.flags.set_mail_flags import FlagChangeRequest
from mailfathom.app.organize.organize_email import OrganizeRequest
from mailfathom.app.sending import explanations as send_explanations
from mailfathom.app.sending.ports import AttemptResult, NewOutgoing
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, Permission, ToolCategory
from mailfathom.domain.api_keys import MOST_KEYS_PER_CALLER
from mailfathom.domain.codes import DeliveryCode
from mailfathom.domain.config import McpEndpointConfig
from mailfathom.domain.mutations import (
    CREATION_FAILURES,
    MutationFailure,
    MutationKind,
    MutationRecord,
    MutationState,
)
from mailfathom.domain.outgoing import AddressField, OutgoingKind, Recipient, Stage
from mailfathom.domain.passkeys import MOST_PASSKEYS
from mailfathom.domain.request_bounds import FORM_OCTETS
from mailfathom.domain.unseen import marked
from mailfathom.entrypoints.console.again import Again
from mailfathom.entrypoints.console.pages import build_console_app
from mailfathom.entrypoints.console.record_wording import WORDINGS as RECORD_WORDINGS
from mailfathom.entrypoints.console.serving import console_use_cases
from sync.helpers import stored_rows

from .conftest import (
    HOSTILE_NAME,
    HOSTILE_NAME_SHOWN,
    ORIGIN,
    PASSWORD,
    Clock,
    Console,
    console_config,
)
from .english_left import READ_ATTRIBUTES, english_left
from .test_caller_pages import ENTRIES, HIDDEN_SUBJECT, fill_keys
from .test_drafts_page import FRIEND
from .test_drafts_page import signed_in as drafts_signed_in
from .test_passkey_pages import HOSTILE_LABEL, LOOPBACK, NAMED, Browser, _enrolled, fill_passkeys

AGENT = Caller(ALL_PERMISSIONS, "agent")
ADDRESSES = ("ann@example.net", "bob@example.net", "eve@example.net")
# The folders agents asked for, each dead-lettered under one of the codes a creation ends
# with: the first under the Inbox, the rest at the top level.
CREATED = {code: f"Folder{int(code)}" for code in CREATION_FAILURES}
# The data the pages show as it is, in every language.
DATA = {"home", HOSTILE_NAME, HOSTILE_NAME_SHOWN, "INBOX", "agent", *ADDRESSES}


@pytest.fixture
def owned(tmp_path: Path) -> Iterator[Console]:
    log_audit.register(PASSWORD)
    clock = Clock()
    with Services.open(console_config(tmp_path), clock=clock) as services:
        services.console_access().set_password(PASSWORD)
        uses = console_use_cases(services)
        with TestClient(build_console_app(uses, "127.0.0.1"), base_url=ORIGIN) as client:
            console = Console(client, services, clock)
            assert console.sign_in().status_code == 303
            yield console


def _every_ended_send(console: Console) -> None:
    """One send refused under each delivery failure code, the kinds taken in turn, and one
    still held, so the outbox shows every kind, every code and a cancel button."""
    outbox = SqlOutbox(console.services.engine)
    now = console.clock()
    kinds = list(OutgoingKind)
    recipients = tuple(
        Recipient(field, address) for field, address in zip(AddressField, ADDRESSES, strict=True)
    )
    for position, code in enumerate([*DeliveryCode, None]):
        key = uuid.uuid4().hex
        after = now + timedelta(hours=2) if code is None else None
        outbox.record(
            NewOutgoing(
                outgoing_id=uuid.uuid4(),
                account_id="home",
                idempotency_key=key,
                caller="agent",
                kind=kinds[position % len(kinds)],
                queued_at=now,
                not_before=after or now,
                message_id=f"<{key}@example.org>",
                envelope_from="me@example.org",
                mime=b"Subject: x\r\n\r\nbody\r\n",
                recipients=recipients,
                send_after=after,
            ),
            [],
        )
    for claimed, code in zip(outbox.claim("w", now, 60, 100), DeliveryCode, strict=True):
        outbox.finish(claimed.seq, "w", AttemptResult(Stage.FAILED, (), int(code)), now)


def _every_dead_letter(console: Console) -> None:
    """A change of each kind the agents ask for most, dead-lettered under every failure code."""
    services = console.services
    services.deliver_sample_mail("home", 3)
    services.account_synchronizer().run_once(services.config.accounts[0])
    records: list[MutationRecord] = []
    for row in stored_rows(services, "home"):
        email = str(row.stored_email_id)
        for request in (
            FlagChangeRequest(email, seen=True),
            FlagChangeRequest(email, flagged=False),
            FlagChangeRequest(email, keyword_change="add", keywords=["$label1"]),
        ):
            records.extend(services.flags().record(AGENT, request).records)
    store = SqlMutationStore(services.engine)
    now = console.clock()
    store.begin([r.record_id for r in records], now)
    for record, code in zip(records, MutationFailure, strict=False):
        store.settle([record.record_id], MutationState.DEAD_LETTERED, int(code), now)
    creations = SqlFolderCreations(services.engine)
    for n, (code, name) in enumerate(CREATED.items()):
        parent = "INBOX" if n == 0 else None
        asked = OrganizeRequest(
            "createFolder", account="home", name=name, parent=parent, request_id=name
        )
        folder = services.organizer().organize(AGENT, asked).folder
        assert folder is not None
        creations.begin(folder.record.creation_id, name, now)
        creations.settle(folder.record.creation_id, MutationState.DEAD_LETTERED, int(code), now)


def _left(console: Console, path: str, language: str) -> set[str]:
    english = console.client.get(f"{path}?lang=en")
    other = console.client.get(f"{path}?lang={language}")
    assert (english.status_code, other.status_code) == (200, 200)
    return english_left(english.text, other.text, DATA)


@pytest.mark.parametrize("language", ["cs", "sk"])
def test_the_outbox_names_kinds_and_failures_in_the_page_language(
    owned: Console, language: str
) -> None:
    _every_ended_send(owned)
    assert _left(owned, "/outbox", language) == set()


@pytest.mark.parametrize("language", ["cs", "sk"])
def test_mailbox_changes_name_kinds_and_reasons_in_the_page_language(
    owned: Console, language: str
) -> None:
    _every_dead_letter(owned)
    assert _left(owned, "/mutations", language) == set()


def test_every_kind_field_and_failure_has_its_words_in_every_language() -> None:
    english = RECORD_WORDINGS[Language.EN]
    assert english.send_failures == send_explanations.FAILURE_EXPLANATIONS
    assert english.change_failures == change_explanations.FAILURE_EXPLANATIONS
    for code in CREATION_FAILURES:
        assert english.creation_failure(code) == change_explanations.explain(code, creation=True)
    for language, words in RECORD_WORDINGS.items():
        assert set(words.send_kinds) == set(OutgoingKind)
        assert set(words.change_kinds) == set(MutationKind)
        assert set(words.address_fields) == set(AddressField)
        assert set(words.send_failures) == set(DeliveryCode)
        assert set(words.change_failures) == set(MutationFailure)
        assert words.send_failure(99999) == words.change_failure(99) == words.undescribed
        assert words.creation_failure(99) == words.undescribed
        # A creation's own sentences for the codes a message's would not fit.
        assert set(words.creation_failures) == set(change_explanations.CREATION_EXPLANATIONS)
        for code in words.creation_failures:
            assert words.creation_failure(code) != words.change_failure(code)
        if language is not Language.EN:
            assert words.folder_creation != english.folder_creation
            for ours, theirs in (
                (words.send_failures, english.send_failures),
                (words.change_failures, english.change_failures),
                (words.creation_failures, english.creation_failures),
                (words.change_kinds, english.change_kinds),
                (words.send_kinds, english.send_kinds),
            ):
                assert not set(ours.values()) & set(theirs.values())


@pytest.fixture
def furnished(tmp_path: Path) -> Iterator[Console]:
    """A console with something on every page: callers and their calls, ended and held
    sends, dead-lettered changes, synchronized mail and a contact."""
    log_audit.register(PASSWORD, HIDDEN_SUBJECT, *ADDRESSES)
    clock = Clock()
    config = dataclasses.replace(console_config(tmp_path), mcp=McpEndpointConfig(callers=ENTRIES))
    with Services.open(config, clock=clock) as services:
        services.console_access().set_password(PASSWORD)
        uses = console_use_cases(services)
        with TestClient(build_console_app(uses, "127.0.0.1"), base_url=ORIGIN) as client:
            console = Console(client, services, clock)
            _every_ended_send(console)
            _every_dead_letter(console)
            calls = services.caller_access().calls
            for outcome, code in (("success", None), ("refused", 51017), ("unknownTool", None)):
                calls.record("search_emails", "agent", outcome, code, 0.25)
            written = services.contacts().creation.create(
                AGENT, "Ann", [ADDRESSES[0]], ADDRESSES[0]
            )
            assert written.contact is not None
            console.contact = written.contact.contact_id  # type: ignore[attr-defined]
            yield console


PAGES = (
    "/",
    "/outbox",
    "/outbox?done=now",
    "/mutations",
    "/mutations?done=now",
    "/mutations?done=alias-claimed",
    "/mutations?done=not-found",
    "/health",
    "/contacts",
    "/callers",
    "/calls",
    "/drafts",
    "/passkeys",
    "/no/such/page",
)
# What the pages show as it is in every language: the people of the sample mail, caller
# names, and the identifiers the configuration and the tools are written in.
SHOWN_AS_IS = {
    *DATA,
    "Ann",
    "(home)",
    HIDDEN_SUBJECT,
    *(entry.name for entry in ENTRIES),
    *(name for person in SAMPLE_PEOPLE for name in person),
    *(permission.value for permission in Permission),
    ", ".join(sorted(category.value for category in ToolCategory)),
    "search_emails",
    "250.0 ms",
    # The same word in Czech.
    "Role",
}


def _in_both(client: TestClient, path: str, language: str, post: bool = False) -> set[str]:
    """What `path` (a GET, or a POST with no form) leaves English in `language`."""
    join = "&" if "?" in path else "?"
    ask = client.post if post else client.get
    english = ask(f"{path}{join}lang=en")
    other = ask(f"{path}{join}lang={language}")
    assert english.status_code == other.status_code
    return english_left(english.text, other.text, SHOWN_AS_IS)


@pytest.mark.parametrize("language", ["cs", "sk"])
def test_no_page_or_refusal_keeps_english_words_in_czech_or_slovak(
    furnished: Console, language: str
) -> None:
    client = furnished.client
    left = {
        path: _in_both(client, path, language, post)
        for path, post in (("/login", False), ("/no/such/page", False), ("/logout", True))
    }
    too_large = {
        lang: client.post(f"/login?lang={lang}", content=b"x" * (FORM_OCTETS + 1))
        for lang in ("en", language)
    }
    assert [answer.status_code for answer in too_large.values()] == [413, 413]
    left["413"] = english_left(too_large["en"].text, too_large[language].text)
    assert furnished.sign_in().status_code == 303
    contact = furnished.contact  # type: ignore[attr-defined]
    for path in (*PAGES, f"/contacts/{contact}/erase"):
        left[path] = _in_both(client, path, language)
    for path in ("/", "/logout", f"/outbox/{uuid.uuid4()}/cancel"):
        left[f"POST {path}"] = _in_both(client, path, language, post=True)
    assert {path: words for path, words in left.items() if words} == {}


def _key_shown(client: TestClient, language: str) -> str:
    """The page showing a new key once, made by the agent entry's form in `language`."""
    tree = lxml.html.fromstring(client.get(f"/callers?lang={language}").text)
    (form,) = tree.xpath("//section[@id='caller-agent']//form[@class='create-key']")
    fields = {i.get("name"): i.get("value") for i in form.xpath(".//input")}
    answer = client.post(form.get("action"), data=fields, headers={"Origin": ORIGIN})
    assert answer.status_code == 200
    return answer.text


@pytest.mark.parametrize("language", ["cs", "sk"])
def test_a_new_key_and_the_keys_listed_are_shown_in_czech_or_slovak(
    furnished: Console, language: str
) -> None:
    assert furnished.sign_in().status_code == 303
    english = _key_shown(furnished.client, "en")
    other = _key_shown(furnished.client, language)
    shown = set(lxml.html.fromstring(other).xpath("//input[@id='new-key']/@value"))
    log_audit.register(*shown)
    assert english_left(english, other, SHOWN_AS_IS) == set()
    assert _in_both(furnished.client, "/callers", language) == set()


@pytest.mark.parametrize("language", ["cs", "sk"])
def test_an_entry_holding_its_bound_of_keys_is_shown_in_czech_or_slovak(
    furnished: Console, language: str
) -> None:
    assert furnished.sign_in().status_code == 303
    fill_keys(furnished, "agent", MOST_KEYS_PER_CALLER)
    page = lxml.html.fromstring(furnished.client.get("/callers?done=too-many").text)
    assert page.xpath('//*[@id="notice"]')
    assert page.xpath('//*[@id="caller-agent-full"]')
    assert _in_both(furnished.client, "/callers?done=too-many", language) == set()


@pytest.mark.parametrize("language", ["cs", "sk"])
def test_a_waiting_draft_and_its_edit_form_are_shown_in_czech_or_slovak(
    tmp_path: Path, language: str
) -> None:
    with drafts_signed_in(tmp_path) as owner:
        draft_id = owner.keep()
        # "Text" is the body's label in Czech and Slovak as well.
        data = {"Home", "home", "me@example.org", FRIEND, "Plans", "The plan is ready.", "Text"}
        for path in ("/drafts", f"/drafts/{draft_id}/edit"):
            english = owner.client.get(f"{path}?lang=en").text
            other = owner.client.get(f"{path}?lang={language}").text
            assert english_left(english, other, data) == set(), path


@pytest.mark.parametrize("language", ["cs", "sk"])
def test_the_passkey_pages_are_shown_in_czech_or_slovak(tmp_path: Path, language: str) -> None:
    log_audit.register(PASSWORD, HOSTILE_LABEL)
    with Services.open(console_config(tmp_path), clock=Clock()) as services:
        _passkey_pages_compared(services, language)


def _passkey_pages_compared(services: Services, language: str) -> None:
    signed_out = Browser(services, NAMED, LOOPBACK)
    assert (
        english_left(
            signed_out.client.get("/login?lang=en").text,
            signed_out.client.get(f"/login?lang={language}").text,
        )
        == set()
    )
    owner = _enrolled(services)
    assert (
        english_left(
            owner.client.get("/passkeys?lang=en").text,
            owner.client.get(f"/passkeys?lang={language}").text,
            {marked(HOSTILE_LABEL)},
        )
        == set()
    )
    fill_passkeys(services, MOST_PASSKEYS - 1)
    english, other = (
        owner.page(f"/passkeys?lang={lang}&done=too_many") for lang in ("en", language)
    )
    for page in (english, other):
        assert page.xpath('//*[@id="notice"]')
        assert page.xpath('//*[@id="passkey-full"]')
    assert (
        english_left(
            lxml.html.tostring(english).decode(),
            lxml.html.tostring(other).decode(),
            {marked(HOSTILE_LABEL), *(f"Device {n}" for n in range(MOST_PASSKEYS))},
        )
        == set()
    )
    for why in Again:
        english = owner.page(f"/login?lang=en&again={why.value}")
        other = owner.page(f"/login?lang={language}&again={why.value}")
        notices = [page.xpath('string(//*[@id="notice"])') for page in (english, other)]
        assert all(notices), why
        assert notices[0] != notices[1], why
        assert (
            english_left(lxml.html.tostring(english).decode(), lxml.html.tostring(other).decode())
            == set()
        ), why


def test_every_text_the_scripts_write_is_read_by_the_check() -> None:
    """The scripts write into the page only words the server put in `data-` attributes;
    each such attribute is among those `english_left` reads, the rest are addresses and
    modes, never words."""
    not_words = {
        "data-live-page",
        "data-live-region",
        "data-live-item",
        "data-options",
        "data-passkey",
    }
    scripts = resources.files("mailfathom.entrypoints.console") / "static"
    read: set[str] = set()
    for script in scripts.iterdir():
        if script.name.endswith(".js"):
            text = script.read_text(encoding="utf-8")
            read |= set(re.findall(r'getAttribute\("(data-[a-z-]+)"\)', text))
            read |= {
                "data-" + re.sub(r"[A-Z]", lambda m: "-" + m.group().lower(), name)
                for name in re.findall(r"dataset\.([a-zA-Z]+)", text)
            }
    assert read - not_words
    assert read - not_words <= set(READ_ATTRIBUTES)
