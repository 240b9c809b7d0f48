"""Reading what an authorization server publishes: its metadata, its keys, and its answer
about a token.

Every answer is bounded in size and time (`ANSWER_SECONDS` for the whole exchange, since a
request of a person waits on it), and nothing from it (nor the address asked) is repeated in
an error, since the server is reached with a token in hand: a failure says only that the
server could not be used. Redirects are not followed, so nothing sent to the configured
address reaches any other; a redirect, like a 404 or 410, says the address has moved.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import AsyncExitStack, contextmanager
from types import TracebackType
from typing import Any, Self
from urllib.parse import quote, urlsplit, urlunsplit

import anyio
import httpx2
import structlog
from anyio.abc import TaskGroup

from mailfathom.domain.web_addresses import is_secure_address

MAX_ANSWER_OCTETS = 512 * 1024
ANSWER_SECONDS = 5.0
_TIMEOUT = httpx2.Timeout(ANSWER_SECONDS)
_MOVED = frozenset({301, 302, 303, 307, 308, 404, 410})

log = structlog.get_logger("mailfathom.mcp")


class AuthorizationServerUnavailable(Exception):
    """An authorization server did not give a usable answer in time: unreachable, an error
    status, too large, or not a JSON object."""


class AddressMoved(AuthorizationServerUnavailable):
    """The address answered that what was asked is not, or no longer, there."""


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Bound what the block asks of an authorization server: past `seconds` it is abandoned
    and the server counts as unavailable."""
    try:
        with anyio.fail_after(seconds):
            yield
    except TimeoutError:
        raise AuthorizationServerUnavailable("the server did not answer in time") from None


class AuthorizationServerClient:
    """One HTTP client for every request to the configured authorization servers, and the
    task group of the work no request waits for (a refresh of keys that have aged). Entered
    with the app, inside the event loop that serves requests, and left with it; the HTTP
    client is opened on first use."""

    def __init__(self) -> None:
        self._client: httpx2.AsyncClient | None = None
        self._group: TaskGroup | None = None
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> Self:
        self._stack = AsyncExitStack()
        await self._stack.__aenter__()
        self._stack.push_async_callback(self._close)
        self._group = await self._stack.enter_async_context(anyio.create_task_group())
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Background work is abandoned; an error leaving the block goes on as it came, not
        wrapped in the group's."""
        group, self._group = self._group, None
        if group is not None:
            group.cancel_scope.cancel()
        await self._stack.aclose()

    def start_soon(self, work: Callable[[], Awaitable[None]]) -> None:
        """Run `work` behind the request that asked for it. A failure nobody foresaw is
        logged by its kind alone and ends nothing else."""
        if self._group is None:
            raise RuntimeError("the authorization server client is not entered")
        self._group.start_soon(_guarded, work)

    def _http(self) -> httpx2.AsyncClient:
        if self._client is None:
            self._client = httpx2.AsyncClient(timeout=_TIMEOUT, follow_redirects=False)
        return self._client

    async def get(self, url: str) -> dict[str, Any]:
        return await self._json("GET", url)

    async def post_form(
        self, url: str, form: Mapping[str, str], basic: tuple[str, str]
    ) -> dict[str, Any]:
        """POST `form` as the client `basic` names (its id and secret), each form-encoded
        before they are joined in the Basic header, as RFC 6749 section 2.3.1 requires: an
        id or secret holding `:`, `%`, `+` or a space then reaches the server unchanged."""
        client, secret = (quote(part, safe="") for part in basic)
        return await self._json("POST", url, data=dict(form), auth=httpx2.BasicAuth(client, secret))

    async def _json(self, method: str, url: str, **options: Any) -> dict[str, Any]:
        headers = {"Accept": "application/json"}
        try:
            with within(ANSWER_SECONDS):
                async with self._http().stream(method, url, headers=headers, **options) as answer:
                    if answer.status_code in _MOVED:
                        raise AddressMoved(f"HTTP status {answer.status_code}")
                    if answer.status_code != 200:
                        raise AuthorizationServerUnavailable(f"HTTP status {answer.status_code}")
                    body = bytearray()
                    async for chunk in answer.aiter_bytes():
                        body.extend(chunk)
                        if len(body) > MAX_ANSWER_OCTETS:
                            raise AuthorizationServerUnavailable("the answer is too large")
        except httpx2.HTTPError:
            raise AuthorizationServerUnavailable("the server could not be reached") from None
        try:
            document = json.loads(bytes(body))
        except (ValueError, RecursionError):
            raise AuthorizationServerUnavailable("the answer is not JSON") from None
        if not isinstance(document, dict):
            raise AuthorizationServerUnavailable("the answer is not a JSON object")
        return document

    async def _close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


async def _guarded(work: Callable[[], Awaitable[None]]) -> None:
    try:
        await work()
    except Exception as failure:
        log.error("oauth.background_failed", failure=type(failure).__name__)


def metadata_addresses(issuer: str) -> list[str]:
    """Where an issuer's metadata may be published, in the order they are asked: RFC 8414
    section 3.1 (the well-known segment before the issuer's path), OpenID Connect Discovery
    section 4 (after it), and the RFC 8414 form of the OpenID document."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(well_known: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, well_known, "", ""))

    addresses = [
        at(f"/.well-known/oauth-authorization-server{path}"),
        at(f"{path}/.well-known/openid-configuration"),
        at(f"/.well-known/openid-configuration{path}"),
    ]
    return list(dict.fromkeys(addresses))


async def issuer_metadata(client: AuthorizationServerClient, issuer: str) -> dict[str, Any]:
    """The metadata `issuer` publishes about itself. A document naming another issuer is not
    this server's (RFC 8414 section 3.3) and is passed over."""
    for address in metadata_addresses(issuer):
        try:
            document = await client.get(address)
        except AuthorizationServerUnavailable:
            continue
        if document.get("issuer") == issuer:
            return document
    raise AuthorizationServerUnavailable("no metadata naming the issuer was found")


def published_address(metadata: Mapping[str, Any], key: str) -> str:
    """An address the metadata names under `key`, held to the rule configured addresses are
    held to (https, or http on loopback)."""
    value = metadata.get(key)
    if not isinstance(value, str) or not is_secure_address(value):
        raise AuthorizationServerUnavailable(f"the metadata names no usable {key}")
    return value
