"""Table definitions the queries are written against.

The schema itself is created and changed only by the Alembic migrations under `migrations/`;
these objects describe it for SQLAlchemy Core and must match the latest migration (the store
contract tests compare them).
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import TSVECTOR

from mailfathom.adapters.sql.column_types import UtcDateTime

metadata = sa.MetaData()

TS = UtcDateTime()
BIGINT = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

accounts = sa.Table(
    "accounts",
    metadata,
    sa.Column("account_id", sa.String(64), primary_key=True),
    sa.Column("display_name", sa.String(256), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("created_at", TS, nullable=False),
)

folders = sa.Table(
    "folders",
    metadata,
    sa.Column("folder_id", BIGINT, primary_key=True, autoincrement=True),
    sa.Column("account_id", sa.String(64), sa.ForeignKey("accounts.account_id"), nullable=False),
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

# One counter per account, moved by triggers on `folders` (migration 0031) in the transaction
# of every change the read side would show: what a reading process compares before it uses
# the visible folders it keeps (`folder_catalog`).
folder_versions = sa.Table(
    "folder_versions",
    metadata,
    sa.Column("account_id", sa.String(64), primary_key=True),
    sa.Column("version", sa.BigInteger, nullable=False),
)

# How many rows of the lexical index each account has, and how many times they changed: moved
# in the transaction of every change to them (on PostgreSQL by triggers on `message_search`,
# on SQLite by the statements that write `message_fts`; migration 0036). What a search compares
# before it takes a word's frequency it counted earlier (`reading_search.CommonWords`).
search_versions = sa.Table(
    "search_versions",
    metadata,
    sa.Column("account_id", sa.String(64), primary_key=True),
    sa.Column("rows", sa.BigInteger, nullable=False),
    sa.Column("changes", sa.BigInteger, nullable=False),
)

messages = sa.Table(
    "messages",
    metadata,
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
    # The first From address in comparison form (see participants.address_key).
    sa.Column("sender_key", sa.String(998)),
    sa.UniqueConstraint("folder_id", "uidvalidity", "uid", name="uq_messages_folder_uid"),
)
sa.Index("ix_messages_account_received", messages.c.account_id, messages.c.received_at)
# What the children's foreign keys refer to: a message by its account and `seq` (see 0028).
sa.Index("uq_messages_account_seq", messages.c.account_id, messages.c.seq, unique=True)
sa.Index("ix_messages_thread", messages.c.thread_id, messages.c.thread_position)
sa.Index("ix_messages_content_state", messages.c.content_state)
sa.Index(
    "ix_messages_folder_received",
    messages.c.folder_id,
    messages.c.received_at,
    messages.c.seq,
)
sa.Index("ix_messages_folder_sent", messages.c.folder_id, messages.c.sent_at)
sa.Index(
    "ix_messages_sender_received",
    messages.c.sender_key,
    messages.c.folder_id,
    messages.c.received_at,
    messages.c.seq,
)
# The copies of one message (the same octets) in the folders of its account.
sa.Index(
    "ix_messages_content_copies",
    messages.c.content_key,
    messages.c.account_id,
    messages.c.folder_id,
)
sa.Index(
    "ix_messages_unseen_received",
    messages.c.folder_id,
    messages.c.received_at,
    messages.c.seq,
    sqlite_where=sa.text("seen = 0"),
    postgresql_where=sa.text("seen = false"),
)
sa.Index(
    "ix_messages_flagged_received",
    messages.c.folder_id,
    messages.c.received_at,
    messages.c.seq,
    sqlite_where=sa.text("flagged = 1"),
    postgresql_where=sa.text("flagged = true"),
)


def _account_column() -> sa.Column[str]:
    return sa.Column("account_id", sa.String(64), nullable=False)


def _of_message(table: str) -> sa.ForeignKeyConstraint:
    """A child's foreign key to its message: the account and `seq` (see 0028)."""
    return sa.ForeignKeyConstraint(
        ["account_id", "seq"],
        ["messages.account_id", "messages.seq"],
        ondelete="CASCADE",
        name=f"fk_{table}_message",
    )


def same_message(child: sa.FromClause, parent: sa.FromClause) -> sa.ColumnElement[bool]:
    """`child`'s row belongs to `parent`'s message: the account and `seq` both, so a query
    joining them names the account on each side (see docs/scaling.md)."""
    return sa.and_(child.c.account_id == parent.c.account_id, child.c.seq == parent.c.seq)


message_bodies = sa.Table(
    "message_bodies",
    metadata,
    _account_column(),
    sa.Column("seq", BIGINT, nullable=False),
    sa.Column("plain_text", sa.Text, nullable=False),
    sa.Column("html", sa.Text),
    sa.PrimaryKeyConstraint("account_id", "seq", name="pk_message_bodies"),
    _of_message("message_bodies"),
)

participants = sa.Table(
    "participants",
    metadata,
    _account_column(),
    sa.Column("seq", BIGINT, nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("address", sa.String(998), nullable=False),
    sa.Column("address_key", sa.String(998), nullable=False),
    sa.Column("display_name", sa.Text),
    sa.PrimaryKeyConstraint("account_id", "seq", "position", name="pk_participants"),
    _of_message("participants"),
)
sa.Index("ix_participants_address", participants.c.address_key, participants.c.role)

message_identifiers = sa.Table(
    "message_identifiers",
    metadata,
    _account_column(),
    sa.Column("seq", BIGINT, nullable=False),
    sa.Column("identifier", sa.String(998), nullable=False),
    sa.PrimaryKeyConstraint("account_id", "seq", "identifier", name="pk_message_identifiers"),
    _of_message("message_identifiers"),
)
sa.Index(
    "ix_message_identifiers_lookup",
    message_identifiers.c.account_id,
    message_identifiers.c.identifier,
)

parts = sa.Table(
    "parts",
    metadata,
    _account_column(),
    sa.Column("seq", BIGINT, nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("file_name", sa.String(200)),
    sa.Column("name_was_normalized", sa.Boolean, nullable=False),
    sa.Column("media_type", sa.String(255), nullable=False),
    sa.Column("size_octets", sa.BigInteger, nullable=False),
    sa.Column("part_path", sa.String(255), nullable=False),
    sa.Column("content_id", sa.String(998)),
    sa.PrimaryKeyConstraint("account_id", "seq", "position", name="pk_parts"),
    _of_message("parts"),
)

keywords = sa.Table(
    "keywords",
    metadata,
    _account_column(),
    sa.Column("seq", BIGINT, nullable=False),
    sa.Column("keyword", sa.String(255), nullable=False),
    sa.PrimaryKeyConstraint("account_id", "seq", "keyword", name="pk_keywords"),
    _of_message("keywords"),
)
sa.Index("ix_keywords_keyword", keywords.c.keyword)

repair_requests = sa.Table(
    "repair_requests",
    metadata,
    _account_column(),
    sa.Column("seq", BIGINT, nullable=False),
    sa.Column("reason", sa.String(32), nullable=False),
    sa.Column("requested_at", TS, nullable=False),
    sa.PrimaryKeyConstraint("account_id", "seq", name="pk_repair_requests"),
    _of_message("repair_requests"),
)

# PostgreSQL only: the lexical index. SQLite keeps it in the FTS5 table `message_fts`,
# created by the migration with raw DDL because Core has no construct for virtual tables.
message_search = sa.Table(
    "message_search",
    metadata,
    _account_column(),
    sa.Column("seq", BIGINT, nullable=False),
    sa.Column("document", TSVECTOR, nullable=False),
    sa.PrimaryKeyConstraint("account_id", "seq", name="pk_message_search"),
    _of_message("message_search"),
)
sa.Index("ix_message_search_document", message_search.c.document, postgresql_using="gin")

# The outbox: one row per send a caller asked for, with the composed message. The account and
# the caller's idempotency key identify a send, by constraint, so a retried call finds the
# row its first attempt wrote.
outgoing_emails = sa.Table(
    "outgoing_emails",
    metadata,
    sa.Column("seq", BIGINT, primary_key=True, autoincrement=True),
    sa.Column("outgoing_id", sa.Uuid, nullable=False, unique=True),
    sa.Column("account_id", sa.String(64), nullable=False),
    sa.Column("idempotency_key", sa.String(128), nullable=False),
    sa.Column("caller", sa.String(64), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("stage", sa.String(16), nullable=False),
    sa.Column("queued_at", TS, nullable=False),
    sa.Column("not_before", TS, nullable=False),
    sa.Column("attempt_count", sa.Integer, nullable=False),
    sa.Column("lease_owner", sa.String(64)),
    sa.Column("lease_expires_at", TS),
    # The claiming process (`adapters.processes`, 0031): recovered at once once it is gone.
    sa.Column("lease_process", sa.String(64)),
    sa.Column("transmission_started_at", TS),
    sa.Column("failure_code", sa.Integer),
    sa.Column("finished_at", TS),
    sa.Column("message_id_header", sa.String(998), nullable=False),
    sa.Column("envelope_from", sa.String(998), nullable=False),
    sa.Column("mime", sa.LargeBinary, nullable=False),
    # The instant a caller asked the send to wait for; `not_before` is never earlier.
    sa.Column("send_after", TS),
    sa.UniqueConstraint("account_id", "idempotency_key", name="uq_outgoing_account_key"),
)
sa.Index("ix_outgoing_due", outgoing_emails.c.stage, outgoing_emails.c.not_before)
sa.Index("ix_outgoing_queued", outgoing_emails.c.queued_at)

# What the children's foreign keys refer to: a send by its account and `seq` (see 0033).
sa.Index(
    "uq_outgoing_account_seq", outgoing_emails.c.account_id, outgoing_emails.c.seq, unique=True
)


def _of_parent(table: str, parent: str, key: str) -> sa.ForeignKeyConstraint:
    """A child's foreign key to its send or draft: the account and the parent's `seq`
    (see 0033), as `_of_message` for a message's children."""
    return sa.ForeignKeyConstraint(
        ["account_id", key],
        [f"{parent}.account_id", f"{parent}.seq"],
        ondelete="CASCADE",
        name=f"fk_{table}_parent",
    )


outgoing_recipients = sa.Table(
    "outgoing_recipients",
    metadata,
    _account_column(),
    sa.Column("outgoing_seq", BIGINT, nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("field", sa.String(3), nullable=False),
    sa.Column("address", sa.String(998), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("last_reply_code", sa.Integer),
    sa.PrimaryKeyConstraint(
        "account_id", "outgoing_seq", "position", name="pk_outgoing_recipients"
    ),
    _of_parent("outgoing_recipients", "outgoing_emails", "outgoing_seq"),
)

# Drafts: one row per draft, holding the composed message of its current revision. The retry
# key identifies a save among the drafts not given up, by constraint (it is cleared when a
# draft is deleted), so identical save calls racing each other leave one draft.
drafts = sa.Table(
    "drafts",
    metadata,
    sa.Column("seq", BIGINT, primary_key=True, autoincrement=True),
    sa.Column("draft_id", sa.Uuid, nullable=False, unique=True),
    sa.Column("account_id", sa.String(64), nullable=False),
    sa.Column("caller", sa.String(64), nullable=False),
    sa.Column("answering", sa.String(16)),
    sa.Column("answered_email_id", sa.Uuid),
    sa.Column("revision", sa.Integer, nullable=False),
    sa.Column("message_id_header", sa.String(998), nullable=False),
    sa.Column("mime", sa.LargeBinary, nullable=False),
    sa.Column("body_characters", sa.Integer, nullable=False),
    sa.Column("saved_at", TS, nullable=False),
    sa.Column("life", sa.String(16), nullable=False),
    sa.Column("outgoing_id", sa.Uuid),
    sa.Column("retry_key", sa.String(64)),
    # Until when one call or pass holds the right to append this draft's copy.
    sa.Column("filing_until", TS),
    # An APPEND sent whose answer is not recorded: the revision, and where its copy lands.
    sa.Column("append_revision", sa.Integer),
    sa.Column("append_folder", sa.String(1024)),
    sa.Column("append_uidvalidity", sa.BigInteger),
    sa.Column("append_since_uid", sa.BigInteger),
    sa.UniqueConstraint("retry_key", name="uq_drafts_retry_key"),
)
sa.Index("ix_drafts_account_life", drafts.c.account_id, drafts.c.life)
sa.Index("ix_drafts_outgoing", drafts.c.outgoing_id)
sa.Index("uq_drafts_account_seq", drafts.c.account_id, drafts.c.seq, unique=True)

draft_recipients = sa.Table(
    "draft_recipients",
    metadata,
    _account_column(),
    sa.Column("draft_seq", BIGINT, nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("field", sa.String(3), nullable=False),
    sa.Column("address", sa.String(998), nullable=False),
    sa.Column("written", sa.Boolean, nullable=False),
    sa.PrimaryKeyConstraint("account_id", "draft_seq", "position", name="pk_draft_recipients"),
    _of_parent("draft_recipients", "drafts", "draft_seq"),
)

# The files a draft's current revision carries, in the order its message carries them: what
# the draft's question lists without parsing the message.
draft_files = sa.Table(
    "draft_files",
    metadata,
    _account_column(),
    sa.Column("draft_seq", BIGINT, nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("file_name", sa.String(255)),
    sa.Column("size_octets", sa.BigInteger, nullable=False),
    sa.PrimaryKeyConstraint("account_id", "draft_seq", "position", name="pk_draft_files"),
    _of_parent("draft_files", "drafts", "draft_seq"),
)

# The copies of a draft appended to the owner's drafts folder and not yet taken out: the one
# of the current revision, and any a later revision superseded.
draft_copies = sa.Table(
    "draft_copies",
    metadata,
    _account_column(),
    sa.Column("draft_seq", BIGINT, nullable=False),
    sa.Column("revision", sa.Integer, nullable=False),
    sa.Column("folder", sa.String(1024), nullable=False),
    sa.Column("uidvalidity", sa.BigInteger, nullable=False),
    sa.Column("uid", sa.BigInteger, nullable=False),
    sa.PrimaryKeyConstraint("account_id", "draft_seq", "revision", name="pk_draft_copies"),
    _of_parent("draft_copies", "drafts", "draft_seq"),
)

# Drafts waiting for their owner because nobody could be asked whether to send them: one row
# per draft, keyed by `draft:` and the SHA-256 of the draft's identifier. No mail content.
owner_alerts = sa.Table(
    "owner_alerts",
    metadata,
    sa.Column("alert_key", sa.String(80), primary_key=True),
    sa.Column("account_id", sa.String(64), nullable=False),
    sa.Column("draft_id", sa.String(128), nullable=False),
    sa.Column("reason", sa.String(32), nullable=False),
    sa.Column("raised_at", TS, nullable=False),
    sa.Column("dismissed_at", TS),
)
sa.Index("ix_owner_alerts_raised", owner_alerts.c.raised_at)

# Durable mutation records: one row per change a caller asked of the owner's mailbox, carried
# by the account's synchronization run to completed or dead-lettered. The email, the kind, the
# requester and the request identity identify a record, by constraint, so a retried request
# finds the record its first attempt wrote. `last_error_code` is a code, never a server's text.
mutation_records = sa.Table(
    "mutation_records",
    metadata,
    sa.Column("seq", BIGINT, primary_key=True, autoincrement=True),
    sa.Column("record_id", sa.Uuid, nullable=False, unique=True),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("account_id", sa.String(64), nullable=False),
    sa.Column("stored_email_id", sa.Uuid, nullable=False),
    sa.Column("folder_id", BIGINT, nullable=False),
    sa.Column("value", sa.Text, nullable=False),
    sa.Column("requester", sa.String(64), nullable=False),
    sa.Column("request_id", sa.String(128), nullable=False),
    # SHA-256 (hex) of the whole request that wrote the record: a retry must match it.
    sa.Column("request_digest", sa.String(64)),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("last_error_code", sa.Integer),
    sa.Column("created_at", TS, nullable=False),
    sa.Column("updated_at", TS, nullable=False),
    # A move's progress, noted before its command is issued: the message's place in the
    # source folder, and the destination's UIDVALIDITY and UIDNEXT at that moment.
    sa.Column("source_uidvalidity", sa.BigInteger),
    sa.Column("source_uid", sa.BigInteger),
    sa.Column("destination_uidvalidity", sa.BigInteger),
    sa.Column("destination_uid_next", sa.BigInteger),
    sa.UniqueConstraint(
        "stored_email_id", "kind", "requester", "request_id", name="uq_mutation_identity"
    ),
)
sa.Index("ix_mutation_records_open", mutation_records.c.account_id, mutation_records.c.state)

# Folders a caller asked to create (organize_email's createFolder), carried by the account's
# synchronization run: CREATE on the server, then a folder row published under `alias`. The
# name the run is about to create is noted first, so a run interrupted after the CREATE
# finds the folder its own earlier attempt made instead of refusing it as taken.
folder_creations = sa.Table(
    "folder_creations",
    metadata,
    sa.Column("seq", BIGINT, primary_key=True, autoincrement=True),
    sa.Column("creation_id", sa.Uuid, nullable=False, unique=True),
    sa.Column("account_id", sa.String(64), nullable=False),
    sa.Column("name", sa.String(256), nullable=False),
    sa.Column("parent_folder_id", BIGINT),
    sa.Column("alias", sa.String(256), nullable=False),
    sa.Column("alias_key", sa.String(256), nullable=False),
    sa.Column("requester", sa.String(64), nullable=False),
    sa.Column("request_id", sa.String(128), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("last_error_code", sa.Integer),
    sa.Column("noted_remote_name", sa.String(1024)),
    sa.Column("folder_id", BIGINT),
    sa.Column("created_at", TS, nullable=False),
    sa.Column("updated_at", TS, nullable=False),
    sa.UniqueConstraint(
        "account_id", "requester", "request_id", name="uq_folder_creation_identity"
    ),
)
sa.Index("ix_folder_creations_open", folder_creations.c.account_id, folder_creations.c.state)

contacts = sa.Table(
    "contacts",
    metadata,
    sa.Column("contact_id", sa.Uuid, primary_key=True),
    sa.Column("display_name", sa.String(256), nullable=False),
    sa.Column("name_key", sa.Text, nullable=False),
    sa.Column("preferred_address", sa.String(320), nullable=False),
    sa.Column("note", sa.Text),
    sa.Column("origin", sa.String(16), nullable=False),
    sa.Column("peer_account_id", sa.String(64)),
    sa.Column("recorded_at", TS, nullable=False),
    sa.Column("amended_at", TS),
)
sa.Index("ix_contacts_name", contacts.c.name_key, contacts.c.contact_id)

contact_addresses = sa.Table(
    "contact_addresses",
    metadata,
    sa.Column("address_key", sa.String(320), primary_key=True),
    sa.Column("contact_id", sa.Uuid, sa.ForeignKey("contacts.contact_id"), nullable=False),
    sa.Column("address", sa.String(320), nullable=False),
    # Who put the address here (`ContactWriter`): whether it vouches for the address.
    sa.Column("written_by", sa.String(16), nullable=False),
)
sa.Index("ix_contact_addresses_contact", contact_addresses.c.contact_id)

# What synchronization established about a message's sender and its text (0018). No row:
# the message was stored before anything was verified or assessed. A NULL verdict (or
# reading) in a row: no port answered for that half.
message_trust = sa.Table(
    "message_trust",
    metadata,
    _account_column(),
    sa.Column("seq", BIGINT, nullable=False),
    sa.Column("author_authentication", sa.String(16)),
    sa.Column("verdict_source", sa.String(24)),
    sa.Column("authenticated_domain", sa.Text),
    sa.Column("displayed_author_domain", sa.Text),
    sa.Column("authenticated_by", sa.String(8)),
    sa.Column("dmarc", sa.String(16)),
    sa.Column("authorship_state", sa.String(16)),
    sa.Column("likelihood", sa.Float),
    # Signal names, strongest first, joined by commas.
    sa.Column("signals", sa.Text),
    sa.Column("profile_revision", sa.String(64)),
    sa.PrimaryKeyConstraint("account_id", "seq", name="pk_message_trust"),
    _of_message("message_trust"),
)

# How far `mfctl mailbox reverify` has come through an account's messages (by `seq`).
trust_positions = sa.Table(
    "trust_positions",
    metadata,
    sa.Column("account_id", sa.String(64), primary_key=True),
    sa.Column("after_seq", BIGINT, nullable=False),
    sa.Column("updated_at", TS, nullable=False),
)

# An account kept from synchronizing or sending until a person acts (see 0019).
account_health = sa.Table(
    "account_health",
    metadata,
    sa.Column("account_id", sa.String(64), primary_key=True),
    sa.Column("state", sa.String(32), nullable=False),
    sa.Column("code", sa.Integer, nullable=False),
    sa.Column("since", TS, nullable=False),
)

# What an operator should mend on an account that is not held, one row per account and
# warning (see 0037).
account_warnings = sa.Table(
    "account_warnings",
    metadata,
    sa.Column("account_id", sa.String(64), primary_key=True),
    sa.Column("warning", sa.String(32), primary_key=True),
    sa.Column("code", sa.Integer, nullable=False),
    sa.Column("since", TS, nullable=False),
)

# The embedding spaces stored mail has been placed in (see 0021 and app/sync/embedding.py).
embedding_generations = sa.Table(
    "embedding_generations",
    metadata,
    sa.Column("generation_id", BIGINT, primary_key=True, autoincrement=True),
    sa.Column("generation", sa.String(600), nullable=False, unique=True),
    sa.Column("model", sa.String(256), nullable=False),
    sa.Column("version", sa.String(256), nullable=False),
    sa.Column("dimension", sa.Integer, nullable=False),
    sa.Column("created_at", TS, nullable=False),
    sa.Column("filled_at", TS),
)

# How far each generation's backfill has walked each account's messages (see 0034); an
# account without a row has walked none.
embedding_positions = sa.Table(
    "embedding_positions",
    metadata,
    sa.Column(
        "generation_id",
        BIGINT,
        sa.ForeignKey("embedding_generations.generation_id", ondelete="CASCADE"),
        nullable=False,
    ),
    _account_column(),
    sa.Column("after_seq", BIGINT, nullable=False),
    sa.PrimaryKeyConstraint("generation_id", "account_id", name="pk_embedding_positions"),
)

# Each message a generation has read, with how many passages it gave.
embedded_messages = sa.Table(
    "embedded_messages",
    metadata,
    sa.Column(
        "generation_id",
        BIGINT,
        sa.ForeignKey("embedding_generations.generation_id", ondelete="CASCADE"),
        nullable=False,
    ),
    _account_column(),
    sa.Column("seq", BIGINT, nullable=False),
    sa.Column("passages", sa.Integer, nullable=False),
    sa.PrimaryKeyConstraint("generation_id", "account_id", "seq", name="pk_embedded_messages"),
    _of_message("embedded_messages"),
)
sa.Index("ix_embedded_messages_message", embedded_messages.c.account_id, embedded_messages.c.seq)

# One row per passage: int8 components and the scale that brings them back to unit length.
passage_vectors = sa.Table(
    "passage_vectors",
    metadata,
    sa.Column("vector_id", BIGINT, primary_key=True, autoincrement=True),
    sa.Column(
        "generation_id",
        BIGINT,
        sa.ForeignKey("embedding_generations.generation_id", ondelete="CASCADE"),
        nullable=False,
    ),
    _account_column(),
    sa.Column("seq", BIGINT, nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("scale", sa.Float, nullable=False),
    sa.Column("vector", sa.LargeBinary, nullable=False),
    _of_message("passage_vectors"),
)
# Each account's vectors of a generation in the order they were added (see 0035).
sa.Index(
    "ix_passage_vectors_account",
    passage_vectors.c.generation_id,
    passage_vectors.c.account_id,
    passage_vectors.c.vector_id,
)
sa.Index("ix_passage_vectors_message", passage_vectors.c.account_id, passage_vectors.c.seq)

# What each caller spent answering questions, per period (see 0022).
answering_budget = sa.Table(
    "answering_budget",
    metadata,
    sa.Column("caller", sa.String(256), primary_key=True),
    sa.Column("period_start", TS, primary_key=True),
    sa.Column("runs", sa.Integer, nullable=False),
    sa.Column("tokens", sa.BigInteger, nullable=False),
)

# A provider role (the chat endpoint) in a failed state (see 0022).
provider_health = sa.Table(
    "provider_health",
    metadata,
    sa.Column("role", sa.String(32), primary_key=True),
    sa.Column("state", sa.String(32), nullable=False),
    sa.Column("code", sa.Integer, nullable=False),
    sa.Column("since", TS, nullable=False),
)

# The owner's console (see 0023): the owner password's hash (one row), the sessions by the
# SHA-256 of their token, and wrong passwords in a row per client address (`*`: all).
console_owner = sa.Table(
    "console_owner",
    metadata,
    sa.Column("owner_id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("password_hash", sa.String(512), nullable=False),
    sa.Column("set_at", TS, nullable=False),
)

console_sessions = sa.Table(
    "console_sessions",
    metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    sa.Column("csrf_secret", sa.String(64), nullable=False),
    sa.Column("signed_in", sa.Boolean, nullable=False),
    sa.Column("created_at", TS, nullable=False),
    sa.Column("expires_at", TS, nullable=False),
)
sa.Index("ix_console_sessions_expiry", console_sessions.c.expires_at)

console_login_failures = sa.Table(
    "console_login_failures",
    metadata,
    sa.Column("client", sa.String(64), primary_key=True),
    sa.Column("failures", sa.Integer, nullable=False),
    sa.Column("last_failed_at", TS, nullable=False),
)

# The last coded failure of each account's (folder_id 0) and folder's synchronization (see
# 0025); a successful pass deletes it.
sync_failures = sa.Table(
    "sync_failures",
    metadata,
    sa.Column("account_id", sa.String(64), primary_key=True),
    sa.Column("folder_id", BIGINT, primary_key=True, autoincrement=False),
    sa.Column("code", sa.Integer, nullable=False),
    sa.Column("failed_at", TS, nullable=False),
)

# Console keys and recent tool calls (see 0024): each key by its identifier, kept as the
# SHA-256 of its text; each answered tool call without its arguments or result.
console_api_keys = sa.Table(
    "console_api_keys",
    metadata,
    sa.Column("key_id", sa.String(16), primary_key=True),
    sa.Column("caller", sa.String(64), nullable=False),
    sa.Column("key_sha256", sa.String(64), nullable=False),
    sa.Column("form_nonce", sa.String(32), nullable=False, unique=True),
    sa.Column("created_at", TS, nullable=False),
    sa.Column("revoked_at", TS, nullable=True),
)

console_tool_calls = sa.Table(
    "console_tool_calls",
    metadata,
    sa.Column("call_id", BIGINT, primary_key=True, autoincrement=True),
    sa.Column("called_at", TS, nullable=False),
    sa.Column("tool", sa.String(64), nullable=False),
    sa.Column("caller", sa.String(64), nullable=True),
    sa.Column("outcome", sa.String(32), nullable=False),
    sa.Column("code", sa.Integer, nullable=True),
    sa.Column("duration_us", sa.BigInteger, nullable=False),
)

# The console owner's passkeys (see 0026), by their credential id (base64url), and the one
# challenge a session may hold per ceremony, found by the session's token hash.
console_passkeys = sa.Table(
    "console_passkeys",
    metadata,
    sa.Column("credential_id", sa.String(1400), primary_key=True),
    sa.Column("user_handle", sa.String(128), nullable=False),
    sa.Column("public_key", sa.LargeBinary, nullable=False),
    sa.Column("sign_count", sa.BigInteger, nullable=False),
    sa.Column("label", sa.String(64), nullable=False),
    sa.Column("created_at", TS, nullable=False),
    sa.Column("last_used_at", TS, nullable=True),
)

console_challenges = sa.Table(
    "console_challenges",
    metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    sa.Column("ceremony", sa.String(16), primary_key=True),
    sa.Column("challenge", sa.String(128), nullable=False),
    sa.Column("expires_at", TS, nullable=False),
)
sa.Index("ix_console_challenges_expiry", console_challenges.c.expires_at)

# The code the owner's first passkey is made with (see 0027): one row at most.
console_first_passkey = sa.Table(
    "console_first_passkey",
    metadata,
    sa.Column("code_sha256", sa.String(64), primary_key=True),
    sa.Column("expires_at", TS, nullable=False),
)

# Who does a piece of background work: an account's synchronization ("account", its id) or
# work of the whole deployment ("deployment", e.g. "embedding"). Every claim adds one to
# `fence`; a write of the work checks `holder` and `fence` (see adapters/sql/fencing.py).
work_leases = sa.Table(
    "work_leases",
    metadata,
    sa.Column("kind", sa.String(16), primary_key=True),
    sa.Column("subject", sa.String(64), primary_key=True),
    sa.Column("holder", sa.String(128)),
    sa.Column("fence", sa.BigInteger, nullable=False),
    sa.Column("expires_at", TS),
    # The holder's process (`adapters.processes`, 0031): on its machine, a lease it holds is
    # taken at once once the process is gone.
    sa.Column("holder_process", sa.String(64)),
)

# The workers alive, each until its last heartbeat's `seen_until`: how many share the accounts.
lease_workers = sa.Table(
    "lease_workers",
    metadata,
    sa.Column("worker_id", sa.String(128), primary_key=True),
    sa.Column("seen_until", TS, nullable=False),
    sa.Column("process", sa.String(64)),
)

# What replicas of the MCP endpoint share between requests (see 0030).
mcp_sessions = sa.Table(
    "mcp_sessions",
    metadata,
    sa.Column("reservation", sa.String(32), primary_key=True),
    sa.Column("session_id", sa.String(64), nullable=True, unique=True),
    sa.Column("caller", sa.String(64), nullable=False),
    sa.Column("principal", sa.Text(), nullable=True),
    sa.Column("protocol_version", sa.String(32), nullable=True),
    sa.Column("client_params", sa.Text(), nullable=True),
    sa.Column("last_used", TS, nullable=False),
    sa.Index("ix_mcp_sessions_caller", "caller", "last_used"),
)

mcp_questions_waiting = sa.Table(
    "mcp_questions_waiting",
    metadata,
    sa.Column("question_id", sa.String(32), primary_key=True),
    sa.Column("caller", sa.String(64), nullable=False),
    sa.Column("session_id", sa.String(64), nullable=False),
    sa.Column("replica", sa.String(32), nullable=False),
    sa.Column("asked_at", TS, nullable=False),
    sa.Index("ix_mcp_questions_waiting_caller", "caller"),
    sa.Index("ix_mcp_questions_waiting_session", "session_id"),
)

mcp_answers = sa.Table(
    "mcp_answers",
    metadata,
    sa.Column("answer_id", sa.Integer(), primary_key=True, autoincrement=True),
    sa.Column("replica", sa.String(32), nullable=False),
    sa.Column("session_id", sa.String(64), nullable=False),
    sa.Column("body", sa.Text(), nullable=False),
    sa.Column("arrived_at", TS, nullable=False),
    sa.Index("ix_mcp_answers_replica", "replica", "answer_id"),
)
