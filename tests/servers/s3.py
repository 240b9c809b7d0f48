"""Start and stop an S3-compatible object store (moto's server) on loopback, by its pid.

The store speaks S3 over real HTTP, or HTTPS with a certificate from a throwaway authority
(`trustme`) that clients are told to trust by file. It keeps objects in memory and takes any
access key; each test gets a bucket of its own (`new_bucket`), and a second client
(`admin_client`) acts behind the back of the store under test.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import uuid
from typing import TYPE_CHECKING

import trustme

from servers._common import LOOPBACK, ServerStartError, free_port, scratch_dir, tail, terminate

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

STARTUP_TIMEOUT = 60.0
ACCESS_KEY = "mailfathom-test-access"
SECRET_KEY = "mailfathom-test-secret-key"
REGION = "us-east-1"


class S3Server:
    def __init__(self, *, tls: bool = False) -> None:
        self.tls = tls
        self.port = 0
        self.root = scratch_dir("mailfathom-s3-")
        self.ca_path = self.root / "ca.pem"
        self._proc: subprocess.Popen[bytes] | None = None
        if tls:
            authority = trustme.CA()
            authority.cert_pem.write_to_path(str(self.ca_path))
            issued = authority.issue_cert(LOOPBACK, "localhost")
            issued.cert_chain_pems[0].write_to_path(str(self.root / "server.pem"))
            issued.private_key_pem.write_to_path(str(self.root / "server.key"))

    @property
    def endpoint(self) -> str:
        return f"{'https' if self.tls else 'http'}://{LOOPBACK}:{self.port}"

    def start(self) -> S3Server:
        self.port = free_port()
        command = [sys.executable, "-m", "moto.server", "-H", LOOPBACK, "-p", str(self.port)]
        if self.tls:
            command += ["-c", str(self.root / "server.pem"), "-k", str(self.root / "server.key")]
        log = self.root / "server.log"
        with open(log, "wb") as out:
            self._proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline and self._proc.poll() is None:
            try:
                with socket.create_connection((LOOPBACK, self.port), timeout=1.0):
                    pass
            except OSError:
                time.sleep(0.1)
                continue
            self.admin_client().list_buckets()
            return self
        self.stop()
        raise ServerStartError(f"the test S3 server did not start: {tail(log)}")

    def admin_client(self) -> S3Client:
        """A client of its own, as an operator or another machine would have."""
        import boto3

        return boto3.session.Session().client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            verify=str(self.ca_path) if self.tls else True,
        )

    def new_bucket(self) -> str:
        name = f"mf-{uuid.uuid4().hex[:16]}"
        self.admin_client().create_bucket(Bucket=name)
        return name

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            terminate(proc)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)
