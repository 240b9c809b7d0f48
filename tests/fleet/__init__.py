"""A fleet of `mailfathom worker` processes over many IMAP accounts, agents acting on them,
workers killed at random, and the checks that nothing was lost, doubled or left undone.

Shared by bench/fleet_simulation.py (3 Dovecot servers, 300 accounts, minutes of chaos) and
the short version in tests/sync/test_fleet_chaos.py, so both judge a run the same way."""
