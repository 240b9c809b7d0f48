"""The console's synchronization health page in process over an SQLite deployment of a local
account: freshness after a pass (and how long ago, as the clock moves), the last failure's
code per account and folder, the repairs waiting with the command that checks the copies, an
unfinished reverification, and an account waiting for access granted again with the
command that grants it; in English, Czech and Slovak. The page offers no form but sign-out."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import lxml.html
import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

import log_audit
from mailfathom.adapters.sql.pending_repairs import SqlPendingRepairs
from mailfathom.adapters.sql.schema import messages
from mailfathom.adapters.sql.sync_failures import SqlSyncFailures
from mailfathom.adapters.sql.trust_records import SqlTrustRecords
from mailfathom.app.console.sync_health import SyncHealth
from mailfathom.app.maintenance.store_overview import StoreOverview
from mailfathom.bootstrap import Services
from mailfathom.domain.account_health import (
    AccountHealth,
    AccountWarning,
    HealthState,
    WarningState,
)
from mailfathom.domain.sync_failures import FOLDER_NOT_ON_SERVER
from mailfathom.entrypoints.console.health_pages import shown_time
from mailfathom.entrypoints.console.pages import build_console_app
from mailfathom.entrypoints.console.serving import console_use_cases

from .conftest import (
    HOSTILE_NAME,
    HOSTILE_NAME_SHOWN,
    ORIGIN,
    PASSWORD,
    Clock,
    Console,
    console_config,
)

HELD: list[AccountHealth] = []
WARNED: list[AccountWarning] = []


@pytest.fixture
def owned(tmp_path: Path) -> Iterator[Console]:
    """The console over a deployment whose account health the test sets in `HELD` and
    `WARNED` (a local account has no grant or login for a server to refuse)."""
    log_audit.register(PASSWORD, HOSTILE_NAME)
    HELD.clear()
    WARNED.clear()
    clock = Clock()
    with Services.open(console_config(tmp_path), clock=clock) as services:
        services.console_access().set_password(PASSWORD)

        def health() -> SyncHealth:
            return SyncHealth(
                services.config.accounts,
                StoreOverview(services.overview),
                lambda: list(HELD),
                lambda: list(WARNED),
                SqlSyncFailures(services.engine),
                SqlPendingRepairs(services.engine),
                clock=clock,
            )

        uses = replace(console_use_cases(services), health=health)
        with TestClient(build_console_app(uses, "127.0.0.1"), base_url=ORIGIN) as client:
            console = Console(client, services, clock)
            assert console.sign_in().status_code == 303
            yield console


def _tree(console: Console, path: str = "/health") -> lxml.html.HtmlElement:
    page = console.client.get(path)
    assert page.status_code == 200
    return lxml.html.fromstring(page.text)


def _synchronized(console: Console) -> None:
    services = console.services
    services.deliver_sample_mail("home", 3)
    (account,) = services.config.accounts
    services.account_synchronizer().run_once(account)


def _cell(tree: lxml.html.HtmlElement, css: str) -> str:
    (cell,) = tree.xpath(
        f'//section[@id="account-home"]//tr[@data-alias="INBOX"]/td[@class="{css}"]'
    )
    return " ".join(cell.text_content().split())


def test_a_synchronized_folder_is_shown_fresh_and_ages(owned: Console) -> None:
    before = _tree(owned)
    assert _cell(before, "progress") == "never"
    _synchronized(owned)
    passed = shown_time(owned.clock())
    tree = _tree(owned)
    assert _cell(tree, "progress") == f"{passed} (0 s ago)"
    assert _cell(tree, "failure") == "none"
    assert _cell(tree, "repairs") == "none"
    (state,) = tree.xpath('//section[@id="account-home"]')
    assert state.get("data-state") == "healthy"
    # The display name is text, never markup.
    assert (
        tree.xpath('//section[@id="account-home"]/h2')[0]
        .text_content()
        .startswith(HOSTILE_NAME_SHOWN)
    )
    assert tree.xpath("//script") == []
    owned.clock.advance(5 * 60)
    assert _cell(_tree(owned), "progress") == f"{passed} (5 min ago)"
    owned.clock.advance(3 * 3600)
    assert _cell(_tree(owned), "progress") == f"{passed} (3 h ago)"
    # Only the sign-out form: the page decides nothing.
    assert [f.get("action") for f in tree.xpath("//form")] == ["/logout"]


def test_the_last_failure_codes_are_shown_per_account_and_folder(owned: Console) -> None:
    _synchronized(owned)
    failures = SqlSyncFailures(owned.services.engine)
    (inbox,) = [f for f in owned.services.overview.folders_of("home") if f.alias == "INBOX"]
    at = owned.clock()
    failures.failed("home", None, 31002, at)
    failures.failed("home", inbox.folder_id, FOLDER_NOT_ON_SERVER, at)
    tree = _tree(owned)
    stamp = shown_time(at)
    assert _cell(tree, "failure") == f"31006 the folder is not on the server at {stamp}"
    (account,) = tree.xpath('//section[@id="account-home"]//dd[@class="account-failure"]')
    assert " ".join(account.text_content().split()) == (
        f"31002 the server refused the login at {stamp}"
    )
    (account_config,) = owned.services.config.accounts
    owned.services.account_synchronizer().run_once(account_config)
    cleared = _tree(owned)
    assert _cell(cleared, "failure") == "none"
    assert (
        cleared.xpath('//section[@id="account-home"]//dd[@class="account-failure"]')[
            0
        ].text_content()
        == "none"
    )


def test_waiting_repairs_and_an_unfinished_reverification_show_their_commands(
    owned: Console,
) -> None:
    _synchronized(owned)
    (inbox,) = [f for f in owned.services.overview.folders_of("home") if f.alias == "INBOX"]
    with owned.services.engine.connect() as c:
        seqs = list(
            c.execute(
                sa.select(messages.c.seq).where(messages.c.folder_id == inbox.folder_id)
            ).scalars()
        )
    assert seqs
    owned.services.content_repair.request_repair("home", seqs[0], "content-unreadable")
    SqlTrustRecords(owned.services.engine).record("home", [], seqs[0], owned.clock())
    tree = _tree(owned)
    assert _cell(tree, "repairs") == "1 message(s) to fetch again"
    codes = [c.text_content() for c in tree.xpath('//section[@id="account-home"]//code')]
    assert codes == [
        "mailfathom mailbox verify --account home",
        "mailfathom mailbox reverify --account home",
    ]


def test_an_account_waiting_for_consent_is_listed_with_its_command(owned: Console) -> None:
    assert _tree(owned).get_element_by_id("none-needing-consent") is not None
    HELD.append(AccountHealth("home", HealthState.CONSENT_REQUIRED, 31003, owned.clock()))
    tree = _tree(owned)
    (item,) = tree.xpath('//ul[@id="needing-consent"]/li')
    assert item.xpath(".//code")[0].text_content() == "mailfathom account consent --account home"
    (state,) = tree.xpath('//section[@id="account-home"]')
    assert state.get("data-state") == "consent_required"
    assert tree.xpath('//section[@id="account-home"]//dd[@class="state"]')[0].text_content() == (
        "Needs access granted again"
    )


@pytest.mark.parametrize(
    ("lang", "label", "advice"),
    [
        ("en", "Refresh token not saved since", "Do not restart the process"),
        ("cs", "Obnovovací token není uložen od", "Do té doby nerestartujte proces"),
        ("sk", "Obnovovací token nie je uložený od", "Dovtedy nereštartujte proces"),
    ],
)
def test_a_refresh_token_not_saved_is_a_warning_on_an_account_still_synchronizing(
    owned: Console, lang: str, label: str, advice: str
) -> None:
    _synchronized(owned)
    assert _tree(owned).xpath("//p[@data-warning]") == []
    since = owned.clock()
    WARNED.append(AccountWarning("home", WarningState.REFRESH_TOKEN_UNSAVED, 31009, since))
    tree = _tree(owned, f"/health?lang={lang}")
    (section,) = tree.xpath('//section[@id="account-home"]')
    # Not held: the state stays, nothing waits for consent.
    assert section.get("data-state") == "healthy"
    assert tree.get_element_by_id("none-needing-consent") is not None
    (warning,) = section.xpath('.//p[@data-warning="refresh_token_unsaved"]')
    text = " ".join(warning.text_content().split())
    assert text.startswith(f"31009 {label} {shown_time(since)}: ")
    assert advice in text
    assert warning.xpath(".//time")[0].get("datetime") == since.isoformat()


@pytest.mark.parametrize(
    ("lang", "heading", "never", "consent"),
    [
        ("cs", "Stav synchronizace", "nikdy", "Účty, kterým je třeba znovu udělit přístup"),
        ("sk", "Stav synchronizácie", "nikdy", "Účty, ktorým treba znova udeliť prístup"),
    ],
)
def test_the_health_page_speaks_czech_and_slovak(
    owned: Console, lang: str, heading: str, never: str, consent: str
) -> None:
    tree = _tree(owned, f"/health?lang={lang}")
    assert tree.get("lang") == lang
    assert tree.xpath("//h1")[0].text_content() == heading
    assert _cell(tree, "progress") == never
    assert tree.get_element_by_id("consent").text_content() == consent
    _synchronized(owned)
    owned.clock.advance(120)
    word = "před" if lang == "cs" else "pred"
    assert _cell(_tree(owned, f"/health?lang={lang}"), "progress").endswith(f"({word} 2 min)")


def test_the_health_page_needs_a_signed_in_session(tmp_path: Path) -> None:
    with Services.open(console_config(tmp_path)) as services:
        app = build_console_app(console_use_cases(services), "127.0.0.1")
        with TestClient(app, base_url=ORIGIN) as client:
            answer = client.get("/health", follow_redirects=False)
            assert answer.status_code == 303
            assert answer.headers["location"] == "/login"
