"""How `mfctl contact` shows people: a table or one record for a terminal, JSON for scripts.

A note may hold any character a body may, an escape sequence among them, so everything shown
on a terminal has every character that renders as nothing (`unseen`: controls other than a
line break or a tab, bidirectional controls, zero-width characters, tags, variation
selectors) written out as `\\uXXXX` (`\\UXXXXXXXX` past U+FFFF): what a person typed about
somebody must not be able to move the cursor, recolour the screen, or read as something other
than what is held. JSON carries the values as they are held, in the field names the contact
tools publish.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from mailfathom.domain.contacts import Contact
from mailfathom.domain.unseen import is_unseen
from mailfathom.entrypoints.cli.terminal import answers


def visible(text: str) -> str:
    return "".join(_escaped(c) if c not in "\n\t" and is_unseen(c) else c for c in text)


def _escaped(char: str) -> str:
    point = ord(char)
    return f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}"


def _when(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat(timespec="seconds")


def published(contact: Contact) -> dict[str, Any]:
    return {
        "contactId": str(contact.contact_id),
        "displayName": contact.display_name,
        "addresses": list(contact.addresses),
        "preferredAddress": contact.preferred_address,
        "note": contact.note,
        "origin": contact.origin.value,
        "recordedAt": _when(contact.recorded_at),
        "amendedAt": _when(contact.amended_at),
    }


def print_json(document: dict[str, Any]) -> None:
    typer.echo(json.dumps(document, ensure_ascii=False, indent=2))


def print_table(contacts: Sequence[Contact]) -> None:
    table = Table()
    table.add_column("contact", no_wrap=True, min_width=36)
    table.add_column("name", overflow="fold", min_width=8)
    table.add_column("preferred address", overflow="fold", min_width=9)
    table.add_column("origin", no_wrap=True, min_width=9)
    for c in contacts:
        table.add_row(
            str(c.contact_id),
            Text(visible(c.display_name)),
            Text(visible(c.preferred_address)),
            c.origin.value,
        )
    answers.print(table)


def print_contact(contact: Contact) -> None:
    lines = [
        f"contact         {contact.contact_id}",
        f"name            {contact.display_name}",
        f"preferred       {contact.preferred_address}",
        *(f"address         {address}" for address in contact.addresses),
        f"origin          {contact.origin.value}",
        f"recorded at     {_when(contact.recorded_at)}",
        f"amended at      {_when(contact.amended_at) or 'never'}",
    ]
    if contact.peer_account_id is not None:
        lines.append(f"peer of         {contact.peer_account_id}")
    if contact.note is not None:
        first, *rest = contact.note.split("\n")
        lines.append(f"note            {first}")
        lines.extend(f"                {line}" for line in rest)
    for line in lines:
        answers.print(visible(line), markup=False, highlight=False, soft_wrap=True)
