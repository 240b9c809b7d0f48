"""The contact book: one row per person, one per address, an address held by one person.

Revision ID: 0012_contact_book
Revises: 0009_mutation_records
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_contact_book"
down_revision = "0009_mutation_records"
branch_labels = None
depends_on = None

_TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "contacts",
        sa.Column("contact_id", sa.Uuid, primary_key=True),
        sa.Column("display_name", sa.String(256), nullable=False),
        sa.Column("name_key", sa.Text, nullable=False),
        sa.Column("preferred_address", sa.String(320), nullable=False),
        sa.Column("note", sa.Text),
        sa.Column("origin", sa.String(16), nullable=False),
        sa.Column("peer_account_id", sa.String(64)),
        sa.Column("recorded_at", _TS, nullable=False),
        sa.Column("amended_at", _TS),
    )
    op.create_index("ix_contacts_name", "contacts", ["name_key", "contact_id"])
    # The primary key is the address's comparison form: one address, one holder.
    op.create_table(
        "contact_addresses",
        sa.Column("address_key", sa.String(320), primary_key=True),
        sa.Column("contact_id", sa.Uuid, sa.ForeignKey("contacts.contact_id"), nullable=False),
        sa.Column("address", sa.String(320), nullable=False),
    )
    op.create_index("ix_contact_addresses_contact", "contact_addresses", ["contact_id"])


def downgrade() -> None:
    op.drop_index("ix_contact_addresses_contact", table_name="contact_addresses")
    op.drop_table("contact_addresses")
    op.drop_index("ix_contacts_name", table_name="contacts")
    op.drop_table("contacts")
