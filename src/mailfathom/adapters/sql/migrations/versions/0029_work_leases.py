"""Leases on background work, and the workers that hold them.

Revision ID: 0029_work_leases
Revises: 0028_account_scoped_children

`work_leases` has one row per piece of work several processes could do: an account's
synchronization (kind "account") or a deployment's single worker (kind "deployment"). A worker
claims a row whose holder is empty or whose lease expired, and every claim adds one to `fence`.
`lease_workers` holds each live worker's heartbeat, so the workers can share the accounts.
Going below this revision forgets every lease: the processes that held them must be stopped.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0029_work_leases"
down_revision = "0028_account_scoped_children"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "work_leases",
        sa.Column("kind", sa.String(16), primary_key=True),
        sa.Column("subject", sa.String(64), primary_key=True),
        sa.Column("holder", sa.String(128)),
        sa.Column("fence", sa.BigInteger, nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True)),
    )
    op.create_table(
        "lease_workers",
        sa.Column("worker_id", sa.String(128), primary_key=True),
        sa.Column("seen_until", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("lease_workers")
    op.drop_table("work_leases")
