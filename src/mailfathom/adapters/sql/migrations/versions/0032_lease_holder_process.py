"""The process behind each lease, each worker's heartbeat and each send being delivered.

Revision ID: 0032_lease_holder_process
Revises: 0031_folder_versions

`work_leases.holder_process`, `lease_workers.process` and `outgoing_emails.lease_process` name
the process that claimed the lease, sent the heartbeat or claimed the send: its machine,
process id and start (`adapters.processes`). A process of the same machine that finds that
process gone takes its leases (and recovers its sends) at once instead of waiting for them to
expire, so a one-off `sync` or a worker restarted after being killed goes on at once. Rows
written before this revision name no process and expire as before. The columns are nullable,
so adding them rewrites no row.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0032_lease_holder_process"
down_revision = "0031_folder_versions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("work_leases", sa.Column("holder_process", sa.String(64)))
    op.add_column("lease_workers", sa.Column("process", sa.String(64)))
    op.add_column("outgoing_emails", sa.Column("lease_process", sa.String(64)))


def downgrade() -> None:
    # Not by copying the table: SQLite drops a table being replaced with its foreign keys
    # on, which would delete every send's recipients with it (ON DELETE CASCADE).
    op.drop_column("outgoing_emails", "lease_process")
    with op.batch_alter_table("lease_workers") as batch:
        batch.drop_column("process")
    with op.batch_alter_table("work_leases") as batch:
        batch.drop_column("holder_process")
