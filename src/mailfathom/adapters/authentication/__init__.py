"""Who sent a message: a trusted receiving server's report, or the message's own DKIM
signatures verified here, reached once at synchronization and stored.

The engine is in `engine` (`build_sender_verifier`); this package imports nothing itself, so
that reading a stored verdict or marking imported mail (`deployment_results`) does not load
dkim and dnspython."""
