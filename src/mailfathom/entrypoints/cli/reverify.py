"""`mfctl mailbox reverify`: stored mail verified and assessed again, with a progress bar."""

from __future__ import annotations

from rich.console import Console

from mailfathom.app.sync.reverify import ReverifyReport
from mailfathom.bootstrap import Services
from mailfathom.domain.codes import CommandCode
from mailfathom.domain.config import AccountConfig
from mailfathom.domain.errors import MailFathomError
from mailfathom.entrypoints.cli.progress import counting_bar


class NoTrustPorts(MailFathomError):
    def __init__(self) -> None:
        super().__init__(
            "Nothing to verify with: this deployment wires no sender verifier and no "
            "authorship assessor.",
            code=int(CommandCode.NO_TRUST_PORTS),
        )


def reverify_with_progress(
    services: Services, account: AccountConfig, console: Console
) -> ReverifyReport:
    """Verify and assess the account's stored mail again, resuming an interrupted run."""
    ports = services.trust_ports(account)
    if not ports.wired:
        raise NoTrustPorts()
    with counting_bar(console) as bar:
        task = bar.add_task(account.account_id, total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        report = services.reverification().run(account.account_id, ports, advance)
    resumed = f" (resumed after {report.resumed_after})" if report.resumed_after else ""
    console.print(
        f"{account.account_id}: {report.reverified} message(s) verified and assessed again"
        f"{resumed}; {report.without_content} stored without their content, "
        f"{report.unreadable} whose stored content could not be read",
        highlight=False,
    )
    return report
