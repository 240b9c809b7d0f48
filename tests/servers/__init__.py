"""Launchers for real servers (Dovecot, PostgreSQL) used by the test suite."""
