"""The verification phase of `initial_sync.py`: what sender verification (and, separately,
the machine-authorship reading) adds to an initial synchronization.

The generated mailbox is signed here, as its senders' servers would have signed it, with keys
made for the run and published by a DNS server on loopback (`tests/servers/dns.py`, dnslib):

  aligned      signed by the author's own domain (one of its selectors; one domain signs
               twice, ed25519 and RSA, as RFC 8463 suggests): authenticated
  other        signed by a sending service's domain, not the author's: not established
  unsigned     no signature: not established
  unresolvable signed by the author's domain with a selector whose key is not published
               (the name server answers NXDOMAIN): not established

The same initial sync then runs in interleaved pairs with `[SenderVerification] Enabled` on
(the resolver pointed at the loopback server) and off, and the stored verdicts are counted
against the plan, so that a pass which quietly skipped verification cannot look cheap. The
name server counts the questions each pass asked: the key cache keeps them near the number of
distinct selectors, however many messages those selectors signed.
"""

from __future__ import annotations

import base64
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import dkim
import nacl.signing
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from machine import log

KEY_TTL = 3600
# The mix of one mailbox; the rest is signed by the author's own domain.
SHARE_OTHER = 0.12
SHARE_UNSIGNED = 0.13
SHARE_UNRESOLVABLE = 0.05
SERVICES = ("mailer.example", "lists.example")
UNPUBLISHED_SELECTOR = "retired2019"
_FROM = re.compile(rb"^From:[^\n]*<([^>\n]+)>", re.MULTILINE | re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Key:
    algorithm: bytes
    private: bytes
    record: str


def rsa_key(bits: int = 2048) -> Key:
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return Key(b"rsa-sha256", private, f"v=DKIM1; k=rsa; p={base64.b64encode(public).decode()}")


def ed25519_key() -> Key:
    key = nacl.signing.SigningKey.generate()
    public = base64.b64encode(bytes(key.verify_key)).decode()
    return Key(b"ed25519-sha256", base64.b64encode(bytes(key)), f"v=DKIM1; k=ed25519; p={public}")


class Signers:
    """Every domain's published selectors and their keys; the names the zone holds."""

    def __init__(self, author_domains: Iterable[str]) -> None:
        self.keys: dict[tuple[str, str], Key] = {}
        self.selectors: dict[str, list[str]] = {}
        for index, domain in enumerate(sorted(set(author_domains))):
            # Two domains are rotating keys: either selector may sign.
            names = ["s2025", "s2026"] if index % 3 == 0 else ["s2025"]
            self.selectors[domain] = names
            for selector in names:
                self.keys[(selector, domain)] = rsa_key()
        for domain in SERVICES:
            self.selectors[domain] = ["k1"]
            self.keys[("k1", domain)] = rsa_key()
        self.dual = sorted(set(author_domains))[-1]
        self.keys[("ed2026", self.dual)] = ed25519_key()

    def zone(self) -> dict[str, str]:
        return {f"{s}._domainkey.{d}": key.record for (s, d), key in self.keys.items()}


def _sign(raw: bytes, key: Key, domain: str, selector: str) -> bytes:
    header: bytes = dkim.sign(
        raw,
        selector.encode(),
        domain.encode(),
        key.private,
        signature_algorithm=key.algorithm,
        canonicalize=(b"relaxed", b"relaxed"),
    )
    return header + raw


def _without_field(raw: bytes, name: bytes) -> bytes:
    """`raw` (LF line ends) without every field `name` of its header block."""
    head, sep, body = raw.partition(b"\n\n")
    kept: list[bytes] = []
    dropping = False
    prefix = name.lower() + b":"
    for line in head.split(b"\n"):
        if line[:1] in (b" ", b"\t"):
            if not dropping:
                kept.append(line)
            continue
        dropping = line.lower().startswith(prefix)
        if not dropping:
            kept.append(line)
    return b"\n".join(kept) + sep + body


class SignedMailbox:
    """Signs generated messages by the plan above and remembers what each should read as."""

    def __init__(self, seed: int, author_domains: Iterable[str]) -> None:
        self.rng = random.Random(seed)
        self.signers = Signers(author_domains)
        self.kinds: Counter[str] = Counter()
        self.used: set[str] = set()
        self.signing_s = 0.0

    def sign(self, messages: Iterable[Any]) -> Iterator[Any]:
        for message in messages:
            started = time.perf_counter()
            raw = self._signed(message.raw)
            self.signing_s += time.perf_counter() - started
            yield replace(message, raw=raw)

    def _signed(self, raw: bytes) -> bytes:
        # The generator's own DKIM-Signature fields carry random bytes; they are replaced.
        crlf = _without_field(raw, b"DKIM-Signature").replace(b"\n", b"\r\n")
        found = _FROM.search(crlf)
        author = found.group(1).decode().rpartition("@")[2].lower() if found else ""
        draw = self.rng.random()
        rng = self.rng
        signers = self.signers
        if author not in signers.selectors or draw < SHARE_UNSIGNED:
            self.kinds["unsigned"] += 1
            signed = crlf
        elif draw < SHARE_UNSIGNED + SHARE_OTHER:
            self.kinds["other"] += 1
            service = rng.choice(SERVICES)
            signed = self._signed_by(crlf, signers.keys[("k1", service)], service, "k1")
        elif draw < SHARE_UNSIGNED + SHARE_OTHER + SHARE_UNRESOLVABLE:
            self.kinds["unresolvable"] += 1
            # Any key will do: the name server says none exists under this selector.
            key = signers.keys[(signers.selectors[author][0], author)]
            signed = self._signed_by(crlf, key, author, UNPUBLISHED_SELECTOR)
        else:
            self.kinds["aligned"] += 1
            selector = rng.choice(signers.selectors[author])
            signed = self._signed_by(crlf, signers.keys[(selector, author)], author, selector)
            if author == signers.dual:
                signed = self._signed_by(signed, signers.keys[("ed2026", author)], author, "ed2026")
        return signed.replace(b"\r\n", b"\n")

    def _signed_by(self, raw: bytes, key: Key, domain: str, selector: str) -> bytes:
        self.used.add(f"{selector}._domainkey.{domain}")
        return _sign(raw, key, domain, selector)

    def expected_authenticated(self) -> int:
        return self.kinds["aligned"]

    def names(self) -> list[str]:
        """Every name a pass may ask about: the published keys and the unpublished ones."""
        unpublished = [f"{UNPUBLISHED_SELECTOR}._domainkey.{d}" for d in self.signers.selectors]
        return sorted({*self.signers.zone(), *unpublished})


def publish(server: Any, mailbox: SignedMailbox) -> None:
    for name, record in mailbox.signers.zone().items():
        server.publish(name, record, ttl=KEY_TTL)


def questions(server: Any, names: list[str]) -> dict[str, int]:
    return {name: server.questions(name) for name in names}


# --------------------------------------------------------------------------- the child


def sections(verify: bool, assess: bool, resolver: tuple[str, int]) -> dict[str, Any]:
    """The two configuration sections of a pass, as an operator writes them."""
    host, port = resolver
    return {
        "SenderVerification": {"Enabled": verify, "Resolver": f"{host}:{port}"},
        "MachineAuthorship": {"Enabled": assess},
    }


def configured(config: Any, spec: dict[str, Any]) -> Any:
    """The deployment `config` with the sections a spec carries (see `sections`), read by
    the product's configuration loader; without them, `config` as it is."""
    written = spec.get("sections")
    if not written:
        return config
    from mailfathom.adapters.config.toml_loader import parse_config

    read = parse_config(
        {"Store": {"DataDir": str(config.store.data_dir)}, **written},
        base_dir=config.store.data_dir,
    )
    return replace(
        config,
        sender_verification=read.sender_verification,
        machine_authorship=read.machine_authorship,
    )


def time_verification() -> dict[str, Any]:
    """Count every verification and the thread time it took, where the code measured has
    the engine."""
    timing: dict[str, Any] = {"calls": 0, "s": 0.0, "cpu_s": 0.0}
    try:
        from mailfathom.adapters.authentication.engine import SenderVerificationEngine
    except ImportError:
        return timing
    original = SenderVerificationEngine.verify

    def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return original(self, *args, **kwargs)
        finally:
            timing["calls"] += 1
            timing["s"] += time.perf_counter() - start
            timing["cpu_s"] += time.thread_time() - cpu

    SenderVerificationEngine.verify = timed  # type: ignore[method-assign]
    return timing


_WORKER_VERIFIER: Any = None


def _install_verifier(config: Any) -> None:
    global _WORKER_VERIFIER
    from mailfathom.adapters.authentication.engine import build_sender_verifier

    _WORKER_VERIFIER = build_sender_verifier(config)


def _verify_many(items: list[tuple[bytes, bool]], trusted: frozenset[str]) -> list[Any]:
    return [
        _WORKER_VERIFIER.verify(raw, headers_only=headers_only, trusted_authserv_ids=trusted)
        for raw, headers_only in items
    ]


def verify_in_processes(processes: int, config: Any) -> Any:
    """Experiment: the trust step's verifications handed, a part of each batch at a time, to
    `processes` worker processes (each with its own engine and key cache) instead of the
    step's threads. Only where the authorship reading is off. Returns the pool, started and
    warmed up before the pass is timed."""
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor

    from mailfathom.app.sync import trust_step

    pool = ProcessPoolExecutor(
        processes,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_install_verifier,
        initargs=(config,),
    )
    for started in [pool.submit(_verify_many, [], frozenset()) for _ in range(processes)]:
        started.result()
    original = trust_step.TrustStep.begin

    def begin(self: Any, fetched: Any, preparing: Any) -> Any:
        ports = self._ports
        if ports.verifier is None or ports.assessor is not None:
            return original(self, fetched, preparing)
        items = [(m.raw, m.headers_only) for m in fetched]
        size = max(1, -(-len(items) // (processes * 2)))
        verdicts: list[Future[Any]] = []
        for start in range(0, len(items), size):
            part = pool.submit(
                _verify_many, items[start : start + size], ports.trusted_authserv_ids
            )
            mine: list[Future[Any]] = [Future() for _ in items[start : start + size]]

            def settle(done: Future[Any], mine: list[Future[Any]] = mine) -> None:
                for future, verdict in zip(mine, done.result(), strict=True):
                    future.set_result(verdict)

            part.add_done_callback(settle)
            verdicts += mine
        return trust_step.PendingTrust(verdicts, None, len(fetched))

    trust_step.TrustStep.begin = begin  # type: ignore[method-assign]
    return pool


def stored_readings(connection: Any) -> dict[str, dict[str, int]]:
    """How many stored messages have each verdict and each authorship band."""
    import sqlalchemy as sa

    found: dict[str, dict[str, int]] = {"verdicts": {}, "sources": {}, "authorship": {}}
    if not sa.inspect(connection).has_table("message_trust"):
        return found
    for key, column in (
        ("verdicts", "author_authentication"),
        ("sources", "verdict_source"),
        ("authorship", "authorship_state"),
    ):
        rows = connection.execute(
            sa.text(
                f"SELECT {column}, count(*) FROM message_trust "
                f"WHERE {column} IS NOT NULL GROUP BY {column}"
            )
        )
        found[key] = {str(value): int(n) for value, n in rows}
    return found


# --------------------------------------------------------------------------- the pairs


def compare_switch(
    pairs: int,
    label: str,
    run: Callable[[bool], dict[str, Any]],
) -> dict[str, Any]:
    """`run(on)` in interleaved pairs (the first of a pair alternating), so that drift in
    the machine's load falls on both alike; the medians of each and their ratios."""
    runs: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    for pair in range(pairs):
        for on in (True, False) if pair % 2 == 0 else (False, True):
            state = "on" if on else "off"
            log(f"ours: initial sync, {label} {state} (pair {pair + 1}/{pairs})")
            r = run(on)
            log(f"ours ({label} {state}): {r['sync_wall_s']:.2f} s")
            runs[on].append(r)

    def median(on: bool, key: Callable[[dict[str, Any]], float]) -> float:
        values = sorted(key(r) for r in runs[on])
        return values[len(values) // 2]

    def cpu(r: dict[str, Any]) -> float:
        return float(
            sum(r.get(k, 0.0) for k in ("cpu_user_s", "cpu_sys_s", "helper_processes_cpu_s"))
        )

    on_s, off_s = (
        median(True, lambda r: r["sync_wall_s"]),
        median(False, lambda r: r["sync_wall_s"]),
    )
    on_cpu, off_cpu = median(True, cpu), median(False, cpu)
    return {
        "pairs": pairs,
        "on_sync_wall_s": on_s,
        "off_sync_wall_s": off_s,
        "on_over_off": on_s / off_s if off_s > 0 else float("nan"),
        "on_cpu_s": on_cpu,
        "off_cpu_s": off_cpu,
        "cpu_on_over_off": on_cpu / off_cpu if off_cpu > 0 else float("nan"),
        "on_runs_s": [r["sync_wall_s"] for r in runs[True]],
        "off_runs_s": [r["sync_wall_s"] for r in runs[False]],
        "on_runs": runs[True],
        "off_runs": runs[False],
    }


def check_verdicts(result: dict[str, Any], mailbox: SignedMailbox, messages: int) -> None:
    """Every pass stored what the plan says: each message verified with verification on,
    the aligned ones authenticated; nothing with it off."""
    for r in result["on_runs"]:
        verdicts = r["readings"]["verdicts"]
        if (
            sum(verdicts.values()) != messages
            or verdicts.get("authenticated", 0) != mailbox.expected_authenticated()
        ):
            raise RuntimeError(
                f"verification on stored {verdicts} for {messages} messages; "
                f"{mailbox.expected_authenticated()} should be authenticated"
            )
    for r in result["off_runs"]:
        if r["readings"]["verdicts"]:
            raise RuntimeError("a sync with verification off stored verdicts")


def check_readings(result: dict[str, Any], messages: int) -> None:
    for r in result["on_runs"]:
        if sum(r["readings"]["authorship"].values()) != messages:
            raise RuntimeError("authorship on did not read every message")
    for r in result["off_runs"]:
        if r["readings"]["authorship"]:
            raise RuntimeError("a sync with authorship off stored readings")


def summary(result: dict[str, Any], messages: int, kind: str = "verdicts") -> dict[str, Any]:
    """What is kept of a comparison: the medians, ratios and rates, not every run."""
    on_runs, off_runs = result.pop("on_runs"), result.pop("off_runs")
    result["on_messages_per_s"] = messages / result["on_sync_wall_s"]
    for key in ("backfill_wall_s", "backfill_cpu_s", "backfilled"):
        values = sorted(r.get(key, 0) for r in on_runs)
        result[f"on_{key}_median"] = values[len(values) // 2]
    inline = [sum(r.get("inline_readings", {}).get(kind, {}).values()) for r in on_runs]
    result["on_inline_median"] = sorted(inline)[len(inline) // 2]
    result["off_messages_per_s"] = messages / result["off_sync_wall_s"]
    result["on_readings"] = on_runs[0]["readings"]
    asked = [r.get("dns_questions") for r in on_runs if r.get("dns_questions") is not None]
    if asked:
        result["dns_questions_per_pass"] = [sum(q.values()) for q in asked]
        result["dns_names_asked_per_pass"] = [sum(1 for n in q.values() if n) for q in asked]
        result["dns_questions_by_name_first_pass"] = {n: q for n, q in asked[0].items() if q}
        result["dns_questions_off"] = [sum(r["dns_questions"].values()) for r in off_runs]
    verified = [r["verification"] for r in on_runs if r.get("verification", {}).get("calls")]
    if verified:
        result["verify_calls"] = verified[0]["calls"]
        result["verify_thread_s_per_pass"] = [v["s"] for v in verified]
        result["verify_thread_cpu_s_per_pass"] = [v["cpu_s"] for v in verified]
    return result


def print_lines(results: dict[str, Any]) -> None:
    verification = results.get("sender_verification")
    if verification:
        n = results["verification_mailbox"]["messages"]
        print(
            f"  sender verification ({n} messages, {verification['mix']}): on "
            f"{verification['on_sync_wall_s']:.2f} s / off {verification['off_sync_wall_s']:.2f} s"
            f" = {verification['on_over_off']:.3f} wall time (medians of "
            f"{verification['pairs']} interleaved pairs); CPU "
            f"{verification['cpu_on_over_off']:.3f}; "
            f"{verification['on_messages_per_s']:.0f} msg/s on, "
            f"{verification['off_messages_per_s']:.0f} msg/s off"
        )
        if "dns_questions_per_pass" in verification:
            print(
                f"  sender verification: DNS questions per pass "
                f"{verification['dns_questions_per_pass']} about "
                f"{verification['dns_names_asked_per_pass']} names "
                f"({verification['published_keys']} keys published, "
                f"{verification['distinct_selectors']} selectors used); verdicts "
                f"{verification['on_readings']['verdicts']}"
            )
        if "verify_thread_s_per_pass" in verification:
            spent = verification["verify_thread_s_per_pass"]
            cpu = verification["verify_thread_cpu_s_per_pass"]
            print(
                f"  sender verification: {verification['verify_calls']} verifications, "
                f"{sorted(spent)[len(spent) // 2]:.2f} s on the verifying threads "
                f"({sorted(cpu)[len(cpu) // 2]:.2f} s CPU) per pass"
            )
    for label in ("sender_verification", "machine_authorship"):
        switched = results.get(label)
        if switched and "on_backfill_wall_s_median" in switched:
            print(
                f"  {label.replace('_', ' ')}: {switched['on_inline_median']} messages read "
                f"by the pass itself; the backfill after it read "
                f"{switched['on_backfilled_median']} messages in "
                f"{switched['on_backfill_wall_s_median']:.2f} s "
                f"({switched['on_backfill_cpu_s_median']:.2f} s CPU) (medians)"
            )
    authorship = results.get("machine_authorship")
    if authorship:
        print(
            f"  machine authorship: on {authorship['on_sync_wall_s']:.2f} s / off "
            f"{authorship['off_sync_wall_s']:.2f} s = {authorship['on_over_off']:.3f} wall time "
            f"(medians of {authorship['pairs']} interleaved pairs); CPU "
            f"{authorship['cpu_on_over_off']:.3f}; {authorship['on_messages_per_s']:.0f} msg/s "
            f"on, {authorship['off_messages_per_s']:.0f} msg/s off; bands "
            f"{authorship['on_readings']['authorship']}"
        )
