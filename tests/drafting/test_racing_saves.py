"""Twenty identical save_draft calls at once write one draft and file one copy, on SQLite and
on PostgreSQL; a different caller's identical call is a draft of its own."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import sqlalchemy as sa

from drafting.helpers import AGENT, PEER, drafting_deployment
from log_audit import register_all
from mailfathom.adapters.sql.schema import drafts
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from servers.dovecot import ImapAccount

SUBJECT = "Bring the ladder on Saturday"
BODY = "Could you bring the long ladder on Saturday morning?"


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def test_twenty_identical_saves_at_once_write_one_draft_and_one_copy(
    request: pytest.FixtureRequest, tmp_path: Path, imap_account: ImapAccount, backend: str
) -> None:
    register_all([SUBJECT, BODY])
    url = request.getfixturevalue("migrated_postgres_url") if backend == "postgresql" else None
    with drafting_deployment(tmp_path, imap_account, database_url=url) as d:
        save = d.services.drafting().save
        call = DraftRequest(plain_text_body=BODY, account="work", subject=SUBJECT, to=[PEER])
        barrier = threading.Barrier(20)

        def one(_: int) -> str:
            barrier.wait()
            return str(save.save(AGENT, call).draft_id)

        with ThreadPoolExecutor(max_workers=20) as pool:
            answered = set(pool.map(one, range(20)))
        assert len(answered) == 1
        with d.services.engine.connect() as c:
            assert c.execute(sa.select(sa.func.count()).select_from(drafts)).scalar_one() == 1
        assert len(d.folder_uids("Drafts")) == 1

        other = Caller(permissions=ALL_PERMISSIONS, label="other-agent")
        assert str(save.save(other, call).draft_id) not in answered
