"""Which tables hold one account's rows, and how they spread when one database is not enough.

Every table of `schema.metadata` is in exactly one of the groups below (a test holds them to
the schema; docs/scaling.md lists them with the reasons):

- `PER_ACCOUNT`: rows that belong to one account and carry its `account_id`, the column a
  partitioned or distributed layout splits them by;
- `SHARED`: rows of the deployment as a whole (the console, the contact book, the embedding
  spaces, what callers spent), never split by account.

`PARTITIONED_TABLES` are the large per-account tables: the messages and everything keyed by a
message's `seq`, which `partitioning.py` lays out as `PARTITION BY HASH (account_id)`.

`SCOPED_CHILDREN` are the per-account children of the outbox and the drafts: keyed by their
parent's `(account_id, seq)` (revision 0033), and left unpartitioned like their parents (a few
rows per send or draft, and the delivery pass claims due sends of every account at once).
"""

from __future__ import annotations

DISTRIBUTION_COLUMN = "account_id"

PARTITIONED_TABLES = (
    "messages",
    "message_bodies",
    "participants",
    "message_identifiers",
    "parts",
    "keywords",
    "repair_requests",
    "message_search",
    "message_trust",
    "embedded_messages",
    "passage_vectors",
)

SCOPED_CHILDREN = (
    "outgoing_recipients",
    "draft_recipients",
    "draft_files",
    "draft_copies",
)

PER_ACCOUNT = (
    "accounts",
    "folders",
    "folder_versions",
    "search_versions",
    *PARTITIONED_TABLES,
    "outgoing_emails",
    *SCOPED_CHILDREN,
    "drafts",
    "owner_alerts",
    "mutation_records",
    "folder_creations",
    "trust_positions",
    "embedding_positions",
    "account_health",
    "account_warnings",
    "sync_failures",
)

SHARED = (
    "contacts",
    "contact_addresses",
    "embedding_generations",
    "answering_budget",
    "provider_health",
    "console_owner",
    "console_sessions",
    "console_login_failures",
    "console_api_keys",
    "console_tool_calls",
    "console_passkeys",
    "console_challenges",
    "console_first_passkey",
    "work_leases",
    "lease_workers",
    "mcp_sessions",
    "mcp_questions_waiting",
    "mcp_answers",
)
