"""The checks every authored message passes before anything is written down.

A message is composed long before a submission server says anything about it, so what is
refused here is what stays wrong whatever a server would say: a value no message can carry
(51013), more than the deployment composes (51014), an account that cannot send (53001,
56002, 56003). Text is held to the domain's one rule (`text_rules`): a one-line field carrying
a control character, a line or paragraph separator or a lone surrogate, and a body that is not
Unicode text, are 51013 before anything is composed. Refusals name the field and the rule,
never the value.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.domain import addresses, text_rules
from mailfathom.domain.codes import Code
from mailfathom.domain.config import AccountConfig, DeploymentConfig
from mailfathom.domain.delivery_config import AccountDelivery
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import AddressField, Recipient

MAX_IDEMPOTENCY_KEY = 128
MAX_ACCOUNT_NAME = 256
MAX_SUBJECT = 998
# More recipients than an outgoing record holds, whatever the configured bound says.
MAX_RECORD_RECIPIENTS = 500


def _composable(message: str) -> Refusal:
    return Refusal(Code.MESSAGE_FIELD_NOT_COMPOSABLE, message)


def idempotency_key(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _composable("The idempotencyKey is blank.")
    if len(value) > MAX_IDEMPOTENCY_KEY:
        raise _composable(f"The idempotencyKey is longer than {MAX_IDEMPOTENCY_KEY} characters.")
    if not text_rules.is_one_line(value):
        raise _composable("The idempotencyKey carries a control character.")
    return value


def _entries(values: Iterable[object] | None, field: str, room: int) -> list[str]:
    """The entries of one address list, refused as soon as they exceed `room` (before a
    longer list is read any further)."""
    if values is None:
        return []
    if isinstance(values, (str, bytes)):
        raise _composable(f"{field} is a list of addresses, not one text.")
    found: list[str] = []
    for value in values:
        if len(found) >= room:
            raise Refusal(
                Code.MESSAGE_TOO_LARGE,
                f"The message names more than {MAX_RECORD_RECIPIENTS} recipients, more than "
                "an outgoing record holds.",
            )
        found.append(addresses.plain_address(value, field))
    return found


def address_list(values: Iterable[object] | None, field: str) -> list[str]:
    """One optional list of plain addresses (an absent list is empty)."""
    return _entries(values, field, MAX_RECORD_RECIPIENTS)


def recipients(
    to: Iterable[object] | None,
    cc: Iterable[object] | None,
    bcc: Iterable[object] | None,
    max_count: int,
) -> tuple[Recipient, ...]:
    """Everybody a message is offered to, each address once (the first field naming it
    wins: an envelope offers one address one time)."""
    chosen: list[Recipient] = []
    seen: set[str] = set()
    room = MAX_RECORD_RECIPIENTS
    for values, field, name in (
        (to, AddressField.TO, "to"),
        (cc, AddressField.CC, "cc"),
        (bcc, AddressField.BCC, "bcc"),
    ):
        entries = _entries(values, name, room)
        room -= len(entries)
        for address in entries:
            key = address.lower()
            if key not in seen:
                seen.add(key)
                chosen.append(Recipient(field, address))
    if not chosen:
        raise _composable("The message names no recipient in to, cc or bcc.")
    if len(chosen) > max_count:
        raise Refusal(
            Code.MESSAGE_TOO_LARGE,
            f"The message is addressed to more than {max_count} recipients, the most this "
            "deployment sends one message to.",
        )
    return tuple(chosen)


def subject(value: object) -> str:
    if not isinstance(value, str):
        raise _composable("The subject is not text.")
    if not text_rules.is_one_line(value):
        raise _composable("The subject carries a line break or a control character.")
    if len(value) > MAX_SUBJECT:
        raise Refusal(
            Code.MESSAGE_TOO_LARGE, f"The subject is longer than {MAX_SUBJECT} characters."
        )
    return value


@dataclass(frozen=True, slots=True)
class Bodies:
    plain: str
    html: str | None


def bodies(plain: object, html: object, max_characters: int, *, quoted: str = "") -> Bodies:
    """The caller's text (required) and HTML alternative (optional, never blank), bounded
    together with whatever the message quotes."""
    if not isinstance(plain, str):
        raise _composable("The plainTextBody is not text.")
    if html is not None and not isinstance(html, str):
        raise _composable("The htmlBody is not text.")
    if html is not None and not html.strip():
        raise _composable("The htmlBody is blank; omit it to send the plain text alone.")
    if not text_rules.is_body_text(plain) or (
        html is not None and not text_rules.is_body_text(html)
    ):
        raise _composable("A body carries a NUL character or text that is not Unicode.")
    if len(plain) + len(quoted) > max_characters or (
        html is not None and len(html) + len(quoted) > max_characters
    ):
        raise Refusal(
            Code.MESSAGE_TOO_LARGE,
            f"The body is longer than {max_characters} characters, the most this deployment sends.",
        )
    return Bodies(plain, html)


def account_name(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _composable("The account is blank.")
    if len(value) > MAX_ACCOUNT_NAME:
        raise _composable(f"The account is longer than {MAX_ACCOUNT_NAME} characters.")
    if not text_rules.is_name(value):
        raise _composable("The account carries a control character.")
    return value


def served_account(served: Sequence[ServedAccount], name: str) -> ServedAccount:
    match = next((a for a in served if a.account_id == name), None)
    if match is None:
        folded = name.casefold()
        match = next((a for a in served if a.display_name.casefold() == folded), None)
    if match is None:
        raise Refusal(Code.ACCOUNT_NOT_SERVED, "The mail account named is not accessible.")
    return match


@dataclass(frozen=True, slots=True)
class SendingAccount:
    account: AccountConfig
    delivery: AccountDelivery
    address: str


def sending_account(config: DeploymentConfig, account_id: str) -> SendingAccount:
    """The account's sending setup, or the refusal that says which part is missing: no
    Delivery block or no address (56002), sending not enabled or the deployment read-only
    (56003). The account is never named."""
    account = config.account(account_id)
    delivery = account.delivery if account is not None else None
    if account is None or delivery is None or delivery.address is None:
        raise Refusal(
            Code.SENDING_NOT_CONFIGURED,
            "This deployment cannot send as that account: its configuration declares no "
            "Delivery block with an address to send from.",
        )
    if config.read_only:
        raise Refusal(
            Code.SENDING_NOT_ENABLED,
            "This deployment runs read-only (Deployment.ReadOnly); it sends nothing.",
        )
    if not delivery.enabled:
        raise Refusal(
            Code.SENDING_NOT_ENABLED,
            "Sending is not enabled for that account (Delivery.Enabled is off).",
        )
    return SendingAccount(account, delivery, delivery.address)
