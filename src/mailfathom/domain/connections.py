"""How a connection to a mail server is protected, and where its secret is read from."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path


class TlsMode(enum.Enum):
    """How a connection is protected: implicit TLS, STARTTLS, or none (loopback only)."""

    IMPLICIT = "implicit"
    STARTTLS = "starttls"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class SecretRef:
    """Where a secret is read from: exactly one of an environment variable or a file.

    `origin` names the configuration key the reference came from (for example
    `Accounts[0].Imap.Secret`), so a failure to read it can say which setting to fix without
    repeating anything sensitive. It takes no part in comparisons.
    """

    env: str | None = None
    file: Path | None = None
    origin: str = field(default="", compare=False)
