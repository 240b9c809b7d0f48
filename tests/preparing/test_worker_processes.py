"""The preparation workers: lean processes that end with the program that started them."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from mailfathom.adapters.preparer import WORKER_NICENESS

# A program shaped like the `mailfathom` command: its main module imports the command line
# at the top, then hands a batch to the preparer and asks a worker what it has imported
# (through a module beside it, since a worker does not run the main module).
PROGRAM = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    import mailfathom.entrypoints.cli.main  # what the installed command imports first

    from mailfathom.adapters import preparer
    import probe

    if __name__ == "__main__":
        prepare = preparer.MimeMessagePreparer(Path(sys.argv[1]), workers=2)
        prepare.expect(100)
        raw = b"Subject: hello\\r\\nMessage-ID: <a@b>\\r\\n\\r\\nbody\\r\\n"
        prepared = prepare.start_batch([(raw, False)] * preparer.POOL_THRESHOLD).result()
        pool = prepare._ensure_pool()
        seen = pool.submit(probe.loaded_modules).result()
        print(json.dumps({"prepared": len(prepared), "worker_modules": seen}))
        prepare.close()
    """
)


def test_workers_do_not_import_the_program_that_starts_them(tmp_path: Path) -> None:
    answer = _run_program(
        tmp_path,
        PROGRAM,
        "import sys\n\n\ndef loaded_modules():\n    return sorted(sys.modules)\n",
    )
    assert answer["prepared"] > 0
    modules = set(answer["worker_modules"])
    assert "mailfathom.adapters.mime" in modules
    for heavy in ("mailfathom.entrypoints.cli.main", "typer", "sqlalchemy", "rich"):
        assert heavy not in modules, heavy


def test_workers_run_at_a_lower_priority_than_the_process_that_starts_them(
    tmp_path: Path,
) -> None:
    # The synchronizing thread commits while the workers prepare; on a busy machine a worker
    # should yield the core to it (and to the reading tools), never the other way round.
    answer = _run_program(
        tmp_path,
        textwrap.dedent(
            """
            import json, os, sys
            from pathlib import Path
            from mailfathom.adapters import preparer
            import probe

            if __name__ == "__main__":
                prepare = preparer.MimeMessagePreparer(Path(sys.argv[1]), workers=2)
                pool = prepare._ensure_pool()
                theirs = {pool.submit(probe.niceness).result() for _ in range(8)}
                print(json.dumps({"ours": os.nice(0), "workers": sorted(theirs)}))
                prepare.close()
            """
        ),
        "import os\n\n\ndef niceness():\n    return os.nice(0)\n",
    )
    assert answer["workers"] == [min(answer["ours"] + WORKER_NICENESS, 19)]


def _run_program(tmp_path: Path, program: str, probe: str) -> dict[str, Any]:
    """Run `program` in a fresh interpreter, with `probe` importable beside it (a worker does
    not run the program's main module), and return the JSON of its last output line."""
    script = tmp_path / "program.py"
    script.write_text(program)
    (tmp_path / "probe.py").write_text(probe)
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "content")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer
