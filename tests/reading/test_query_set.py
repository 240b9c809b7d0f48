"""The labelled query set (bench/data/query_set.json) is well-formed: every relevant message
is a message of the collection, paraphrases share no content word with what they should
find, exact queries use only words their messages hold, and there are enough of each."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import labelled_queries
from labelled_queries import DISJOINT_KINDS, Kind, LabelledQuery

QUERIES = labelled_queries.load()


def test_the_set_holds_enough_queries_and_mostly_paraphrases() -> None:
    kinds = Counter(q.kind for q in QUERIES)
    assert len(QUERIES) >= 130
    assert kinds[Kind.PARAPHRASE] * 2 >= len(QUERIES)
    assert kinds[Kind.EXACT] >= 20
    assert kinds[Kind.QUESTION] >= 5
    assert kinds[Kind.CROSSLINGUAL] >= 5
    assert len({q.query_id for q in QUERIES}) == len(QUERIES)
    assert len({q.text.casefold() for q in QUERIES}) == len(QUERIES)
    assert all(q.relevant and q.note for q in QUERIES)


def test_every_relevant_message_is_a_message_of_the_collection(corpora: Path) -> None:
    collection = set(labelled_queries.collection_names(corpora))
    for query in QUERIES:
        assert len(set(query.relevant)) == len(query.relevant), query.query_id
        assert set(query.relevant) <= collection, query.query_id


def test_paraphrases_share_no_content_word_with_their_messages(corpora: Path) -> None:
    shared = {
        q.query_id: labelled_queries.shared_words(q, corpora)
        for q in QUERIES
        if q.kind in DISJOINT_KINDS
    }
    assert {k: v for k, v in shared.items() if v} == {}


def test_exact_queries_use_only_words_their_messages_hold(corpora: Path) -> None:
    missing = {
        q.query_id: labelled_queries.missing_words(q, corpora)
        for q in QUERIES
        if q.kind is Kind.EXACT
    }
    assert {k: v for k, v in missing.items() if v} == {}


def test_every_message_of_the_collection_has_a_message_id_of_its_own(corpora: Path) -> None:
    names = labelled_queries.collection_names(corpora)
    assert len(labelled_queries.message_ids(corpora, names)) == len(names) > 5000


MESSAGE = (
    b"From: Flat Owner <owner@example.org>\r\nTo: tenant@example.org\r\n"
    b"Subject: The kitchen ceiling\r\nMessage-ID: <leak-1@example.org>\r\n\r\n"
    b"Water has been leaking through the ceiling since Monday.\r\n"
)


def _query(text: str) -> LabelledQuery:
    return LabelledQuery("t1", text, Kind.PARAPHRASE, ("mail/leak.eml",), "")


@pytest.mark.parametrize(
    ("text", "shared"),
    [
        ("what did the landlord say about the leak?", {"leak"}),  # leaking, stemmed
        ("Kitchen damage", {"kitchen"}),  # in the subject, any case
        ("a note from the owner", {"owner"}),  # a participant's name
        ("water damage in the flat", {"water", "flat"}),
        ("what did the landlord say about the dripping roof?", set()),  # nothing in common
    ],
)
def test_the_checker_finds_words_shared_after_folding_and_stemming(
    tmp_path: Path, text: str, shared: set[str]
) -> None:
    (tmp_path / "mail").mkdir()
    (tmp_path / "mail" / "leak.eml").write_bytes(MESSAGE)
    assert labelled_queries.shared_words(_query(text), tmp_path) == shared


def test_the_checker_reads_a_mbox_envelope_line_as_no_part_of_the_message(
    tmp_path: Path,
) -> None:
    (tmp_path / "mail").mkdir()
    (tmp_path / "mail" / "leak.eml").write_bytes(
        b"From envelope-sender@example.net Mon Sep  2 10:00:00 2002\n" + MESSAGE
    )
    assert labelled_queries.shared_words(_query("envelope sender"), tmp_path) == set()
    assert labelled_queries.shared_words(_query("a leak"), tmp_path) == {"leak"}
