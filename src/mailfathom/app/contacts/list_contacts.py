"""list_contacts: a bounded page of the book, ordered by name, with each person's addresses.

A page size outside 1 to 200 is refused rather than clamped; an origin that is neither
published name, and a search over 320 characters or holding a character that renders as
nothing, are refused too (51009). The walk continues with a signed cursor (52003 for any
other text), which is not bound to the filters.
"""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.app.contacts import cursors, screening
from mailfathom.app.contacts.ports import BookPosition, ContactBook
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.content_screen import UNSCREENED, ContentScreen
from mailfathom.app.shared.cursor_signing import CursorSigner
from mailfathom.domain import text_rules
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.contacts import Contact, ContactOrigin, name_key
from mailfathom.domain.errors import Refusal

PERMISSIONS: Permissions = frozenset({Permission.CONTACTS_READ})

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
MAX_SEARCH_CHARACTERS = 320


@dataclass(frozen=True, slots=True)
class ContactPage:
    contacts: tuple[Contact, ...]
    next_cursor: str | None


def _refuse(message: str) -> Refusal:
    return Refusal(Code.CONTACT_LISTING_NOT_ACCEPTED, message)


def _page_size(value: object) -> int:
    if value is None:
        return DEFAULT_PAGE_SIZE
    if isinstance(value, bool) or not isinstance(value, int):
        raise _refuse("The pageSize is a whole number.")
    if not 1 <= value <= MAX_PAGE_SIZE:
        raise _refuse(f"The pageSize is from 1 to {MAX_PAGE_SIZE}; it is never clamped.")
    return value


def _origin(value: object) -> ContactOrigin | None:
    if value is None:
        return None
    chosen = ContactOrigin.parse(value) if isinstance(value, str) else None
    if chosen is None:
        raise _refuse("The origin is asserted or collected.")
    return chosen


def _search(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _refuse("The search is text.")
    if len(value) > MAX_SEARCH_CHARACTERS:
        raise _refuse(f"The search is at most {MAX_SEARCH_CHARACTERS} characters.")
    if text_rules.has_invisible_character(value):
        raise _refuse("The search holds a character that renders as nothing.")
    return value or None


class ContactListing:
    def __init__(
        self, book: ContactBook, signer: CursorSigner, screen: ContentScreen = UNSCREENED
    ) -> None:
        self._screen = screen
        self._book = book
        self._signer = signer

    def list(
        self,
        caller: Caller,
        search: object = None,
        origin: object = None,
        page_size: object = None,
        cursor: object = None,
    ) -> ContactPage:
        require(caller, PERMISSIONS)
        size = _page_size(page_size)
        narrowed = _origin(origin)
        text = _search(search)
        after = None if cursor is None else cursors.accept(self._signer, cursor)
        found = self._book.page(text, narrowed, after, size + 1)
        page = tuple(found[:size])
        shown = tuple(screening.contact(self._screen, c) for c in page)
        if len(found) <= size:
            return ContactPage(shown, None)
        last = page[-1]
        position = BookPosition(name_key(last.display_name), last.contact_id)
        return ContactPage(shown, cursors.issue(self._signer, position))
