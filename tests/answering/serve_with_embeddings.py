"""`mailfathom serve` as it will run once mail can be embedded: the same command line, with
what the deployment can do with embeddings read from a file a test writes (`available`,
`degraded` or `inactive`, read at every listing and question).

ask_mail is offered only while mail is embedded, and no configuration can ask for embeddings
yet (`bootstrap.semantic_search` answers `inactive`); this is the one part of the served
process a test replaces, so everything else a question passes through is the product's.
Run as `python -m answering.serve_with_embeddings serve ...` with the file named in
`MF_TEST_SEMANTIC_STATE_FILE`."""

from __future__ import annotations

import os
from pathlib import Path

from mailfathom import bootstrap
from mailfathom.domain.config import DeploymentConfig
from mailfathom.domain.embedding import SemanticState

STATE_FILE = "MF_TEST_SEMANTIC_STATE_FILE"


class SemanticStateFile:
    def __init__(self, path: Path) -> None:
        self._path = path

    def state(self) -> SemanticState:
        return SemanticState(self._path.read_text("utf-8").strip())


def _from_file(config: DeploymentConfig) -> SemanticStateFile:
    del config
    return SemanticStateFile(Path(os.environ[STATE_FILE]))


if __name__ == "__main__":
    bootstrap.semantic_search = _from_file
    from mailfathom.entrypoints.cli.main import main

    main()
