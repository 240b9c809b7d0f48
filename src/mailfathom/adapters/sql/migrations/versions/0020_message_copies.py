"""An index for finding the other copies of a message: its content key within its account.

Gmail lists one message in a folder per label it carries, each copy the same octets, so the
copies share a content key. Reads over several folders list each message once (see
`adapters/sql/message_copies.py`): for each row they ask whether a copy passing the
request's filters lies in a folder that comes first, one look-up of this index per row read.

Revision ID: 0020_message_copies
Revises: 0019_account_health
"""

from __future__ import annotations

from alembic import op

revision = "0020_message_copies"
down_revision = "0019_account_health"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_messages_content_copies", "messages", ["content_key", "account_id", "folder_id"]
    )


def downgrade() -> None:
    op.drop_index("ix_messages_content_copies", table_name="messages")
