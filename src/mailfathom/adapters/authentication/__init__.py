"""Who sent a message: a trusted receiving server's report, or the message's own DKIM
signatures verified here, reached once at synchronization and stored."""

from mailfathom.adapters.authentication.engine import (
    Examination,
    SenderVerificationEngine,
    build_sender_verifier,
)

__all__ = ["Examination", "SenderVerificationEngine", "build_sender_verifier"]
