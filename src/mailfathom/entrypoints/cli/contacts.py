"""`mfctl contact`: the operator's hold on the contact book (list, show, create, update,
delete, promote, import, export).

What the operator writes here vouches for its addresses under
`MailDelivery.UnvouchedRecipients = Refuse`; what an MCP caller wrote does not, until the
operator promotes the record (which takes it on) or lets callers' records vouch.

The operator acts as the book's owner through the same use cases the contact tools call,
under a grant of both contact permissions, so every rule the book holds holds here too. Two
conveniences are the command's own and never the tools': `create` prefers the first address
when `--preferred` is not given, and `update` keeps what an option does not restate (it reads
the record, changes what was given, and writes the whole record back).

A refusal is one line on standard error naming the rule (and, where the book answers with one,
the identity of the contact in the way), never a name, an address or a note, and nothing is
written on standard output: exit status 2 for input the book does not take or a deployment
that cannot be opened, 1 for a well-formed request the book's state turns down.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, TypeVar

import typer

from mailfathom.app.contacts.ports import ContactWrite, WriteState
from mailfathom.bootstrap import Services
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import CommandCode
from mailfathom.domain.contacts import Contact, ContactWriter, address_key
from mailfathom.domain.errors import MailFathomError
from mailfathom.entrypoints.cli import contact_files
from mailfathom.entrypoints.cli.contact_output import (
    print_contact,
    print_json,
    print_table,
    published,
)
from mailfathom.entrypoints.cli.deployment import ConfigOption, with_services
from mailfathom.entrypoints.cli.terminal import answers, say_error

T = TypeVar("T")
OPERATOR = Caller(
    permissions=frozenset({Permission.CONTACTS_READ, Permission.CONTACTS_WRITE}),
    label="operator",
)
# What the operator writes vouches for its addresses (MailDelivery.UnvouchedRecipients).
WRITER = ContactWriter.OPERATOR
PAGE_SIZE = 200

contact_app = typer.Typer(
    help="The contact book: list, show, create, update, delete, promote, import, export.",
    no_args_is_help=True,
)

JsonOption = Annotated[bool, typer.Option("--json", help="One JSON document, for scripts.")]
NameOption = Annotated[str | None, typer.Option("--name", help="The person's name.")]
AddressOption = Annotated[
    list[str] | None,
    typer.Option("--address", help="An address the person uses (repeatable)."),
]
PreferredOption = Annotated[
    str | None, typer.Option("--preferred", help="Which of the addresses mail goes to.")
]
NoteOption = Annotated[
    str | None, typer.Option("--note", help="A note about the person; an empty one clears it.")
]

_NOT_HELD = "notFound: no contact is held under that identifier."
_STATES = {
    WriteState.NOT_FOUND: _NOT_HELD,
    WriteState.WAS_COLLECTED: (
        "contactWasCollected: the record was collected from mail and is not amended in "
        "place; take it on first with `mfctl contact promote`."
    ),
}


def refuse(line: str, code: int = 1) -> typer.Exit:
    say_error(line)
    return typer.Exit(code=code)


def _written(outcome: ContactWrite, as_json: bool) -> None:
    if outcome.state is WriteState.ADDRESS_HELD:
        raise refuse(
            "addressHeldByAnotherContact: an address of the record belongs to contact "
            f"{outcome.holder_id}; nothing was written."
        )
    if outcome.contact is None:
        raise refuse(_STATES[outcome.state])
    _shown(outcome.contact, as_json)


def _shown(contact: Contact, as_json: bool) -> None:
    if as_json:
        print_json(published(contact))
    else:
        print_contact(contact)


@contact_app.command("list")
def list_contacts(
    config: ConfigOption = None,
    search: Annotated[
        str | None,
        typer.Option(help="Only people whose name or one of whose addresses holds this text."),
    ] = None,
    origin: Annotated[
        str | None, typer.Option(help="Only one half of the book: asserted or collected.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Every person in the book (or those matching), ordered by name."""

    def walked(services: Services) -> list[Contact]:
        listing = services.contacts(WRITER).listing
        held: list[Contact] = []
        cursor: str | None = None
        while True:
            page = listing.list(OPERATOR, search, origin, PAGE_SIZE, cursor)
            held.extend(page.contacts)
            if page.next_cursor is None:
                return held
            cursor = page.next_cursor

    contacts = with_services(config, walked)
    if as_json:
        print_json({"contacts": [published(c) for c in contacts]})
    elif not contacts:
        answers.print("No contacts match." if search or origin else "The book holds nobody.")
    else:
        print_table(contacts)


@contact_app.command("show")
def show(
    contact_id: Annotated[str | None, typer.Argument(help="The contact's identifier.")] = None,
    address: Annotated[
        str | None, typer.Option(help="Instead of an identifier: an address they use.")
    ] = None,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """One person, by identifier or by any address they use."""
    found = with_services(
        config, lambda s: s.contacts(WRITER).lookup.get(OPERATOR, contact_id, address)
    )
    if found is None:
        raise refuse(_NOT_HELD if address is None else "notFound: no contact holds that address.")
    _shown(found, as_json)


def _note(note: str | None) -> str | None:
    return note or None


@contact_app.command("create")
def create(
    name: NameOption = None,
    address: AddressOption = None,
    preferred: PreferredOption = None,
    note: NoteOption = None,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write a person down (asserted). Without --preferred, the first address is preferred."""
    addresses = address or []
    chosen = preferred if preferred is not None else next(iter(addresses), None)
    outcome = with_services(
        config,
        lambda s: s.contacts(WRITER).creation.create(
            OPERATOR, name, addresses, chosen, _note(note)
        ),
    )
    _written(outcome, as_json)


@contact_app.command("update")
def update(
    contact_id: Annotated[str, typer.Argument(help="The contact's identifier.")],
    name: NameOption = None,
    address: AddressOption = None,
    preferred: PreferredOption = None,
    note: NoteOption = None,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """Change an asserted person: what an option does not give is kept. --address given
    replaces every address; the preferred one is kept while it is still among them, else
    the first given is preferred."""
    if name is None and address is None and preferred is None and note is None:
        empty = MailFathomError(
            "Nothing to change: give --name, --address, --preferred or --note.",
            code=int(CommandCode.CONTACT_UPDATE_EMPTY),
        )
        raise refuse(str(empty), 2)

    def amended(services: Services) -> ContactWrite:
        use = services.contacts(WRITER)
        held = use.lookup.get(OPERATOR, contact_id, None)
        if held is None:
            return ContactWrite(WriteState.NOT_FOUND)
        addresses = list(held.addresses) if address is None else address
        keys = {address_key(a) for a in addresses}
        chosen = preferred
        if chosen is None:
            kept = held.preferred_address
            chosen = kept if address_key(kept) in keys else next(iter(addresses), None)
        return use.amendment.update(
            OPERATOR,
            contact_id,
            held.display_name if name is None else name,
            addresses,
            chosen,
            held.note if note is None else _note(note),
        )

    _written(with_services(config, amended), as_json)


@contact_app.command("delete")
def delete(
    contact_id: Annotated[str, typer.Argument(help="The contact's identifier.")],
    config: ConfigOption = None,
) -> None:
    """Erase a person and every address recorded with them; nothing of them is kept."""
    erased = with_services(
        config, lambda s: s.contacts(WRITER).erasure.delete(OPERATOR, contact_id)
    )
    held = 1 if erased.was_held else 0
    answers.print(
        f"Erased {held} contact(s) and {erased.addresses_erased} address(es).",
        highlight=False,
        soft_wrap=True,
    )


@contact_app.command("promote")
def promote(
    contact_id: Annotated[str, typer.Argument(help="The contact's identifier.")],
    config: ConfigOption = None,
) -> None:
    """Take on a person: a collected record becomes asserted and can then be updated, and
    every address of the record (one an MCP caller wrote included) is vouched for by the
    operator."""
    state = with_services(
        config, lambda s: s.contacts(WRITER).promotion.promote(OPERATOR, contact_id)
    )
    if state is WriteState.NOT_FOUND:
        raise refuse(_NOT_HELD)
    if state is WriteState.ALREADY_ASSERTED:
        answers.print("The contact was already asserted and vouched for; nothing changed.")
    else:
        answers.print("The contact is asserted now, and its addresses are vouched for.")


@contact_app.command("export")
def export(
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="The file to write (default: standard output)."),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Write the whole book as vCard 4.0, one card per person."""
    exported = with_services(config, lambda s: s.contact_exchange(WRITER).export.export(OPERATOR))
    contact_files.deliver(exported.data, output, exported.contacts)


@contact_app.command("import")
def import_cards(
    source: Annotated[
        Path, typer.Argument(help="A vCard 3.0 or 4.0 file, one or more cards; - for stdin.")
    ],
    config: ConfigOption = None,
) -> None:
    """Create a contact from each card. A card whose identity or address the book holds, one
    outside the book's bounds and one that cannot be read are skipped and counted."""
    data = contact_files.take(source)
    summary = with_services(
        config, lambda s: s.contact_exchange(WRITER).importing.import_cards(OPERATOR, data)
    )
    answers.print(
        f"Imported {summary.imported} contact(s); skipped {summary.skipped}: "
        f"{summary.identity_held} whose identity is held, {summary.address_held} with an "
        f"address another contact holds, {summary.out_of_bounds} outside the book's bounds, "
        f"{summary.malformed} malformed.",
        highlight=False,
        soft_wrap=True,
    )
