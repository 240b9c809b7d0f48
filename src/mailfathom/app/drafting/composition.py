"""Settling and composing a draft: the one place a draft's message is made.

A call states one of two shapes. A message of its own names `account` and `subject`; an answer
names `answeredEmailId` and `answering`, and its account, subject, threading fields, quotation
(and for a forward the original's files) are read from the stored email, again on every edit
(`response_derivation`, `answered_email`). Both pairs, neither, or half of one is 51013. No
recipient is required: a draft addressed to nobody is an ordinary draft, refused only when it
is sent. Refusals name a field or a bound, never a value.

Files named in `attachments` are read and frozen into the draft's message when the call is
taken, after every other field passed, and never again: a file changed afterwards changes
nothing held. A forward carries the original's files first and then the named ones, and the
count and total bounds count both. The composed message, files included, is held to
`MaxMessageSize`. Nothing is written before all of this passed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from mailfathom.app.drafting.ports import AttachmentResolving, DraftStore
from mailfathom.app.files.references import AttachmentReference, StoredPartReference
from mailfathom.app.sending import response_derivation as derive
from mailfathom.app.sending import rules as sending_rules
from mailfathom.app.sending.answered_email import (
    AnsweredEmails,
    forwarded_files,
    not_answerable,
)
from mailfathom.app.sending.ports import AuthoredMessage, ComposedMessage, MessageComposer
from mailfathom.app.shared.authorization import Permissions, permits
from mailfathom.app.shared.email_identifiers import parse_identifier
from mailfathom.app.shared.files import Attachment, AttachmentReader
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.domain import addresses
from mailfathom.domain.access import Caller
from mailfathom.domain.codes import Code
from mailfathom.domain.config import AccountConfig, DeploymentConfig
from mailfathom.domain.drafts import (
    Answering,
    DraftFile,
    DraftLife,
    DraftRecipient,
    normalized_body,
)
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import AddressField

_NOT_HELD = "No draft this deployment holds is named by that identifier."


class DraftRevised(Exception):
    """The draft is live but no longer at the revision the caller acted on: nothing was
    done. Only a caller naming a revision (the owner's console) meets it."""


def missed(store: DraftStore, draft_id: uuid.UUID, revision: int | None) -> Exception:
    """Why a conditional write found no draft: `DraftRevised` when a revision was named and
    the draft is live at another, otherwise not held."""
    current = store.find(draft_id)
    if (
        revision is not None
        and current is not None
        and current.life is DraftLife.LIVE
        and current.revision != revision
    ):
        return DraftRevised()
    return not_held()


def not_held() -> Refusal:
    """The one answer for every draft that cannot be acted on (53008)."""
    return Refusal(Code.DRAFT_NOT_HELD, _NOT_HELD)


def draft_identifier(value: object) -> uuid.UUID:
    """A draftId; text that is no identifier at all is answered as a draft nobody holds."""
    try:
        return parse_identifier(value, Code.DRAFT_NOT_HELD, "draftId")
    except Refusal:
        raise not_held() from None


@dataclass(frozen=True, slots=True)
class DraftRequest:
    """A draft's arguments as the caller wrote them."""

    plain_text_body: object
    account: object = None
    subject: object = None
    to: Iterable[object] | None = None
    cc: Iterable[object] | None = None
    bcc: Iterable[object] | None = None
    html_body: object = None
    answered_email_id: object = None
    answering: object = None
    attachments: Sequence[AttachmentReference] = ()


@dataclass(frozen=True, slots=True)
class SettledDraft:
    """A draft every check has passed, ready to compose. `attachments` are the files it
    carries, frozen: a forward's, read from the stored email, then the ones named."""

    account_id: str
    answering: Answering | None
    answered_email_id: uuid.UUID | None
    message: AuthoredMessage
    recipients: tuple[DraftRecipient, ...]
    body_characters: int
    retry_material: tuple[object, ...]
    attachments: tuple[Attachment, ...] = ()

    @property
    def files(self) -> tuple[DraftFile, ...]:
        return tuple(DraftFile(a.file_name, len(a.content)) for a in self.attachments)


def _composable(message: str) -> Refusal:
    return Refusal(Code.MESSAGE_FIELD_NOT_COMPOSABLE, message)


def _from_address(account: AccountConfig) -> str:
    """The address a draft is written from: the one the account sends as, else the first
    address it receives at. An account that names none cannot be written from at all."""
    if account.delivery is not None and account.delivery.address is not None:
        return account.delivery.address
    known = sorted(account.own_addresses())
    if not known:
        raise Refusal(
            Code.SENDING_NOT_CONFIGURED,
            "This deployment cannot write a message as that account: its configuration names "
            "no address for it (Delivery.Address or Addresses).",
        )
    return known[0]


def _recipients(
    derived: Sequence[tuple[AddressField, str]],
    to: Iterable[object] | None,
    cc: Iterable[object] | None,
    bcc: Iterable[object] | None,
    max_count: int,
) -> tuple[DraftRecipient, ...]:
    chosen: list[DraftRecipient] = []
    seen: set[str] = set()
    written = [
        (field, address, True)
        for values, field, name in (
            (to, AddressField.TO, "to"),
            (cc, AddressField.CC, "cc"),
            (bcc, AddressField.BCC, "bcc"),
        )
        for address in sending_rules.address_list(values, name)
    ]
    for field, address, was_written in [(f, a, False) for f, a in derived] + written:
        if address.lower() not in seen:
            seen.add(address.lower())
            chosen.append(DraftRecipient(field, address, was_written))
    if len(chosen) > max_count:
        raise Refusal(
            Code.MESSAGE_TOO_LARGE,
            f"The draft is addressed to more than {max_count} recipients, the most this "
            "deployment sends one message to.",
        )
    return tuple(chosen)


def _derived(address: str) -> str:
    try:
        return addresses.plain_address(address, "the recipients derived from the email")
    except Refusal:
        raise _composable(
            "A recipient derived from the answered email is not a plain ASCII address; this "
            "deployment cannot address a message to it."
        ) from None


class DraftComposition:
    def __init__(
        self,
        config: DeploymentConfig,
        served: Sequence[ServedAccount],
        answered: AnsweredEmails,
        attachments: AttachmentReader,
        composer: MessageComposer,
        files: AttachmentResolving,
    ) -> None:
        self._config = config
        self._served = tuple(served)
        self._answered = answered
        self._attachments = attachments
        self._composer = composer
        self._files = files

    def settle(self, caller: Caller, request: DraftRequest, answering: Permissions) -> SettledDraft:
        """Check the shape, then every field, read what an answer derives, and last read
        and freeze the files named. `answering` is the grant an answer takes: without it the
        answered email is answered as one that cannot be answered."""
        settled = self._settle(request, permits(caller, answering))
        references = tuple(request.attachments)
        if not references:
            return settled
        given = self._files.resolve(caller, references, carried=settled.attachments)
        return dataclasses.replace(
            settled,
            attachments=settled.attachments + given,
            retry_material=(*settled.retry_material, _file_material(references, given)),
        )

    def _settle(self, request: DraftRequest, may_answer: bool) -> SettledDraft:
        own = request.account is not None or request.subject is not None
        answer = request.answered_email_id is not None or request.answering is not None
        if own == answer:
            raise _composable(
                "A draft names account and subject (a message of its own) or answeredEmailId "
                "and answering (an answer), exactly one of the two."
            )
        if own:
            if request.account is None or request.subject is None:
                raise _composable("A message of its own names both account and subject.")
            return self._own(request)
        if request.answered_email_id is None or request.answering is None:
            raise _composable("An answer names both answeredEmailId and answering.")
        return self._answer(request, may_answer)

    def _bodies(self, request: DraftRequest, quoted: str = "") -> sending_rules.Bodies:
        return sending_rules.bodies(
            request.plain_text_body,
            request.html_body,
            self._config.mail_delivery.max_body_characters,
            quoted=quoted,
        )

    def _own(self, request: DraftRequest) -> SettledDraft:
        bounds = self._config.mail_delivery
        served = sending_rules.served_account(
            self._served, sending_rules.account_name(request.account)
        )
        account = self._config.account(served.account_id)
        if account is None:
            raise Refusal(Code.ACCOUNT_NOT_SERVED, "The mail account named is not accessible.")
        title = sending_rules.subject(request.subject)
        text = self._bodies(request)
        recipients = _recipients(
            (), request.to, request.cc, request.bcc, bounds.max_recipient_count
        )
        message = self._message(account, recipients, title, text.plain, text.html)
        return SettledDraft(
            account_id=account.account_id,
            answering=None,
            answered_email_id=None,
            message=message,
            recipients=recipients,
            body_characters=max(len(text.plain), len(text.html or "")),
            retry_material=_material(None, None, recipients, title, text),
        )

    def _answer(self, request: DraftRequest, may_answer: bool) -> SettledDraft:
        bounds = self._config.mail_delivery
        answering = Answering.parse(request.answering)
        if answering is None:
            raise _composable("answering is senderOnly, everyone or forward.")
        identifier = parse_identifier(
            request.answered_email_id, Code.NOT_AN_EMAIL_IDENTIFIER, "answeredEmailId"
        )
        if not may_answer:
            raise not_answerable()
        original = self._answered.find(identifier)
        account = self._config.account(original.row.summary.account_id)
        if account is None:
            raise not_answerable()
        text = self._bodies(request)
        derived: list[tuple[AddressField, str]] = []
        if answering is not Answering.FORWARD:
            to, cc = derive.reply_audience(
                original.row, answering is Answering.EVERYONE, account.own_addresses()
            )
            derived = [(AddressField.TO, _derived(a)) for a in to]
            derived += [(AddressField.CC, _derived(a)) for a in cc]
        recipients = _recipients(
            derived, request.to, request.cc, request.bcc, bounds.max_recipient_count
        )
        files: tuple[Attachment, ...] = ()
        in_reply_to: str | None = None
        references: tuple[str, ...] = ()
        if answering is Answering.FORWARD:
            subject = derive.forward_subject(original.row.summary.subject)
            plain = derive.forward_text(text.plain, original.row, bounds.max_body_characters)
            files = forwarded_files(original, bounds, self._attachments)
        else:
            subject = derive.reply_subject(original.row.summary.subject)
            plain = derive.reply_text(text.plain, original.row, bounds.max_body_characters)
            in_reply_to, references = derive.threading_fields(original.row)
        message = dataclasses.replace(
            self._message(account, recipients, subject, plain, text.html),
            in_reply_to=in_reply_to,
            references=references,
        )
        return SettledDraft(
            account_id=account.account_id,
            answering=answering,
            answered_email_id=identifier,
            message=message,
            recipients=recipients,
            body_characters=max(len(plain), len(text.html or "")),
            retry_material=_material(answering, identifier, recipients, "", text),
            attachments=files,
        )

    def _message(
        self,
        account: AccountConfig,
        recipients: Sequence[DraftRecipient],
        subject: str,
        plain: str,
        html: str | None,
    ) -> AuthoredMessage:
        return AuthoredMessage(
            from_address=_from_address(account),
            from_name=account.delivery.display_name if account.delivery else None,
            to=tuple(r.address for r in recipients if r.field is AddressField.TO),
            cc=tuple(r.address for r in recipients if r.field is AddressField.CC),
            subject=subject,
            plain_text=plain,
            html=html,
        )

    def compose(
        self, settled: SettledDraft, saved_at: datetime, message_id: str | None = None
    ) -> ComposedMessage:
        """The draft's message: written at `saved_at`, keeping `message_id` when the draft
        already has one, carrying its files; held to `MaxMessageSize` as written."""
        composed = self._composer.compose(
            dataclasses.replace(
                settled.message,
                sent_at=saved_at,
                message_id=message_id,
                attachments=settled.attachments,
            )
        )
        hold_to_message_size(self._config, len(composed.mime))
        return composed


def hold_to_message_size(config: DeploymentConfig, octets: int) -> None:
    """Refuse (51014) a composed message longer than `MaxMessageSize`, files included as
    they travel."""
    limit = config.mail_delivery.max_message_octets
    if octets > limit:
        raise Refusal(
            Code.MESSAGE_TOO_LARGE,
            f"The composed message is larger than {limit} octets (MailDelivery.MaxMessageSize).",
        )


def _file_material(
    references: Sequence[AttachmentReference], files: Sequence[Attachment]
) -> list[list[object]]:
    """Each named file as the retry key reads it: the reference as written (what it names,
    and the name and type given) and the SHA-256 of the octets frozen."""
    material: list[list[object]] = []
    for reference, file in zip(references, files, strict=True):
        if isinstance(reference, StoredPartReference):
            named: list[object] = ["part", str(reference.stored_email_id), reference.part_id]
        else:
            named = ["file", reference.path]
        digest = hashlib.sha256(file.content).hexdigest()
        material.append([*named, reference.file_name, reference.media_type, digest])
    return material


def _material(
    answering: Answering | None,
    answered: uuid.UUID | None,
    recipients: Sequence[DraftRecipient],
    subject: str,
    text: sending_rules.Bodies,
) -> tuple[object, ...]:
    return (
        answering.value if answering else "",
        str(answered) if answered else "",
        [[r.field.value, r.address.lower()] for r in recipients if r.written],
        subject,
        normalized_body(text.plain),
        normalized_body(text.html) if text.html is not None else None,
    )


def retry_key(caller: Caller, settled: SettledDraft) -> str:
    """What makes two save calls the same draft: the caller, the account, the shape, the
    answered email, the recipients the caller wrote, the subject it wrote, the bodies as
    `normalized_body` reads them and the files named (each reference and the SHA-256 of the
    octets it froze). A digest, so the key holds nothing of the message."""
    material = [caller.label, settled.account_id, *settled.retry_material]
    encoded = json.dumps(material, ensure_ascii=False, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()
