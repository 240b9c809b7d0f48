"""The engine over garbage and over the corpora's messages mutated at random.

`verify` must answer every input, and answer it by design: the catch-all at the engine's edge
(see `test_unexpected_failures`) is for what nobody planned, so it must never be what answers
a malformed message (no "sender verification failed" line). Garbage, with no key published,
is never anything but not established; a mutated message, with the corpora's keys published,
may pass or fail, but only through a signature that did.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from authentication.helpers import NO_TRUST, engine
from mailfathom.adapters.authentication.engine import Examination, SenderVerificationEngine
from mailfathom.adapters.authentication.local_dkim import SignatureOutcome
from mailfathom.domain.sender_verdict import AuthorAuthentication
from servers.dns import DnsServer

FIELD_NAMES = (
    "From",
    "DKIM-Signature",
    "ARC-Seal",
    "ARC-Message-Signature",
    "ARC-Authentication-Results",
    "Authentication-Results",
    "Subject",
)
KEYED = (b"d=football.example.com", b"d=test.ex")
"""Messages signed by a domain whose key `keyed_server` publishes: half the examples start
from one, so that most mutations meet a signature check and not an absent signature."""
SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def corpus_messages(corpora: Path) -> list[bytes]:
    folder = corpora / "dkim"
    paths = [
        *sorted((folder / "dkimpy").glob("*.msg")),
        *sorted((folder / "dkimpy").glob("*.message*")),
        folder / "dkimpy" / "message.mbox",
        *sorted((folder / "mailauth" / "test" / "fixtures").glob("*.eml")),
        folder / "mailauth" / "test" / "dkim" / "ec" / "fixtures" / "signed.eml",
        *sorted((folder / "flanker-dkim-canon").glob("email.*")),
    ]
    return [path.read_bytes() for path in paths]


@pytest.fixture(scope="module")
def keyed_server(corpora: Path) -> Iterator[DnsServer]:
    """The corpora's keys for the messages they ship signed, so a mutation can reach the
    signature check itself rather than stopping at a key that is not there."""
    server = DnsServer().start()
    dkimpy = corpora / "dkim" / "dkimpy"
    server.publish(
        "test._domainkey.football.example.com", (dkimpy / "test.txt").read_text().strip()
    )
    server.publish(
        "brisbane._domainkey.football.example.com",
        "v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=",
    )
    server.publish("sed._domainkey.test.ex", (dkimpy / "eximtest.dns").read_text().strip())
    try:
        yield server
    finally:
        server.stop()


def _examine(verifier: SenderVerificationEngine, raw: bytes) -> tuple[Examination, list[str]]:
    with structlog.testing.capture_logs() as logged:
        examination = verifier.examine(raw, headers_only=False, trusted_authserv_ids=NO_TRUST)
    return examination, [str(entry.get("event")) for entry in logged]


_header_field = st.tuples(
    st.sampled_from(FIELD_NAMES),
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=200),
).map(lambda field: f"{field[0]}: {field[1]}\r\n".encode())
_header_like = st.tuples(
    st.lists(_header_field, max_size=8), st.binary(max_size=200), st.sampled_from(["\r\n", ""])
).map(lambda parts: b"".join(parts[0]) + parts[2].encode() + parts[1])
_garbage = st.one_of(st.binary(max_size=2048), _header_like)


@SETTINGS
@given(raw=_garbage)
def test_garbage_is_never_anything_but_not_established(dns_server: DnsServer, raw: bytes) -> None:
    examination, events = _examine(engine(dns_server, lookup_timeout=0.5, budget=2.0), raw)

    assert examination.verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED
    assert "sender verification failed" not in events


def _mutate(raw: bytes, edits: list[tuple[float, int, bytes]]) -> bytes:
    """Each edit replaces `length` bytes at a relative position with `insert`."""
    for position, length, insert in edits:
        at = int(position * len(raw))
        raw = raw[:at] + insert + raw[at + length :]
    return raw


_edit = st.tuples(
    st.floats(min_value=0.0, max_value=1.0),
    st.integers(min_value=0, max_value=16),
    st.one_of(
        st.binary(max_size=16),
        st.sampled_from([b"\r\n", b"\n", b"\r", b" ", b"\t", b":", b";", b"=", b"\r\n\r\n"]),
    ),
)


@SETTINGS
@given(data=st.data())
def test_a_mutated_corpus_message_is_answered_by_design(
    corpus_messages: list[bytes], keyed_server: DnsServer, data: st.DataObject
) -> None:
    keyed = [raw for raw in corpus_messages if any(name in raw for name in KEYED)]
    original = data.draw(st.one_of(st.sampled_from(keyed), st.sampled_from(corpus_messages)))
    mutated = _mutate(original, data.draw(st.lists(_edit, min_size=1, max_size=4)))

    examination, events = _examine(engine(keyed_server, lookup_timeout=0.5), mutated)

    assert "sender verification failed" not in events
    outcomes = {check.outcome for check in examination.signatures}
    conclusion = examination.verdict.author_authentication
    if conclusion is AuthorAuthentication.AUTHENTICATED:
        assert SignatureOutcome.PASS in outcomes
    if conclusion is AuthorAuthentication.FAILED:
        assert SignatureOutcome.FAIL in outcomes
