"""ARC chains of the shared corpora, validated through the engine with keys from a DNS server.

The ARC test suite's 171 validation scenarios each state the chain validation status a
validator must reach; its records are published on the loopback DNS server. The suite's
empty status is a chain a seal had already recorded as failed (cv=fail): `ArcChain.ENDED`.
mailauth's five ARC messages were sealed by real providers (google.com's arc-20160816,
zonevs.eu's and srs3.zonevs.eu's oct2016, ekiri.ee's default) whose keys the corpus does not
carry: mailauth's fixture folder holds DNS records only for football.example.com
(`dkim/ec/fixtures/dns.json`, shown in `test_mailauth_corpus`) and its own test key pairs, so
the outcome the messages' names state cannot be reproduced offline. What is shown instead:
with those keys' lookups failing (SERVFAIL) the chain and the author are not established,
never failed; and the receiving server's own report inside each message decides the verdict
when its id is trusted.
The suite's signing scenarios test a sealer, which this engine is not, and the SPF suite
shipped beside mailauth's messages is not applicable: no SPF check is made here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from authentication.helpers import NO_TRUST, engine
from mailfathom.adapters.authentication.arc import ArcChain
from mailfathom.domain.sender_verdict import AuthorAuthentication, VerdictSource
from servers.dns import DnsServer

_STATUS = {"pass": ArcChain.PASS, "fail": ArcChain.FAIL, "none": ArcChain.NONE, "": ArcChain.ENDED}


def _scenarios(corpora: Path) -> list[dict[str, Any]]:
    path = corpora / "dkim" / "arc-test-suite" / "tests" / "arc-draft-validation-tests.yml"
    with path.open(encoding="utf-8") as handle:
        return [document for document in yaml.safe_load_all(handle) if document]


def test_every_arc_validation_scenario_reaches_its_expected_chain_status(
    corpora: Path, dns_server: DnsServer
) -> None:
    checked = 0
    mismatches: list[str] = []
    for scenario in _scenarios(corpora):
        records: dict[str, str] = scenario.get("txt-records") or {}
        for name, record in records.items():
            dns_server.publish(name, record)
        verifier = engine(dns_server)
        for name, test in scenario["tests"].items():
            expected = _STATUS[str(test["cv"] or "").strip().lower()]
            found = verifier.examine(
                test["message"].encode(), headers_only=False, trusted_authserv_ids=NO_TRUST
            ).arc
            checked += 1
            if found is not expected:
                mismatches.append(f"{name}: expected {expected.value}, found {found.value}")
        for name in records:
            dns_server.withdraw(name)
    assert mismatches == []
    assert checked == 171


MAILAUTH = ["arc-pass.eml", "arc-pass2.eml", "arc-fail.eml", "arc-fail2.eml", "arc-fail3.eml"]


@pytest.mark.parametrize("name", MAILAUTH)
def test_a_real_arc_chain_whose_keys_cannot_be_had_is_not_established(
    corpora: Path, dns_server: DnsServer, name: str
) -> None:
    raw = (corpora / "dkim" / "mailauth" / "test" / "fixtures" / name).read_bytes()
    for key in (
        "arc-20160816._domainkey.google.com",
        "oct2016._domainkey.zonevs.eu",
        "oct2016._domainkey.srs3.zonevs.eu",
        "default._domainkey.ekiri.ee",
    ):
        dns_server.fail(key)

    examination = engine(dns_server).examine(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)

    assert examination.arc is ArcChain.NOT_ESTABLISHED
    assert examination.verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert examination.verdict.verdict_source is VerdictSource.LOCAL_VERIFICATION


@pytest.mark.parametrize(
    ("name", "expected", "domain"),
    [
        ("arc-pass.eml", AuthorAuthentication.AUTHENTICATED, "EKIRI.EE"),
        ("arc-fail3.eml", AuthorAuthentication.AUTHENTICATED, "EKIRI.EE"),
        ("arc-pass2.eml", AuthorAuthentication.FAILED, "ZONE.EE"),
        ("arc-fail.eml", AuthorAuthentication.FAILED, "ZONE.EE"),
        ("arc-fail2.eml", AuthorAuthentication.FAILED, "ZONE.EE"),
    ],
)
def test_the_receiving_servers_report_in_a_real_message_decides_when_trusted(
    corpora: Path, dns_server: DnsServer, name: str, expected: AuthorAuthentication, domain: str
) -> None:
    """A forwarded message whose author's DMARC failed at the receiving server fails, however
    its ARC chain reads: ARC does not authenticate the author."""
    raw = (corpora / "dkim" / "mailauth" / "test" / "fixtures" / name).read_bytes()

    verdict = engine(dns_server).verify(
        raw, headers_only=False, trusted_authserv_ids=frozenset({"mx.google.com"})
    )

    assert verdict.author_authentication is expected
    assert verdict.verdict_source is VerdictSource.RECEIVING_SERVER
    assert verdict.displayed_author_domain == domain
    assert dns_server.questions() == 0
