"""`[Store] ContentStore` and `[Store.ObjectStore]`: packs unless S3 is asked for, an object
store fully described when it is, and its keys kept as secret references only."""

from __future__ import annotations

from typing import Any

from config.test_config_loading import BASE_DIR, imap_account, parse, problems_of
from mailfathom.domain.config import SecretRef
from mailfathom.domain.content_storage import AddressingStyle, ContentStoreKind, ObjectStoreConfig

OBJECTS = {
    "Endpoint": "https://s3.internal.example:9000",
    "Bucket": "mailfathom-content",
    "AccessKeySecret": {"Env": "MF_S3_ACCESS"},
    "SecretKeySecret": {"File": "keys/s3-secret"},
}


def with_store(**store: Any) -> dict[str, Any]:
    return {"Accounts": [imap_account()], "Store": store}


def test_content_is_kept_in_packs_unless_said_otherwise() -> None:
    store = parse({"Accounts": [imap_account()]}).store
    assert store.content_store is ContentStoreKind.PACKS
    assert store.object_store is None
    assert parse(with_store(ContentStore="packs")).store.object_store is None


def test_an_object_store_is_read_with_its_defaults() -> None:
    store = parse(with_store(ContentStore="s3", ObjectStore=OBJECTS)).store
    assert store.content_store is ContentStoreKind.S3
    assert store.object_store == ObjectStoreConfig(
        bucket="mailfathom-content",
        endpoint="https://s3.internal.example:9000",
        access_key_secret=SecretRef(env="MF_S3_ACCESS"),
        secret_key_secret=SecretRef(file=BASE_DIR / "keys/s3-secret"),
    )


def test_every_key_of_an_object_store_is_read() -> None:
    objects = {
        **OBJECTS,
        "Endpoint": "http://127.0.0.1:9000",
        "Region": "eu-central-1",
        "Prefix": "team-a/",
        "CaFile": "ca/s3.pem",
        "AddressingStyle": "virtual",
        "TimeoutSeconds": 2.5,
        "Concurrency": 4,
    }
    found = parse(with_store(ContentStore="s3", ObjectStore=objects)).store.object_store
    assert found is not None
    assert (found.endpoint, found.region, found.prefix) == (
        "http://127.0.0.1:9000",
        "eu-central-1",
        "team-a/",
    )
    assert found.ca_file == BASE_DIR / "ca/s3.pem"
    assert found.addressing_style is AddressingStyle.VIRTUAL
    assert (found.timeout_seconds, found.concurrency) == (2.5, 4)


def test_the_store_and_its_table_go_together() -> None:
    assert problems_of(with_store(ContentStore="s3")) == [
        'Store.ObjectStore: is required with ContentStore = "s3"'
    ]
    assert problems_of(with_store(ObjectStore=OBJECTS)) == [
        'Store.ObjectStore: applies only with ContentStore = "s3"'
    ]
    assert any(
        "must be one of packs | s3" in p for p in problems_of(with_store(ContentStore="disk"))
    )


def test_an_object_store_breaking_a_rule_is_refused() -> None:
    objects = {
        **OBJECTS,
        "Endpoint": "http://s3.internal.example",
        "Bucket": "Not_A_Bucket",
        "Prefix": "/rooted",
        "Concurrency": 0,
    }
    found = problems_of(with_store(ContentStore="s3", ObjectStore=objects))
    assert [p.split(":", 1)[0] for p in found] == [
        "Store.ObjectStore.Endpoint",
        "Store.ObjectStore.Bucket",
        "Store.ObjectStore.Prefix",
        "Store.ObjectStore.Concurrency",
    ]


def test_keys_are_references_given_together_never_values() -> None:
    literal = {**OBJECTS, "SecretKeySecret": "wJalrXUtnFEMI"}
    (problem,) = problems_of(with_store(ContentStore="s3", ObjectStore=literal))
    assert problem.startswith("Store.ObjectStore.SecretKeySecret: a secret is not accepted")
    assert "wJalrXUtnFEMI" not in problem
    alone = {k: v for k, v in OBJECTS.items() if k != "SecretKeySecret"}
    assert problems_of(with_store(ContentStore="s3", ObjectStore=alone)) == [
        "Store.ObjectStore.SecretKeySecret: AccessKeySecret and SecretKeySecret are given "
        "together or not at all"
    ]
    unknown = {**OBJECTS, "SecretKey": "wJalrXUtnFEMI"}
    (problem,) = problems_of(with_store(ContentStore="s3", ObjectStore=unknown))
    assert "wJalrXUtnFEMI" not in problem
