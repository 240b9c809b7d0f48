"""The initial store: accounts, folders, messages and what normalization derives from them.

Revision ID: 0001_initial_store
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import TSVECTOR

revision = "0001_initial_store"
down_revision = None
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)
BIGINT = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _seq_fk(name: str) -> sa.Column[int]:
    return sa.Column(
        "seq",
        BIGINT,
        sa.ForeignKey("messages.seq", ondelete="CASCADE", name=name),
        nullable=False,
    )


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("account_id", sa.String(64), primary_key=True),
        sa.Column("display_name", sa.String(256), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "folders",
        sa.Column("folder_id", BIGINT, primary_key=True, autoincrement=True),
        sa.Column(
            "account_id", sa.String(64), sa.ForeignKey("accounts.account_id"), nullable=False
        ),
        sa.Column("remote_name", sa.String(1024), nullable=False),
        sa.Column("alias", sa.String(256), nullable=False),
        sa.Column("role", sa.String(16)),
        sa.Column("visible_to_tools", sa.Boolean, nullable=False),
        sa.Column("uidvalidity", sa.BigInteger),
        sa.Column("highest_modseq", sa.BigInteger),
        sa.Column("uid_next", sa.BigInteger),
        sa.Column("last_committed_at", TS),
        sa.Column("push_supported", sa.Boolean),
        sa.UniqueConstraint("account_id", "remote_name", name="uq_folders_account_remote"),
    )
    op.create_table(
        "messages",
        sa.Column("seq", BIGINT, primary_key=True, autoincrement=True),
        sa.Column("stored_email_id", sa.Uuid, nullable=False, unique=True),
        sa.Column("account_id", sa.String(64), nullable=False),
        sa.Column("folder_id", BIGINT, sa.ForeignKey("folders.folder_id"), nullable=False),
        sa.Column("uidvalidity", sa.BigInteger, nullable=False),
        sa.Column("uid", sa.BigInteger, nullable=False),
        sa.Column("modseq", sa.BigInteger),
        sa.Column("message_id_header", sa.String(998)),
        sa.Column("subject", sa.Text),
        sa.Column("sent_at", TS),
        sa.Column("received_at", TS),
        sa.Column("size_octets", sa.BigInteger, nullable=False),
        sa.Column("seen", sa.Boolean, nullable=False),
        sa.Column("flagged", sa.Boolean, nullable=False),
        sa.Column("answered", sa.Boolean, nullable=False),
        sa.Column("draft", sa.Boolean, nullable=False),
        sa.Column("deleted", sa.Boolean, nullable=False),
        sa.Column("flags_observed_at", TS),
        sa.Column("content_state", sa.String(24), nullable=False),
        sa.Column("content_key", sa.String(64)),
        sa.Column("attachment_count", sa.Integer),
        sa.Column("inline_count", sa.Integer),
        sa.Column("attachment_octets", sa.BigInteger),
        sa.Column("is_encrypted", sa.Boolean, nullable=False),
        sa.Column("has_unverified_signature", sa.Boolean, nullable=False),
        sa.Column("has_unexpanded_tnef", sa.Boolean, nullable=False),
        sa.Column("defects", sa.Text),
        sa.Column("in_reply_to", sa.Text),
        sa.Column("references_header", sa.Text),
        sa.Column("thread_id", sa.Uuid),
        sa.Column("thread_parent_seq", BIGINT),
        sa.Column("thread_position", sa.Integer),
        sa.Column("stored_at", TS, nullable=False),
        sa.UniqueConstraint("folder_id", "uidvalidity", "uid", name="uq_messages_folder_uid"),
    )
    op.create_index("ix_messages_account_received", "messages", ["account_id", "received_at"])
    op.create_index("ix_messages_thread", "messages", ["thread_id", "thread_position"])
    op.create_index("ix_messages_content_state", "messages", ["content_state"])
    op.create_table(
        "message_bodies",
        sa.Column(
            "seq", BIGINT, sa.ForeignKey("messages.seq", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("plain_text", sa.Text, nullable=False),
        sa.Column("html", sa.Text),
    )
    op.create_table(
        "participants",
        _seq_fk("fk_participants_seq"),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("address", sa.String(998), nullable=False),
        sa.Column("address_key", sa.String(998), nullable=False),
        sa.Column("display_name", sa.Text),
        sa.PrimaryKeyConstraint("seq", "position", name="pk_participants"),
    )
    op.create_index("ix_participants_address", "participants", ["address_key", "role"])
    op.create_table(
        "message_identifiers",
        _seq_fk("fk_message_identifiers_seq"),
        sa.Column("account_id", sa.String(64), nullable=False),
        sa.Column("identifier", sa.String(998), nullable=False),
        sa.PrimaryKeyConstraint("seq", "identifier", name="pk_message_identifiers"),
    )
    op.create_index(
        "ix_message_identifiers_lookup", "message_identifiers", ["account_id", "identifier"]
    )
    op.create_table(
        "parts",
        _seq_fk("fk_parts_seq"),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("file_name", sa.String(200)),
        sa.Column("name_was_normalized", sa.Boolean, nullable=False),
        sa.Column("media_type", sa.String(255), nullable=False),
        sa.Column("size_octets", sa.BigInteger, nullable=False),
        sa.Column("part_path", sa.String(255), nullable=False),
        sa.Column("content_id", sa.String(998)),
        sa.PrimaryKeyConstraint("seq", "position", name="pk_parts"),
    )
    op.create_table(
        "keywords",
        _seq_fk("fk_keywords_seq"),
        sa.Column("keyword", sa.String(255), nullable=False),
        sa.PrimaryKeyConstraint("seq", "keyword", name="pk_keywords"),
    )
    op.create_index("ix_keywords_keyword", "keywords", ["keyword"])
    op.create_table(
        "repair_requests",
        sa.Column(
            "seq", BIGINT, sa.ForeignKey("messages.seq", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("reason", sa.String(32), nullable=False),
        sa.Column("requested_at", TS, nullable=False),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.create_table(
            "message_search",
            sa.Column(
                "seq", BIGINT, sa.ForeignKey("messages.seq", ondelete="CASCADE"), primary_key=True
            ),
            sa.Column("document", TSVECTOR, nullable=False),
        )
        op.create_index(
            "ix_message_search_document",
            "message_search",
            ["document"],
            postgresql_using="gin",
        )
    else:
        # Contentless: the text already lives in messages/message_bodies; the index keeps only
        # what matching needs. contentless_delete lets expunges remove rows (SQLite 3.43+).
        op.execute(
            "CREATE VIRTUAL TABLE message_fts USING fts5("
            "subject, participants, body, content='', contentless_delete=1, "
            "tokenize='unicode61 remove_diacritics 2')"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.drop_table("message_search")
    else:
        op.execute("DROP TABLE message_fts")
    for table in (
        "repair_requests",
        "keywords",
        "parts",
        "message_identifiers",
        "participants",
        "message_bodies",
        "messages",
        "folders",
        "accounts",
    ):
        op.drop_table(table)
