"""In-memory fakes of the store's ports, for the fast tier of use-case tests.

Each fake keeps its rows in plain Python structures behind one lock, so every method is one
atomic step, as a transaction is on the real stores. The store contract suites run every
fake as a third backend next to SQLite and PostgreSQL: a fake that drifts from the adapters
fails the same tests they pass.
"""
