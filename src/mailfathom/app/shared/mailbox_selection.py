"""One validated selection of stored mail, shared by listing and searching.

Every bound is checked here, in the use case layer, so an entrypoint added later meets the
same limits. Counts are checked while a caller's list is read and before any element is
converted, so a list of a million names is refused at the 65th. Text is held to the domain's
one rule (`text_rules`): a name or a filter carrying a control character, a line or paragraph
separator or a lone surrogate names nothing and is 51002. No refusal repeats a value the
caller wrote, except an account name in 53001, which is the caller's own configured name for
an account and has passed that rule, and the length bound, before it is echoed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from mailfathom.app.shared.stored_mail import FolderView, SummaryFilter
from mailfathom.app.shared.stored_mail_ports import FolderDirectory
from mailfathom.domain import text_rules
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.folders import FolderRole

MAX_SCOPE_NAMES = 64
MAX_NAME_CHARACTERS = 256
MAX_SUBJECT_FRAGMENT = 256
MAX_KEYWORD_CHARACTERS = 64
MAX_ADDRESS_CHARACTERS = 320
_ROLE_PREFIX = "role:"
_ATOM_SPECIALS = frozenset('(){ %*"\\]')


@dataclass(frozen=True, slots=True)
class ServedAccount:
    """An account this deployment serves, as configured."""

    account_id: str
    display_name: str
    synchronization_mode: str


@dataclass(frozen=True, slots=True)
class SelectionInput:
    """A selection exactly as a caller wrote it; nothing here has been checked yet."""

    accounts: Iterable[object] | None = None
    folders: Iterable[object] | None = None
    sender_address: str | None = None
    recipient_address: str | None = None
    subject_fragment: str | None = None
    received_on_or_after: datetime | None = None
    received_before: datetime | None = None
    sent_on_or_after: datetime | None = None
    sent_before: datetime | None = None
    is_remotely_seen: bool | None = None
    is_remotely_flagged: bool | None = None
    keyword: str | None = None
    has_attachments: bool | None = None
    include_junk_mail: bool | None = None


@dataclass(frozen=True, slots=True)
class ResolvedSelection:
    """The folders a request reads and the filters it applies, ready for the store.

    `covered` are the folders freshness is reported for; `store_filter` is None when the scope
    holds no folder at all, which answers every request with nothing."""

    covered: tuple[FolderView, ...]
    store_filter: SummaryFilter | None
    included_junk_mail: bool
    fingerprint_parts: tuple[object, ...]


def _refuse_filter(message: str) -> Refusal:
    return Refusal(Code.FILTER_NOT_ACCEPTED, message)


def _bounded_names(values: Iterable[object] | None, what: str) -> list[str] | None:
    """Read a caller's list, refusing past the count limit before converting anything."""
    if values is None:
        return None
    taken: list[object] = []
    for value in values:
        if len(taken) == MAX_SCOPE_NAMES:
            raise _refuse_filter(f"The {what} filter names more than {MAX_SCOPE_NAMES} entries.")
        taken.append(value)
    names: list[str] = []
    for value in taken:
        if not isinstance(value, str):
            raise _refuse_filter(f"Every entry of the {what} filter must be text.")
        if len(value) > MAX_NAME_CHARACTERS:
            raise _refuse_filter(
                f"An entry of the {what} filter is longer than {MAX_NAME_CHARACTERS} characters."
            )
        if not value.strip():
            raise _refuse_filter(f"An entry of the {what} filter is blank.")
        if not text_rules.is_name(value):
            raise _refuse_filter(f"An entry of the {what} filter carries a control character.")
        names.append(value.strip())
    return names


def _not_served(name: str) -> Refusal:
    """53001, quoting the name only where it is spelt as an account identifier can be: any
    other text is no name this deployment configured, and may have come out of mail."""
    if text_rules.is_account_identifier(name):
        return Refusal(Code.ACCOUNT_NOT_SERVED, f"Mail account '{name}' is not accessible.")
    return Refusal(Code.ACCOUNT_NOT_SERVED, "The mail account named is not accessible.")


def resolve_accounts(
    served: Sequence[ServedAccount], names: Iterable[object] | None
) -> list[ServedAccount]:
    """The accounts a request names (identifier exactly, display name in any case), or every
    served account when it names none. A name nothing answers to is 53001."""
    wanted = _bounded_names(names, "accounts")
    if wanted is None:
        return sorted(served, key=lambda a: a.account_id)
    chosen: dict[str, ServedAccount] = {}
    for name in wanted:
        match = next((a for a in served if a.account_id == name), None)
        if match is None:
            folded = name.casefold()
            match = next((a for a in served if a.display_name.casefold() == folded), None)
        if match is None:
            raise _not_served(name)
        chosen[match.account_id] = match
    return sorted(chosen.values(), key=lambda a: a.account_id)


def _address(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    text = value.strip()
    local, at, domain = text.rpartition("@")
    if (
        not at
        or not local
        or not domain
        or len(text) > MAX_ADDRESS_CHARACTERS
        or any(ch.isspace() for ch in text)
        or not text_rules.is_one_line(text)
        or "@" in domain
    ):
        raise _refuse_filter(f"The {what} filter is not a usable mail address.")
    return text.lower()


def _keyword(value: str | None) -> str | None:
    if value is None:
        return None
    if not value or len(value) > MAX_KEYWORD_CHARACTERS:
        raise _refuse_filter(
            f"The keyword filter must be 1 to {MAX_KEYWORD_CHARACTERS} characters long."
        )
    if any(ord(ch) <= 0x20 or ord(ch) >= 0x7F or ch in _ATOM_SPECIALS for ch in value):
        raise _refuse_filter("The keyword filter is not a keyword a mail server could store.")
    return value.lower()


def _subject(value: str | None) -> str | None:
    if value is None:
        return None
    if not value.strip():
        raise _refuse_filter("The subject fragment filter is blank.")
    if len(value) > MAX_SUBJECT_FRAGMENT:
        raise _refuse_filter(
            f"The subject fragment filter is longer than {MAX_SUBJECT_FRAGMENT} characters."
        )
    if not text_rules.is_one_line(value):
        raise _refuse_filter("The subject fragment filter carries a control character.")
    return value


def _utc(value: datetime | None) -> datetime | None:
    """A bound as UTC. One whose offset carries it past year 1 or year 9999 names no time
    the store can hold, and is refused rather than left to fail the conversion."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise _refuse_filter(
            "A date-time bound lies outside years 1 to 9999 once taken to UTC."
        ) from None


def _range(
    start: datetime | None, end: datetime | None, what: str
) -> tuple[datetime | None, datetime | None]:
    """An inclusive start and an exclusive end, as UTC instants. A range that ends before it
    starts is 51002; one that ends where it starts is valid and holds nothing."""
    first, last = _utc(start), _utc(end)
    if first is not None and last is not None and last < first:
        raise _refuse_filter(f"The {what} range ends before it starts.")
    return first, last


def _folders(
    available: Sequence[FolderView], names: Iterable[object] | None, include_junk: bool
) -> tuple[list[FolderView], bool]:
    """The folders a request reads, and whether a junk folder is among them."""
    wanted = _bounded_names(names, "folders")
    if wanted is None:
        chosen = [f for f in available if include_junk or f.role is not FolderRole.JUNK]
        return chosen, any(f.role is FolderRole.JUNK for f in chosen)
    picked: dict[int, FolderView] = {}
    for name in wanted:
        if name.lower().startswith(_ROLE_PREFIX):
            role = FolderRole.parse(name[len(_ROLE_PREFIX) :])
            if role is None:
                raise _refuse_filter("A folders entry names a role no folder can play.")
            matches = [f for f in available if f.role is role]
            if not matches:
                raise Refusal(
                    Code.FOLDER_ROLE_NOT_MAPPED,
                    "No folder of the accounts in scope is mapped with the role a folders "
                    "entry names.",
                )
        else:
            folded = name.casefold()
            matches = [f for f in available if f.alias.casefold() == folded]
        for folder in matches:
            picked[folder.folder_id] = folder
    chosen = [f for f in available if f.folder_id in picked]
    return chosen, any(f.role is FolderRole.JUNK for f in chosen)


def resolve_selection(
    store: FolderDirectory, served: Sequence[ServedAccount], given: SelectionInput
) -> ResolvedSelection:
    """Check every filter, resolve the accounts and folders, and build the store filter.

    A junk folder takes part when the caller asks for junk mail or names that folder itself;
    naming it is asking for it."""
    accounts = resolve_accounts(served, given.accounts)
    sender = _address(given.sender_address, "sender address")
    recipient = _address(given.recipient_address, "recipient address")
    subject = _subject(given.subject_fragment)
    keyword = _keyword(given.keyword)
    start, end = _range(given.received_on_or_after, given.received_before, "received")
    sent_start, sent_end = _range(given.sent_on_or_after, given.sent_before, "sent")
    available = store.readable_folders([a.account_id for a in accounts]) if accounts else []
    include_junk = bool(given.include_junk_mail)
    folders, junk_included = _folders(available, given.folders, include_junk)
    store_filter = (
        SummaryFilter(
            folder_ids=tuple(f.folder_id for f in folders),
            sender_address=sender,
            recipient_address=recipient,
            subject_fragment=subject,
            received_on_or_after=start,
            received_before=end,
            sent_on_or_after=sent_start,
            sent_before=sent_end,
            seen=given.is_remotely_seen,
            flagged=given.is_remotely_flagged,
            keyword=keyword,
            has_attachments=given.has_attachments,
        )
        if folders
        else None
    )
    fingerprint: tuple[object, ...] = (
        tuple(a.account_id for a in accounts),
        tuple(f.folder_id for f in folders),
        sender,
        recipient,
        subject,
        start.isoformat() if start else None,
        end.isoformat() if end else None,
        given.is_remotely_seen,
        given.is_remotely_flagged,
        keyword,
        given.has_attachments,
        junk_included,
    )
    if sent_start is not None or sent_end is not None:
        # Only then, so that a cursor issued without them keeps the digest it was given.
        sent_range = (sent_start, sent_end)
        fingerprint += tuple(t.isoformat() if t else None for t in sent_range)
    return ResolvedSelection(tuple(folders), store_filter, junk_included, fingerprint)
