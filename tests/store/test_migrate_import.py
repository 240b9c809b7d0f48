"""Opening a store that is already at the newest schema does not load Alembic."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url

PROGRAM = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from mailfathom.adapters.sql import migrate
    from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url

    engine = create_store_engine(sqlite_url(Path(sys.argv[1])))
    migrate.upgrade(engine)
    print(json.dumps({"alembic_loaded": "alembic" in sys.modules,
                      "revision": migrate.stored_revision(engine)}))
    engine.dispose()
    """
)


def _open_in_a_fresh_process(database: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(database)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    answer: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def test_an_up_to_date_store_opens_without_alembic_and_an_old_one_is_migrated(
    tmp_path: Path,
) -> None:
    database = tmp_path / "store.sqlite3"
    first = _open_in_a_fresh_process(database)  # a new file: every migration runs
    assert first == {"alembic_loaded": True, "revision": migrate.NEWEST_REVISION}
    again = _open_in_a_fresh_process(database)
    assert again == {"alembic_loaded": False, "revision": migrate.NEWEST_REVISION}

    engine = create_store_engine(sqlite_url(database))
    migrate.downgrade(engine, "0002_read_indexes")
    engine.dispose()
    older = _open_in_a_fresh_process(database)
    assert older == {"alembic_loaded": True, "revision": migrate.NEWEST_REVISION}
