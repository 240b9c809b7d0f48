"""Who wrote each address of the contact book, which decides whether it vouches for it.

Revision ID: 0015_contact_vouching
Revises: 0014_send_after

An address a collected record holds was collection's, one a peer record holds the peer's.
Who wrote the rest was never recorded: whether the operator (`mfctl contact`) or an MCP
caller (`create_contact`, `update_contact`). They are taken to be a caller's, which vouches for
nothing until the operator takes the record on (`mfctl contact promote`) or lets callers'
records vouch (`MailDelivery.CallerWrittenContactsVouch`): an address an agent wrote down to
get round `UnvouchedRecipients = Refuse` would otherwise keep doing so.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015_contact_vouching"
down_revision = "0014_send_after"
branch_labels = None
depends_on = None

_WRITER = """
UPDATE contact_addresses SET written_by = COALESCE(
    (SELECT CASE
        WHEN contacts.origin = 'collected' THEN 'collection'
        WHEN contacts.peer_account_id IS NOT NULL THEN 'peer'
        ELSE 'caller'
     END
     FROM contacts WHERE contacts.contact_id = contact_addresses.contact_id),
    'caller')
"""


def upgrade() -> None:
    with op.batch_alter_table("contact_addresses") as batch:
        batch.add_column(sa.Column("written_by", sa.String(16)))
    op.execute(_WRITER)
    with op.batch_alter_table("contact_addresses") as batch:
        batch.alter_column("written_by", existing_type=sa.String(16), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("contact_addresses") as batch:
        batch.drop_column("written_by")
