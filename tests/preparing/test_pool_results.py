"""What the worker processes hand back is what preparing in process gives, and the text they
keep in the packs is the plain body they hand back."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mailfathom.adapters import preparer
from mailfathom.adapters.content.packs import PackContentStore

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import mailgen


@pytest.mark.process
def test_a_batch_prepared_by_workers_equals_one_prepared_in_process(tmp_path: Path) -> None:
    raws = [m.raw for m in mailgen.generate(preparer.POOL_THRESHOLD * 3, seed=11)]
    raws.append(raws[0])  # the same message twice in one batch
    items = [(raw, i % 10 == 9) for i, raw in enumerate(raws)]  # some headers only
    pooled = preparer.MimeMessagePreparer(tmp_path / "pooled", workers=2)
    try:
        by_workers = pooled.start_batch(items).result(timeout=120)
        again = pooled.start_batch(items).result(timeout=120)  # every key known already
    finally:
        pooled.close()
    by_process = preparer.MimeMessagePreparer(tmp_path / "local", workers=0)
    in_process = by_process.start_batch(items).result()

    assert by_workers == in_process
    assert again == in_process
    texts = [p.stored_text for p in in_process]
    assert all(bool(t) != headers for t, (_, headers) in zip(texts, items, strict=True))
    content = PackContentStore(tmp_path / "pooled")
    for p in by_workers:
        if p.content_key is not None:
            plain, _ = content.get_text(p.content_key)
            assert plain.encode() == p.stored_text
