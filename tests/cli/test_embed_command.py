"""`mfctl mailbox embed`: as an operator runs it without a profile, and its progress and
report over a deployment's stored mail with an in-process embedder, to the end, resumed
after a provider failure."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import sqlalchemy as sa
from rich.console import Console

from fakes.embedder import FakeEmbedder
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.schema import embedded_messages, folders, messages
from mailfathom.app.shared.stored_mail import SummaryFilter
from mailfathom.bootstrap import Services
from mailfathom.domain.codes import CommandCode, EmbeddingCode
from mailfathom.domain.embedding import EmbeddingFailure
from mailfathom.domain.errors import MailFathomError
from mailfathom.entrypoints.cli.embedding import embed_with_progress

from .operator_cli import local_config, one_error_line, run_to_exit


def test_embed_without_a_profile_fails_with_its_code(tmp_path: Path) -> None:
    config = local_config(tmp_path)
    result = run_to_exit(tmp_path, "mailbox", "embed", "--config", str(config))
    one_error_line(result, int(CommandCode.NO_EMBEDDING_PROFILE))


def test_embed_runs_to_the_end_and_resumes_after_a_failing_provider(tmp_path: Path) -> None:
    deployment = load_config(local_config(tmp_path))
    with Services.open(deployment) as services:
        account = deployment.accounts[0]
        services.deliver_sample_mail(account.account_id, 40)
        services.account_synchronizer().run_once(account)
        embedder = FakeEmbedder(dimension=512)
        services.embedder = embedder
        embedder.fail_next(EmbeddingFailure.UNREACHABLE)
        out = io.StringIO()
        console = Console(file=out, width=200, force_terminal=False)
        with pytest.raises(MailFathomError) as stopped:
            embed_with_progress(services, console)
        assert stopped.value.code == CommandCode.EMBEDDING_STOPPED
        assert str(EmbeddingCode.PROVIDER_UNREACHABLE.value) in str(stopped.value)
        report = embed_with_progress(services, console)
        state = report.state
        assert state.filled
        assert state.embedded == state.eligible > 0
        assert report.messages == state.embedded
        assert f"{state.embedded} of {state.eligible} messages are embedded" in out.getvalue()
        again = embed_with_progress(services, console)
        assert again.messages == 0
        # The search path's reader ranks the embedded mail by meaning (here: by its words).
        with services.engine.connect() as c:
            seq, subject = c.execute(
                sa.select(messages.c.seq, messages.c.subject)
                .join(embedded_messages, embedded_messages.c.seq == messages.c.seq)
                .order_by(messages.c.seq.desc())
                .limit(1)
            ).one()
            folder_ids = tuple(c.execute(sa.select(folders.c.folder_id)).scalars())
        found = services._reader().nearest(
            embedder.identity.generation,
            embedder.embed_query(subject),
            SummaryFilter(folder_ids=folder_ids),
            3,
        )
        assert seq in [n.seq for n in found]
