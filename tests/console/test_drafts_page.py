"""The console's "Waiting for you" page in process (Starlette's test client) over an SQLite
and a PostgreSQL store: a draft kept for the owner shown as text, Send bound to what was
shown, a draft changed since refused with its new version shown, Edit and Delete, forms of
another origin or without the token refused, hostile mail text shown as text in the parsed
page, and the page's words in Czech and Slovak."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import lxml.html
import pytest
from starlette.testclient import TestClient

import log_audit
from console.conftest import ORIGIN, PASSWORD, Clock
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.confirmation.confirmed_sending import NobodyToAsk, Status
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller, ConfirmationMode
from mailfathom.entrypoints.console.pages import ConsoleUseCases, build_console_app

AGENT = Caller(ALL_PERMISSIONS, "agent", ConfirmationMode.ASK)
FRIEND = "friend@example.net"
# Elements a payload would make if the page rendered mail text as markup.
MADE_BY_PAYLOADS = "script|img|svg|iframe|object|embed|a|math|style|link|meta|form|input|video"


def drafts_config(root: Path, display_name: str = "Home", database_url: str | None = None) -> Path:
    path = root / "mailfathom.toml"
    database = "" if database_url is None else f"DatabaseUrl = {json.dumps(database_url)}"
    path.write_text(
        f"""
[Store]
DataDir = "{root / "data"}"
{database}

[MailDelivery]
HoldSeconds = 0

[Console]
Enabled = true

[[Accounts]]
Id = "home"
DisplayName = {json.dumps(display_name)}
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


class Owner:
    def __init__(self, client: TestClient, services: Services) -> None:
        self.client = client
        self.services = services

    def page(self, path: str = "/drafts") -> lxml.html.HtmlElement:
        answer = self.client.get(path)
        assert answer.status_code == 200
        return lxml.html.fromstring(answer.text)

    def post(self, path: str, **fields: str) -> lxml.html.HtmlElement:
        answer = self.client.post(
            path, data=fields, headers={"Origin": ORIGIN}, follow_redirects=False
        )
        assert answer.status_code == 200, answer.status_code
        return lxml.html.fromstring(answer.text)

    def keep(
        self, subject: str = "Plans", body: str = "The plan is ready.\n", to: str = FRIEND
    ) -> str:
        request = DraftRequest(account="home", subject=subject, to=[to], plain_text_body=body)
        drafting = self.services.drafting()
        draft_id = str(drafting.save.save(AGENT, request).draft_id)
        settled = drafting.send.settle(AGENT, draft_id, NobodyToAsk(), None)
        assert settled.status is Status.DRAFT
        return draft_id


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def owner(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Owner]:
    url = request.getfixturevalue("migrated_postgres_url") if request.param != "sqlite" else None
    with signed_in(tmp_path, database_url=url) as signed:
        yield signed


@contextmanager
def signed_in(
    root: Path, display_name: str = "Home", database_url: str | None = None
) -> Iterator[Owner]:
    """The console over a deployment whose account is named `display_name`, in SQLite or
    the PostgreSQL database at `database_url`, the owner signed in."""
    log_audit.register(PASSWORD)
    config = load_config(drafts_config(root, display_name, database_url))
    with Services.open(config, clock=Clock()) as services:
        services.console_access().set_password(PASSWORD)
        app = build_console_app(
            ConsoleUseCases(
                services.console_access,
                services.console_overview,
                drafts=services.console_drafts,
                account_names=services.account_names,
            ),
            "127.0.0.1",
        )
        with TestClient(app, base_url=ORIGIN) as client:
            token = lxml.html.fromstring(client.get("/login").text).xpath(
                '//input[@name="csrf"]/@value'
            )[0]
            signed = client.post(
                "/login",
                data={"csrf": token, "password": PASSWORD},
                headers={"Origin": ORIGIN},
                follow_redirects=False,
            )
            assert signed.status_code == 303
            yield Owner(client, services)


def form_fields(page: lxml.html.HtmlElement, action: str) -> dict[str, str]:
    (form,) = page.xpath(f'//form[starts-with(@action, "{action}")]')
    return {i.get("name"): i.get("value") for i in form.xpath(".//input[@type='hidden']")}


def outbox(owner: Owner) -> list[object]:
    return list(owner.services.outbox().listing(limit=10))


def test_a_kept_draft_is_shown_as_it_will_be_sent_and_send_queues_it(owner: Owner) -> None:
    draft_id = owner.keep(body="Line one\u200b.\nLine two.\n")
    page = owner.page()
    (section,) = page.xpath(f'//section[@id="draft-{draft_id}"]')
    assert FRIEND in section.text_content()
    (body,) = section.xpath('.//pre[@class="body"]')
    assert body.text_content() == "Line one⟦U+200B ZERO WIDTH SPACE⟧.\nLine two.\n"
    assert section.xpath('.//*[contains(@class, "unseen-note")]')
    # The edit form holds the text as it is (a field written out would be saved so), and
    # says that it holds characters that render as nothing.
    form = owner.page(f"/drafts/{draft_id}/edit")
    assert form.xpath('//textarea[@id="body"]')[0].text_content() == "Line one\u200b.\nLine two.\n"
    assert form.xpath('//*[contains(@class, "unseen-note")]')
    after = owner.post(f"/drafts/{draft_id}/send", **form_fields(page, f"/drafts/{draft_id}/send"))
    assert after.xpath('//*[@id="notice"]')
    assert after.xpath(f'//section[@id="draft-{draft_id}"]') == []
    assert len(outbox(owner)) == 1
    assert owner.services.alerts().listing() == []


def test_a_draft_edited_after_it_was_shown_is_refused_and_its_new_version_shown(
    owner: Owner,
) -> None:
    draft_id = owner.keep()
    page = owner.page()
    shown = form_fields(page, f"/drafts/{draft_id}/send")
    owner.services.drafting().update.update(
        AGENT,
        draft_id,
        DraftRequest(account="home", subject="Changed", to=[FRIEND], plain_text_body="Other.\n"),
    )
    after = owner.post(f"/drafts/{draft_id}/send", **shown)
    assert outbox(owner) == []
    (section,) = after.xpath(f'//section[@id="draft-{draft_id}"]')
    assert "Changed" in section.xpath(".//h2")[0].text_content()
    assert form_fields(after, f"/drafts/{draft_id}/send")["binding"] != shown["binding"]
    assert after.xpath('//*[@id="notice"]')


def test_edit_saves_a_new_revision_and_delete_removes_the_draft(owner: Owner) -> None:
    draft_id = owner.keep()
    form = owner.page(f"/drafts/{draft_id}/edit")
    assert form.xpath('//input[@id="to"]/@value') == [FRIEND]
    fields = form_fields(form, f"/drafts/{draft_id}/edit")
    after = owner.post(
        f"/drafts/{draft_id}/edit",
        **fields,
        to=FRIEND,
        cc="",
        bcc="me@example.org",
        subject="Edited here",
        body="New words.\r\n",
    )
    (section,) = after.xpath(f'//section[@id="draft-{draft_id}"]')
    assert section.xpath(".//h2")[0].text_content() == "Edited here"
    assert section.xpath('.//pre[@class="body"]')[0].text_content().strip() == "New words."
    assert "me@example.org" in section.text_content()
    assert section.xpath('.//*[contains(@class, "unseen-note")]') == []
    gone = owner.post(
        f"/drafts/{draft_id}/delete", **form_fields(after, f"/drafts/{draft_id}/delete")
    )
    assert gone.xpath('//*[@id="none-waiting"]')
    assert outbox(owner) == []


@pytest.mark.parametrize(
    ("headers", "with_token"),
    [({"Origin": "http://evil.example"}, True), ({"Origin": ORIGIN}, False), ({}, True)],
    ids=["other-origin", "no-token", "no-origin"],
)
def test_a_send_from_another_origin_or_without_the_token_is_refused(
    owner: Owner, headers: dict[str, str], with_token: bool
) -> None:
    draft_id = owner.keep()
    fields = form_fields(owner.page(), f"/drafts/{draft_id}/send")
    if not with_token:
        del fields["csrf"]
    answer = owner.client.post(
        f"/drafts/{draft_id}/send", data=fields, headers=headers, follow_redirects=False
    )
    assert answer.status_code == 403
    assert outbox(owner) == []


def xss_payloads(corpora: Path, count: int = 12) -> list[str]:
    """The first `count` OWASP filter-evasion payloads that carry markup."""
    entries = json.loads((corpora / "html/owasp/xss-filter-evasion-payloads.json").read_text())
    return [e["payload"] for e in entries if "<" in e["payload"]][:count]


def test_xss_payloads_in_subject_names_and_body_are_shown_as_text(
    tmp_path: Path, corpora: Path
) -> None:
    payloads = xss_payloads(corpora)
    name = " ".join(payloads[1].split())[:120]
    log_audit.register_all([*payloads, name])
    with signed_in(tmp_path, name) as owner:
        for payload in payloads:
            subject = " ".join(payload.split())[:200]
            owner.keep(subject=subject, body=payload + "\n")
        page = owner.page()
    assert all(name in s.text_content() for s in page.xpath('//p[@class="kept"]'))
    sections = page.xpath('//section[@class="waiting-draft"]')
    assert len(sections) == len(payloads)
    shown_text = page.xpath('//section//h2 | //div[@class="message"] | //p[@class="kept"]')
    assert len(shown_text) == 3 * len(payloads)
    for part in shown_text:
        made = [e.tag for e in part.iter() if e.tag in MADE_BY_PAYLOADS.split("|")]
        assert made == []
    bodies = {e.text_content() for e in page.xpath('//pre[@class="body"]')}
    for payload in payloads:
        assert any(payload in body for body in bodies)


WORDS = {
    "cs": (
        "Čeká na vás",
        ("Odeslat", "Upravit", "Smazat"),
        "Účet Home. Uschováno, protože: nebylo možné se nikoho zeptat, zda ji odeslat",
        "Zpráva byla zařazena k odeslání.",
        "Žádný koncept na vás nečeká.",
    ),
    "sk": (
        "Čaká na vás",
        ("Odoslať", "Upraviť", "Zmazať"),
        "Účet Home. Odložené, pretože: nebolo možné sa nikoho opýtať, či ju odoslať",
        "Správa bola zaradená na odoslanie.",
        "Žiadny koncept na vás nečaká.",
    ),
}


@pytest.mark.parametrize("lang", sorted(WORDS))
def test_the_page_speaks_czech_and_slovak_and_keeps_the_language_after_send(
    owner: Owner, lang: str
) -> None:
    heading, actions, kept, sent, none_waiting = WORDS[lang]
    draft_id = owner.keep()
    page = owner.page(f"/drafts?lang={lang}")
    assert page.xpath("/html/@lang") == [lang]
    assert page.xpath("//main/h1")[0].text_content() == heading
    (section,) = page.xpath(f'//section[@id="draft-{draft_id}"]')
    shown = [" ".join(e.text_content().split()) for e in section.xpath(".//button | .//a")]
    assert shown == list(actions)
    assert section.xpath('.//p[@class="kept"]')[0].text_content() == kept
    action = f"/drafts/{draft_id}/send?lang={lang}"
    assert page.xpath(f'//form[@action="{action}"]')
    after = owner.post(action, **form_fields(page, f"/drafts/{draft_id}/send"))
    assert after.xpath('//*[@id="notice"]')[0].text_content() == sent
    assert after.xpath('//*[@id="none-waiting"]')[0].text_content() == none_waiting
    assert after.xpath("/html/@lang") == [lang]
