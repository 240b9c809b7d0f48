"""How much may be sent: the deployment's send ceilings, per account, installation and client."""

from __future__ import annotations

from collections.abc import Sequence

from mailfathom.app.sending.ports import CeilingLimit
from mailfathom.domain.codes import Code
from mailfathom.domain.config import DeploymentConfig
from mailfathom.domain.delivery_config import Ceiling
from mailfathom.domain.errors import Refusal

_HOUR = 3600.0
_DAY = 86400.0


def _limits(ceiling: Ceiling, scope: str, **owner: str) -> list[CeilingLimit]:
    found = []
    for limit, window, period in (
        (ceiling.per_hour, _HOUR, "hourly"),
        (ceiling.per_day, _DAY, "daily"),
    ):
        if limit is not None:
            found.append(CeilingLimit(f"{scope} {period} ceiling", limit, window, **owner))
    return found


def ceilings(config: DeploymentConfig, account_id: str, caller: str) -> Sequence[CeilingLimit]:
    configured = config.mail_delivery.ceilings
    return [
        *_limits(configured.account, "the account's", account_id=account_id),
        *_limits(configured.installation, "the installation's"),
        *_limits(configured.client, "this client's", caller=caller),
    ]


def ceiling_refusal(name: str) -> Refusal:
    return Refusal(
        Code.SEND_CEILING_REACHED,
        f"Sending this message would pass {name} (MailDelivery.SendCeilings); ask again "
        "after the period rolls over.",
    )
