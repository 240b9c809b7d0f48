"""Each migration's docstring names the revision it is and the one it revises, as its code does.

A reader follows the chain by the headers; Alembic follows `revision` and `down_revision`.
"""

from __future__ import annotations

from alembic.config import Config
from alembic.script import ScriptDirectory

from mailfathom.adapters.sql import migrate


def test_each_migration_s_header_agrees_with_its_revisions() -> None:
    config = Config()
    config.set_main_option("script_location", str(migrate.MIGRATIONS_DIR))
    scripts = list(ScriptDirectory.from_config(config).walk_revisions())
    assert len(scripts) >= 19
    for script in scripts:
        header = {
            name: value.strip()
            for name, _, value in (
                line.partition(":") for line in (script.module.__doc__ or "").splitlines()
            )
            if name in ("Revision ID", "Revises")
        }
        revises = script.down_revision
        assert isinstance(revises, str | None), script.revision
        assert header == {"Revision ID": script.revision, "Revises": revises or ""}, script.path
