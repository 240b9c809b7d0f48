"""What replicas of the MCP endpoint share between requests.

Revision ID: 0030_mcp_replicas
Revises: 0029_work_leases

`mcp_sessions` holds each open session of the handshake protocol generation (`initialize`,
then `Mcp-Session-Id`): the caller entry that opened it, the principal of the token it was
opened with, the negotiated protocol version and the client's `initialize` parameters, so
any replica can serve its next request; a row is keyed by the place reserved for it before
the session had an id, so a caller's bound counts sessions being opened too.
`mcp_questions_waiting` holds each question put to a person within a call held open, by the
replica that waits for the answer; `mcp_answers` holds an answer that reached another
replica, until the waiting one takes it. Going below this revision ends every open session
(clients open new ones) and drops questions in flight (they are asked again).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0030_mcp_replicas"
down_revision = "0029_work_leases"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "mcp_sessions",
        sa.Column("reservation", sa.String(32), primary_key=True),
        sa.Column("session_id", sa.String(64), nullable=True, unique=True),
        sa.Column("caller", sa.String(64), nullable=False),
        sa.Column("principal", sa.Text(), nullable=True),
        sa.Column("protocol_version", sa.String(32), nullable=True),
        sa.Column("client_params", sa.Text(), nullable=True),
        sa.Column("last_used", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_mcp_sessions_caller", "mcp_sessions", ["caller", "last_used"])
    op.create_table(
        "mcp_questions_waiting",
        sa.Column("question_id", sa.String(32), primary_key=True),
        sa.Column("caller", sa.String(64), nullable=False),
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("replica", sa.String(32), nullable=False),
        sa.Column("asked_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_mcp_questions_waiting_caller", "mcp_questions_waiting", ["caller"])
    op.create_index("ix_mcp_questions_waiting_session", "mcp_questions_waiting", ["session_id"])
    op.create_table(
        "mcp_answers",
        sa.Column("answer_id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("replica", sa.String(32), nullable=False),
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("arrived_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_mcp_answers_replica", "mcp_answers", ["replica", "answer_id"])


def downgrade() -> None:
    op.drop_index("ix_mcp_answers_replica", table_name="mcp_answers")
    op.drop_table("mcp_answers")
    op.drop_index("ix_mcp_questions_waiting_session", table_name="mcp_questions_waiting")
    op.drop_index("ix_mcp_questions_waiting_caller", table_name="mcp_questions_waiting")
    op.drop_table("mcp_questions_waiting")
    op.drop_index("ix_mcp_sessions_caller", table_name="mcp_sessions")
    op.drop_table("mcp_sessions")
