"""Opening the store on a machine that may not allow it: the operating system's and the
database driver's refusals become a `StoreError` with a code an operator can act on, never a
traceback. The text names configuration keys, not the values (a database URL may hold a
user name), nor the driver's message (which may repeat them)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import sqlalchemy as sa

from mailfathom.domain.codes import StoreCode
from mailfathom.domain.errors import StoreError


def data_dir_not_writable() -> StoreError:
    return StoreError(
        "Store.DataDir cannot be created or written (not permitted, or a file is in the way).",
        code=int(StoreCode.DATA_DIR_NOT_WRITABLE),
    )


@contextlib.contextmanager
def refusals_as_store_errors() -> Iterator[None]:
    try:
        yield
    except (sa.exc.OperationalError, sa.exc.InterfaceError):
        raise StoreError(
            "The store's database cannot be opened: the server in Store.DatabaseUrl does not "
            "answer or refuses the connection, or the database file under Store.DataDir "
            "cannot be opened.",
            code=int(StoreCode.DATABASE_NOT_OPENED),
        ) from None
    except OSError:
        raise data_dir_not_writable() from None
