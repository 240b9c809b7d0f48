"""`mfctl mailbox embed`: stored mail placed in the active profile's space, with a progress
bar, to the end."""

from __future__ import annotations

from rich.console import Console

from mailfathom.app.shared.embedding_ports import EmbeddingUnavailable
from mailfathom.app.shared.vector_ports import FillState
from mailfathom.app.sync.embedding import EmbedReport
from mailfathom.bootstrap import Services
from mailfathom.domain.codes import CommandCode
from mailfathom.domain.embedding import failure_code
from mailfathom.domain.errors import MailFathomError
from mailfathom.entrypoints.cli.progress import counting_bar


class NoEmbeddingProfile(MailFathomError):
    def __init__(self) -> None:
        super().__init__(
            "Nothing to embed with: this deployment has no embedding profile active.",
            code=int(CommandCode.NO_EMBEDDING_PROFILE),
        )


class EmbeddingStopped(MailFathomError):
    def __init__(self, error: EmbeddingUnavailable, state: FillState) -> None:
        super().__init__(
            f"The embedding provider could not embed ({error.failure.value}, "
            f"{failure_code(error.failure)}); {state.embedded} of {state.eligible} messages "
            "are embedded, and the next run resumes after them.",
            code=int(CommandCode.EMBEDDING_STOPPED),
        )


def embed_with_progress(services: Services, console: Console) -> EmbedReport:
    """Embed every stored message the active generation has not read, resuming where an
    interrupted run or the backfill stopped."""
    embedding = services.embedding(windowed=False)
    if embedding is None:
        raise NoEmbeddingProfile()
    with counting_bar(console) as bar:
        task = bar.add_task("embedding", total=None)

        def advance(state: FillState) -> None:
            bar.update(task, completed=state.embedded, total=state.eligible)

        try:
            report = embedding.run(advance)
        except EmbeddingUnavailable as error:
            raise EmbeddingStopped(error, embedding.fill_state()) from None
    resumed = f" ({report.resumed_with} embedded before)" if report.resumed_with else ""
    console.print(
        f"{report.messages} message(s) embedded, {report.passages} passage(s){resumed}; "
        f"{report.state.embedded} of {report.state.eligible} messages are embedded "
        f"({report.state.generation}).",
        highlight=False,
    )
    return report
