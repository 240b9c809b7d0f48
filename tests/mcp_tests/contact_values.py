"""Values the contact tool tests write, each registered with the log audit, and a person
written into the book as collection writes one."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import sqlalchemy as sa

import log_audit
from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.app.contacts.ports import NewContact
from mailfathom.domain.contacts import ContactOrigin, contact_record


def secret(prefix: str = "book") -> str:
    """A value of its own, letters and digits only, that no log line may carry."""
    value = f"{prefix}{uuid.uuid4().hex[:16]}"
    log_audit.register(value)
    return value


def address(local: str) -> str:
    value = f"{local}@example.org"
    log_audit.register(value)
    return value


def collected(engine: sa.Engine, name: str, address: str) -> str:
    """A person the deployment picked up from mail, written into the store `engine` opens;
    an empty `name` is a person whose mail named nobody."""
    record = contact_record(name, [address], address, None, unnamed_allowed=not name)
    new = NewContact(uuid.uuid4(), record, ContactOrigin.COLLECTED, datetime.now(UTC))
    written = SqlContactBook(engine).create(new)
    assert written.contact is not None
    return str(written.contact.contact_id)
