"""Files on drafts, over Streamable HTTP with the official client, against the test Dovecot
(the owner's mailbox and drafts folder) and the test SMTP server: a stored PDF part and an
allowed file attached with save_draft, edited once, sent with send_draft and received as the
same octets; refused references leaving nothing written; the retry key reading the files."""

from __future__ import annotations

import email
import email.policy
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.drafts import SqlDraftStore
from mailfathom.adapters.sql.schema import draft_files, drafts, outgoing_emails
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mcp_tests.client import call, code, structured
from sending.helpers import SMTP_PASSWORD, SMTP_USER
from sending.served import KEYS, _callers, serve
from servers.dovecot import DovecotServer, ImapAccount
from servers.smtp import SmtpServer
from sync.helpers import RemoteMailbox

CORPUS_PDF = "messages/parser-fixtures/flanker/tests/fixtures/messages/attached-pdf.eml"
OWNER = "owner@example.org"
FRIEND = "friend@example.net"
SUBJECT = "The plans for the shed"
LOCAL_NAME = "Plán kůlny – rozměry.bin"
# Octets a text conversion would damage: bare CR and LF, NUL, every byte value.
LOCAL_BYTES = bytes(range(256)) * 40 + b"\r\n\n\r\x00end"
AGENT = KEYS["agent"]
# Bounds small enough to reach: one file at most 64 KiB, three files, 200 KiB composed.
BOUNDS = 'MaxAttachmentSize = "64KiB"\nMaxAttachmentCount = 3\nMaxMessageSize = "200KiB"'


@dataclass(frozen=True)
class FilesServed:
    url: str
    config_text: str
    root: Path
    allowed: Path
    outside: Path
    account: ImapAccount
    smtp: SmtpServer
    email_id: str
    part_id: str
    pdf: bytes

    def services(self, config_text: str | None = None) -> Services:
        path = self.root / f"in-process-{uuid.uuid4().hex[:6]}.toml"
        path.write_text(config_text or self.config_text, "utf-8")
        return Services.open(load_config(path))

    def drafts_folder(self) -> list[bytes]:
        """What an independent IMAP client sees in the owner's drafts folder."""
        remote = RemoteMailbox(self.account)
        try:
            typ, _ = remote.conn.select("Drafts", readonly=True)
            assert typ == "OK"
            typ, data = remote.conn.uid("FETCH", "1:*", "(BODY.PEEK[])")
            assert typ == "OK"
            return [entry[1] for entry in data if isinstance(entry, tuple)]
        finally:
            remote.close()

    def rows(self) -> tuple[int, int, int]:
        """Draft rows, draft file rows and outgoing rows the store holds."""
        with self.services() as services, services.engine.connect() as c:
            return tuple(  # type: ignore[return-value]
                int(c.execute(sa.select(sa.func.count()).select_from(t)).scalar_one())
                for t in (drafts, draft_files, outgoing_emails)
            )


def _config(root: Path, allowed: Path, account: ImapAccount, smtp: SmtpServer, env: str) -> str:
    return f"""
[Store]
DataDir = "{root / "data"}"

[Sync]
Enabled = false

[MailDelivery]
AttachmentRoots = ["{allowed}"]
{BOUNDS}

[[Accounts]]
Id = "work"
DisplayName = "Work"
Kind = "imap"

[Accounts.Imap]
Host = "{account.host}"
Port = {account.port}
Username = "{account.username}"
Tls = "none"
TimeoutSeconds = 10
Secret = {{ Env = "{env}" }}

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Sent"
Role = "Sent"

[[Accounts.Folders]]
Remote = "Drafts"
Role = "Drafts"

[Accounts.Delivery]
Enabled = true
Address = "{OWNER}"

[Accounts.Delivery.Smtp]
Host = "127.0.0.1"
Port = {smtp.port}
Tls = "starttls"
Username = "{SMTP_USER}"
Secret = {{ Env = "MAILFATHOM_TEST_SMTP_SECRET" }}
{_callers()}"""


def _corpus_pdf(corpora: Path) -> tuple[bytes, bytes]:
    raw = (corpora / CORPUS_PDF).read_bytes()
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    (pdf,) = [p for p in parsed.iter_attachments() if p.get_content_type() == "application/pdf"]
    octets = pdf.get_payload(decode=True)
    assert isinstance(octets, bytes)
    assert octets.startswith(b"%PDF-")
    return raw, octets


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, dovecot: DovecotServer, corpora: Path
) -> Iterator[FilesServed]:
    root = tmp_path_factory.mktemp("draft-files")
    allowed, outside = root / "allowed", root / "outside"
    allowed.mkdir()
    outside.mkdir()
    suffix = uuid.uuid4().hex[:12]
    account = dovecot.add_user(f"files-{suffix}", f"pw-{suffix}")
    raw, pdf = _corpus_pdf(corpora)
    remote = RemoteMailbox(account)
    try:
        for folder in ("Drafts", "Sent"):
            typ, _ = remote.conn.create(folder)
            assert typ == "OK"
        remote.append(raw)
    finally:
        remote.close()
    register_all([OWNER, FRIEND, SUBJECT, LOCAL_NAME, "test.pdf", str(root)])
    env = f"MF_DRAFT_FILES_SECRET_{suffix.upper()}"
    smtp = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(env, account.password)
        patch.setenv("MAILFATHOM_TEST_SMTP_SECRET", SMTP_PASSWORD)
        text = _config(root, allowed, account, smtp, env)
        (root / "mailfathom.toml").write_text(text, "utf-8")
        with Services.open(load_config(root / "mailfathom.toml")) as services:
            work = services.config.account("work")
            assert work is not None
            services.account_synchronizer().run_once(work)
        try:
            for url in _serving(root, text, smtp):
                found = structured(call(url, AGENT, "list_emails", {}))
                (summary,) = found["emails"]
                email_id = str(summary["storedEmailId"])
                read = structured(
                    call(url, AGENT, "get_email_content", {"storedEmailIds": [email_id]})
                )
                (attachment,) = [
                    a
                    for a in read["emails"][0]["content"]["attachments"]
                    if a["mediaType"] == "application/pdf"
                ]
                yield FilesServed(
                    url, text, root, allowed, outside, account, smtp, email_id,
                    str(attachment["partId"]), pdf,
                )  # fmt: skip
        finally:
            smtp.close()


def _serving(root: Path, text: str, smtp: SmtpServer) -> Iterator[str]:
    for running in serve(root, text, smtp, deliver=False):
        yield running.url


def _message(**overrides: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "account": "work",
        "subject": SUBJECT,
        "to": [FRIEND],
        "plainTextBody": f"The drawings are attached. {uuid.uuid4().hex}",
    }
    arguments.update(overrides)
    return arguments


def _file(d: FilesServed, name: str, content: bytes) -> str:
    path = d.allowed / name
    path.write_bytes(content)
    return str(path)


def test_a_stored_pdf_and_an_allowed_file_travel_on_a_draft_byte_identical(
    served: FilesServed,
) -> None:
    d = served
    d.smtp.clear()
    local = _file(d, LOCAL_NAME, LOCAL_BYTES)
    files = [{"storedEmailId": d.email_id, "partId": d.part_id}, {"filePath": local}]
    saved = structured(call(d.url, AGENT, "save_draft", _message(attachments=files)))
    assert (saved["state"], saved["revision"], saved["attachmentCount"]) == ("filed", 1, 2)
    # The result says how many files, and nothing of them.
    assert LOCAL_NAME not in str(saved)
    assert "test.pdf" not in str(saved)

    # Frozen when the call was taken: the file changed afterwards does not travel, and the
    # edit, which names the files again, freezes them anew.
    Path(local).write_bytes(b"changed after saving")
    edited_files = [
        {"storedEmailId": d.email_id, "partId": d.part_id, "fileName": "shed.pdf"},
        {"filePath": _file(d, "edited.bin", LOCAL_BYTES), "fileName": LOCAL_NAME},
    ]
    edit = _message(plainTextBody="The drawings, corrected.", attachments=edited_files)
    edited = structured(call(d.url, AGENT, "update_draft", {"draftId": saved["draftId"], **edit}))
    assert (edited["state"], edited["revision"], edited["attachmentCount"]) == ("filed", 2, 2)

    with d.services() as services:
        draft = SqlDraftStore(services.engine).find(uuid.UUID(saved["draftId"]))
    assert draft is not None
    # The store lists the files with their sizes for the question to ask without parsing.
    assert [(f.file_name, f.size_octets) for f in draft.files] == [
        ("shed.pdf", len(d.pdf)),
        (LOCAL_NAME, len(LOCAL_BYTES)),
    ]
    assert d.drafts_folder() == [draft.mime]

    sent = structured(call(d.url, AGENT, "send_draft", {"draftId": saved["draftId"]}))
    assert sent["state"] == "queued"
    with d.services() as services:
        report = services.delivery_pass(tls_context=d.smtp.client_context).run_once()
    assert report.sent == 1
    (wire,) = d.smtp.received()
    assert wire.rcpt_tos == [FRIEND]
    # The octets sent are the draft's octets.
    assert wire.content == draft.mime
    received = email.message_from_bytes(wire.content, policy=email.policy.default)
    assert isinstance(received, EmailMessage)
    parts = list(received.iter_attachments())
    assert [p.get_content_type() for p in parts] == ["application/pdf", "application/octet-stream"]
    assert [p.get_filename() for p in parts] == ["shed.pdf", LOCAL_NAME]
    assert [p.get_payload(decode=True) for p in parts] == [d.pdf, LOCAL_BYTES]
    assert d.drafts_folder() == []


def _refused_files(d: FilesServed) -> list[tuple[str, dict[str, str], int]]:
    secret = d.outside / "secret.txt"
    secret.write_bytes(b"not for mail")
    link = d.allowed / f"escape-{uuid.uuid4().hex[:6]}"
    link.symlink_to(d.outside)
    big = _file(d, f"big-{uuid.uuid4().hex[:6]}.bin", os.urandom(64 * 1024 + 1))
    return [
        ("outside", {"filePath": str(secret)}, Code.FILE_NOT_SERVED),
        ("climbing", {"filePath": f"{d.allowed}/../outside/secret.txt"}, Code.FILE_NOT_SERVED),
        ("symlink", {"filePath": str(link / "secret.txt")}, Code.FILE_NOT_SERVED),
        ("oversized", {"filePath": big}, Code.MESSAGE_TOO_LARGE),
        (
            "unseen-name",
            {"filePath": _file(d, "plain.txt", b"plain\n"), "fileName": "shed\u200b.pdf"},
            Code.FILE_REQUEST_NOT_ACCEPTED,
        ),
        (
            "unseen-path-name",
            {"filePath": _file(d, "sh\u200bed.txt", b"plain\n")},
            Code.FILE_REQUEST_NOT_ACCEPTED,
        ),
    ]


def test_a_refused_file_on_save_writes_nothing(served: FilesServed) -> None:
    d = served
    good = {"filePath": _file(d, "fine.txt", b"fine\n")}
    for name, reference, expected in _refused_files(d):
        before, folder = d.rows(), d.drafts_folder()
        result = call(d.url, AGENT, "save_draft", _message(attachments=[good, reference]))
        assert code(result) == expected, name
        assert d.rows() == before, name
        assert d.drafts_folder() == folder, name


def test_a_refused_file_on_update_leaves_the_draft_as_it_was(served: FilesServed) -> None:
    d = served
    good = {"filePath": _file(d, "kept.txt", b"kept\n")}
    saved = structured(call(d.url, AGENT, "save_draft", _message(attachments=[good])))
    with d.services() as services:
        store = SqlDraftStore(services.engine)
        held = store.find(uuid.UUID(saved["draftId"]))
    for name, reference, expected in _refused_files(d):
        before, folder = d.rows(), d.drafts_folder()
        arguments = {"draftId": saved["draftId"], **_message(attachments=[reference])}
        assert code(call(d.url, AGENT, "update_draft", arguments)) == expected, name
        with d.services() as services:
            after = SqlDraftStore(services.engine).find(uuid.UUID(saved["draftId"]))
        assert after == held, name
        assert d.rows() == before, name
        assert d.drafts_folder() == folder, name


def test_the_retry_key_reads_the_files(served: FilesServed) -> None:
    d = served
    body = f"Same words each time. {uuid.uuid4().hex}"
    path = _file(d, "plan.txt", b"first plan\n")
    files = [{"storedEmailId": d.email_id, "partId": d.part_id}, {"filePath": path}]
    first = structured(
        call(d.url, AGENT, "save_draft", _message(plainTextBody=body, attachments=files))
    )
    again = structured(
        call(d.url, AGENT, "save_draft", _message(plainTextBody=body, attachments=files))
    )
    assert again["draftId"] == first["draftId"]
    other = [files[0], {"filePath": _file(d, "other.txt", b"first plan\n")}]
    second = structured(
        call(d.url, AGENT, "save_draft", _message(plainTextBody=body, attachments=other))
    )
    assert second["draftId"] != first["draftId"]
    # The same reference whose file now holds other octets is another draft too.
    Path(path).write_bytes(b"second plan\n")
    third = structured(
        call(d.url, AGENT, "save_draft", _message(plainTextBody=body, attachments=files))
    )
    assert third["draftId"] not in (first["draftId"], second["draftId"])
    # Without files it is yet another.
    bare = structured(call(d.url, AGENT, "save_draft", _message(plainTextBody=body)))
    assert bare["draftId"] not in (first["draftId"], second["draftId"], third["draftId"])
    assert bare["attachmentCount"] == 0


def test_a_forward_carries_the_originals_files_and_the_named_ones(served: FilesServed) -> None:
    d = served
    forward = {"answeredEmailId": d.email_id, "answering": "forward", "plainTextBody": "See."}
    one = [{"filePath": _file(d, "note.txt", b"a note\n")}]
    saved = structured(call(d.url, AGENT, "save_draft", {**forward, "attachments": one}))
    assert saved["attachmentCount"] == 2
    with d.services() as services:
        draft = SqlDraftStore(services.engine).find(uuid.UUID(saved["draftId"]))
    assert draft is not None
    assert [f.size_octets for f in draft.files] == [len(d.pdf), len(b"a note\n")]
    # The original's file counts against MaxAttachmentCount (3) with the named ones.
    before = d.rows()
    three = one * 3
    refused = call(d.url, AGENT, "save_draft", {**forward, "attachments": three})
    assert code(refused) == Code.MESSAGE_TOO_LARGE
    assert d.rows() == before


def test_the_composed_message_bound_holds_a_draft(served: FilesServed) -> None:
    """Three files of 60 000 octets are under every file bound, but base64 makes the message
    larger than MaxMessageSize (200 KiB): nothing is written."""
    d = served
    files = [{"filePath": _file(d, f"part{n}.bin", os.urandom(60_000))} for n in range(3)]
    before, folder = d.rows(), d.drafts_folder()
    assert code(call(d.url, AGENT, "save_draft", _message(attachments=files))) == 51014
    assert d.rows() == before
    assert d.drafts_folder() == folder
    # Two of them fit.
    fits = structured(call(d.url, AGENT, "save_draft", _message(attachments=files[:2])))
    assert fits["attachmentCount"] == 2


def test_send_draft_holds_the_files_to_todays_bounds(served: FilesServed) -> None:
    d = served
    content = os.urandom(40_000)
    saved = structured(
        call(
            d.url,
            AGENT,
            "save_draft",
            _message(attachments=[{"filePath": _file(d, "x.bin", content)}]),
        )
    )
    caller = Caller(permissions=ALL_PERMISSIONS, label="agent")
    tighter = {
        "per file": BOUNDS.replace('"64KiB"', '"32KiB"'),
        "total": BOUNDS + '\nMaxTotalAttachmentSize = "32KiB"',
        "message": BOUNDS.replace('"200KiB"', '"32KiB"'),
    }
    for name, bounds in tighter.items():
        text = d.config_text.replace(BOUNDS, bounds)
        with d.services(text) as services:
            before = d.rows()
            with pytest.raises(Refusal) as refused:
                services.drafting().send.send(caller, saved["draftId"])
            assert refused.value.code == Code.MESSAGE_TOO_LARGE, name
            assert d.rows() == before
            draft = SqlDraftStore(services.engine).find(uuid.UUID(saved["draftId"]))
            assert draft is not None
            assert draft.outgoing_id is None


def test_a_forward_draft_is_held_to_the_message_bound_when_saved_and_sent(
    served: FilesServed,
) -> None:
    """No file named: the original's PDF alone makes the forward larger than 8 KiB, a bound
    asked when the draft is saved and again, as it stands then, when it is sent."""
    d = served
    caller = Caller(permissions=ALL_PERMISSIONS, label="agent")
    small = d.config_text.replace(BOUNDS, BOUNDS.replace('"200KiB"', '"8KiB"'))
    forward = DraftRequest(
        plain_text_body="See below.",
        answered_email_id=d.email_id,
        answering="forward",
        to=[FRIEND],
    )
    with d.services(small) as services:
        before = d.rows()
        with pytest.raises(Refusal) as refused:
            services.drafting().save.save(caller, forward)
        assert refused.value.code == Code.MESSAGE_TOO_LARGE
        assert d.rows() == before
    with d.services() as services:
        saved = services.drafting().save.save(caller, forward)
    with d.services(small) as services:
        before = d.rows()
        with pytest.raises(Refusal) as refused:
            services.drafting().send.send(caller, str(saved.draft_id))
        assert refused.value.code == Code.MESSAGE_TOO_LARGE
        assert d.rows() == before
        draft = SqlDraftStore(services.engine).find(saved.draft_id)
        assert draft is not None
        assert draft.outgoing_id is None
