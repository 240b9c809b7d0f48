"""`GET /downloads/<link>`: one attachment, to whoever holds a link get_email_content issued.

The link is the credential, so the route is served beside `/mcp` without admission and
without the Host check that guards `/mcp` and `/metrics` from DNS rebinding: a page that
rebinds a name to this listener holds no link, and the route answers nothing to a request
that carries none. It never lists, searches or guesses: a path is either a link that opens
or a refusal.

A file is always answered as a download, never as a page: `Content-Disposition: attachment`
with the normalized file name (RFC 6266, the name in UTF-8 per RFC 8187 beside an ASCII
fallback), the stored media type with sniffing off, a sandboxing Content-Security-Policy
for the browser that renders it anyway, and nothing cached or referred. A refusal is a
status, a code and a sentence naming nothing about the mail. Neither the link nor anything
about the file is logged: the use case logs the outcome's code and size.
"""

from __future__ import annotations

import json
import re
import uuid
from email.utils import encode_rfc2231

import anyio.to_thread
import structlog
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mailfathom.app.reading.download_attachment import AttachmentDownload, DownloadedFile
from mailfathom.domain.codes import Code
from mailfathom.domain.download_links import DOWNLOAD_PATH
from mailfathom.domain.errors import Refusal

log = structlog.get_logger("mailfathom.download")

_STATUS = {
    Code.DOWNLOAD_LINK_NOT_RECOGNIZED: 404,
    Code.DOWNLOAD_LINK_EXPIRED: 410,
    Code.DOWNLOAD_LINK_KEY_RETIRED: 410,
    Code.DOWNLOAD_FILE_GONE: 404,
    Code.CONTENT_UNAVAILABLE: 503,
}
_UNDIAGNOSED = "The download failed; the server log records why."
# RFC 6838 section 4.2: type and subtype names.
_MEDIA_TYPE = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
)
_UNSAFE_IN_FALLBACK = re.compile(r'[^\x20-\x7e]|["\\%]')
_SAFETY = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
}


def content_disposition(file_name: str | None) -> str:
    """`attachment`, with the name as an ASCII fallback and, where that lost anything, as
    UTF-8 in `filename*` (which a current client prefers)."""
    if not file_name:
        return "attachment"
    fallback = _UNSAFE_IN_FALLBACK.sub("_", file_name)
    value = f'attachment; filename="{fallback}"'
    if fallback != file_name:
        value += f"; filename*={encode_rfc2231(file_name, 'utf-8')}"
    return value


def served_media_type(media_type: str) -> str:
    """The stored media type when it is a plain type/subtype, else an opaque one."""
    if _MEDIA_TYPE.fullmatch(media_type):
        return media_type.lower()
    return "application/octet-stream"


def _file(found: DownloadedFile) -> Response:
    headers = {
        **_SAFETY,
        "Content-Type": served_media_type(found.media_type),
        "Content-Disposition": content_disposition(found.file_name),
    }
    return Response(found.content, headers=headers)


def _refused(code: int, message: str) -> Response:
    body = json.dumps({"code": code, "message": message}).encode()
    headers = {**_SAFETY, "Content-Type": "application/json"}
    return Response(body, status_code=_STATUS.get(Code(code), 500), headers=headers)


def download_route(download: AttachmentDownload) -> Route:
    async def serve(request: Request) -> Response:
        token = request.path_params["token"]
        try:
            found = await anyio.to_thread.run_sync(download.fetch, token)
        except Refusal as refusal:
            return _refused(refusal.code, refusal.message)
        except Exception as error:
            log.error(
                "download.undiagnosed_failure",
                correlation_id=uuid.uuid4().hex[:16],
                error_type=type(error).__name__,
            )
            return _refused(int(Code.UNDIAGNOSED), _UNDIAGNOSED)
        return _file(found)

    return Route(DOWNLOAD_PATH + "{token:path}", serve, methods=["GET", "HEAD"])
