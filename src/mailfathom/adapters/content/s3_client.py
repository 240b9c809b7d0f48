"""The S3 client the object store speaks through, and what its failures mean.

`boto3` is imported when the first client is made, not with this module: importing it costs
a process a few hundred milliseconds and tens of megabytes, which a deployment keeping its
content in packs has no reason to pay.

A failure is told by its kind and never by its text: the client's messages name the request's
address, and that holds the object key (a message's content hash).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from mailfathom.adapters.config.secrets import read_secret
from mailfathom.domain.codes import StoreCode
from mailfathom.domain.content_storage import ObjectStoreConfig
from mailfathom.domain.errors import StoreError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

# Attempts of one request before its failure is reported (the client's standard retry mode
# backs off between them; a timeout counts as a failed attempt).
ATTEMPTS = 3
# Answers that say the object is not there.
_ABSENT = frozenset({"NoSuchKey", "NotFound", "404"})
# An error code repeated in a message is one of S3's names (`AccessDenied`), never free text.
_ERROR_NAME = re.compile(r"[A-Za-z0-9.]{1,64}")


class ObjectAbsent(Exception):
    """The object store holds no object under the key asked for."""


def make_client(config: ObjectStoreConfig) -> S3Client:
    """A client for `config`'s store; reads the key secrets now (a rotated key is picked up
    by the next process)."""
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise StoreError(
            'Store.ContentStore is "s3" and the S3 client is not installed: install '
            'MailFathom with its "s3" extra.',
            code=StoreCode.OBJECT_STORE_CLIENT_NOT_INSTALLED,
        ) from None
    access = secret = None
    if config.access_key_secret is not None and config.secret_key_secret is not None:
        access = read_secret(config.access_key_secret)
        secret = read_secret(config.secret_key_secret)
    settings = Config(
        connect_timeout=config.timeout_seconds,
        read_timeout=config.timeout_seconds,
        retries={"mode": "standard", "total_max_attempts": ATTEMPTS},
        max_pool_connections=config.concurrency,
        s3={"addressing_style": config.addressing_style.value},
        signature_version="s3v4",
        # Checksums only where a request sets one: the content store sets SHA-256 on every
        # upload, and servers that take no trailing checksum are spared the chunked form.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    session = boto3.session.Session()
    return session.client(
        "s3",
        endpoint_url=config.endpoint,
        region_name=config.region,
        aws_access_key_id=access,
        aws_secret_access_key=secret,
        verify=str(config.ca_file) if config.ca_file is not None else True,
        config=settings,
    )


@contextmanager
def store_failures(operation: str) -> Iterator[None]:
    """Report the client's failures during `operation` as coded `StoreError`s, and an
    object not found as `ObjectAbsent`."""
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    try:
        yield
    except ClientError as error:
        code = str(error.response.get("Error", {}).get("Code", ""))
        status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))
        if code in _ABSENT:
            raise ObjectAbsent from None
        if status >= 500 or status == 429 or code == "SlowDown":
            raise _unreachable(operation, f"answered {status}") from None
        named = code if _ERROR_NAME.fullmatch(code) else str(status)
        raise StoreError(
            f"The object store refused to {operation} ({named}).",
            code=StoreCode.OBJECT_STORE_REFUSED,
        ) from None
    except NoCredentialsError:
        raise StoreError(
            f"The object store could not be asked to {operation}: no credentials were found.",
            code=StoreCode.OBJECT_STORE_REFUSED,
        ) from None
    except BotoCoreError as error:
        raise _unreachable(operation, type(error).__name__) from None


def read_object(client: S3Client, bucket: str, name: str, operation: str) -> bytes:
    """The octets of the object `name`, or `ObjectAbsent`. The client tries a request again
    only until its answer begins: an answer whose body breaks off midway (the connection
    lost, a read timing out) is asked for again here, up to `ATTEMPTS` reads in all."""
    from botocore.exceptions import BotoCoreError

    with store_failures(operation):
        for attempt in range(1, ATTEMPTS + 1):
            body = client.get_object(Bucket=bucket, Key=name)["Body"]
            try:
                return body.read()
            except BotoCoreError:
                body.close()
                if attempt == ATTEMPTS:
                    raise
    raise AssertionError("every attempt either returns or raises")


def _unreachable(operation: str, how: str) -> StoreError:
    return StoreError(
        f"The object store could not {operation} after {ATTEMPTS} attempts ({how}).",
        code=StoreCode.OBJECT_STORE_UNREACHABLE,
    )
