"""What the reading tools publish of the stored verdicts and readings: the pair on every
summary and match, the evidence on a content read, deploymentTrust only for an authenticated
author the configuration names as it stands, and mail stored before anything verified it
saying so."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mailfathom.domain.config import SenderTrustConfig
from mcp_tests.client import structured
from mcp_tests.in_process import InProcess, in_process
from mcp_tests.trust_deployment import BEFORE, fill_trusted_mail, trust_config


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    root = tmp_path_factory.mktemp("trust")
    with in_process(root, trust_config(root), fill_trusted_mail) as served:
        yield served


def _listed(served: InProcess) -> dict[str, dict[str, Any]]:
    page = structured(served.call("full", "list_emails", {"pageSize": 50}))
    return {e["subject"]: e for e in page["emails"]}


def _pairs(served: InProcess) -> dict[str, tuple[str, str]]:
    return {
        subject: (
            e["senderVerification"]["authorAuthentication"],
            e["senderVerification"]["deploymentTrust"],
        )
        for subject, e in _listed(served).items()
    }


def test_every_summary_carries_the_stored_pair_and_trust_needs_an_authenticated_author(
    deployment: InProcess,
) -> None:
    assert _pairs(deployment) == {
        "Trusted sender signed": ("authenticated", "trusted"),
        # A forged From of a trusted sender is never trusted.
        "Trusted sender forged": ("failed", "unknown"),
        "Trusted domain signed": ("authenticated", "trusted"),
        "Own account signed": ("authenticated", "trusted"),
        "Stranger signed": ("authenticated", "unknown"),
        BEFORE: ("notEstablished", "unknown"),
    }
    listed = _listed(deployment)
    assert listed["Stranger signed"]["machineAuthorship"] == {"state": "likely", "likelihood": 0.9}
    assert listed["Own account signed"]["machineAuthorship"] == {
        "state": "unlikely",
        "likelihood": 0.1,
    }
    assert listed[BEFORE]["machineAuthorship"] == {"state": "notAssessed", "likelihood": 0}


def test_a_search_match_carries_the_same_pair_as_the_listing(deployment: InProcess) -> None:
    found = structured(deployment.call("full", "search_emails", {"queryText": "signed"}))
    summaries = {m["summary"]["subject"]: m["summary"] for m in found["matches"]}
    listed = _listed(deployment)
    assert set(summaries) >= {"Trusted sender signed", "Stranger signed"}
    for subject, summary in summaries.items():
        assert summary["senderVerification"] == listed[subject]["senderVerification"]
        assert summary["machineAuthorship"] == listed[subject]["machineAuthorship"]


def test_a_content_read_carries_the_stored_evidence(deployment: InProcess) -> None:
    listed = _listed(deployment)
    ids = [listed[s]["storedEmailId"] for s in ("Stranger signed", "Trusted sender forged", BEFORE)]
    read = structured(deployment.call("full", "get_email_content", {"storedEmailIds": ids}))
    signed, forged, before = (entry["content"] for entry in read["emails"])
    assert signed["headers"]["senderAuthentication"] == {
        "authenticatedDomain": "ELSEWHERE.EXAMPLE",
        "displayedAuthorDomain": "ELSEWHERE.EXAMPLE",
        "authenticatedBy": "dkim",
        "dmarc": "pass",
        "verdictSource": "receivingServer",
        "verificationState": "verified",
    }
    assert signed["authorshipEvidence"] == {
        "signals": ["hiddenCharacters", "formulaicFraming"],
        "profileRevision": "fake-profile-1",
    }
    assert signed["senderVerification"] == listed["Stranger signed"]["senderVerification"]
    assert forged["headers"]["senderAuthentication"]["verdictSource"] == "localVerification"
    assert forged["senderVerification"] == {
        "authorAuthentication": "failed",
        "deploymentTrust": "unknown",
    }
    assert before["headers"]["senderAuthentication"] == {
        "authenticatedDomain": None,
        "displayedAuthorDomain": "ELSEWHERE.EXAMPLE",
        "authenticatedBy": "none",
        "dmarc": "notReported",
        "verdictSource": "receivingServer",
        "verificationState": "notYetVerified",
    }
    assert before["authorshipEvidence"] == {"signals": [], "profileRevision": None}
    assert before["machineAuthorship"] == {"state": "notAssessed", "likelihood": 0}


def test_a_trust_configuration_change_takes_effect_without_verifying_again(
    deployment: InProcess,
) -> None:
    services = deployment.services
    original = services.config
    services.config = replace(original, sender_trust=SenderTrustConfig())
    try:
        changed = InProcess(services, deployment.root)
        pairs = _pairs(changed)
    finally:
        services.config = original
    assert pairs["Trusted sender signed"] == ("authenticated", "unknown")
    assert pairs["Trusted domain signed"] == ("authenticated", "unknown")
    # The deployment's own accounts are trusted without being listed.
    assert pairs["Own account signed"] == ("authenticated", "trusted")


def test_the_trust_section_is_read_from_the_configuration(tmp_path: Path) -> None:
    from mailfathom.adapters.config.toml_loader import load_config

    path = tmp_path / "mailfathom.toml"
    path.write_text(trust_config(tmp_path), "utf-8")
    loaded = load_config(path).sender_trust
    assert loaded == SenderTrustConfig(("boss@partner.example",), ("trusted.example",))
