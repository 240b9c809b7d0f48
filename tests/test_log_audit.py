"""No log line of the whole run repeats mail content a test used."""

from __future__ import annotations

import log_audit


def test_no_log_line_of_the_run_carries_mail_content() -> None:
    path = log_audit.copy_path()
    assert path is not None
    text = path.read_text("utf-8", "replace").lower() if path.exists() else ""
    fragments = log_audit.registered()
    if fragments:
        # Tests ran that use mail; their processes log, so an empty copy means the audit
        # was reading the wrong place.
        assert text, "no log line was copied"
    found = sorted(f for f in fragments if f.lower() in text)
    assert not found, f"{len(found)} registered fragments appear in the logs: {found[:20]}"
