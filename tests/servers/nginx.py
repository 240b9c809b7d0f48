"""Debian's nginx as a load balancer for tests: round robin over upstream ports on loopback,
no affinity, nothing buffered (the MCP endpoint streams server-sent events), each request's
upstream written to an access log the test reads.

The master process runs in the foreground (`daemon off`) in a session of its own, started
and stopped by its PID; every path it writes is in a private scratch directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from ._common import LOOPBACK, ServerStartError, free_port, scratch_dir, tail, terminate

STARTUP_TIMEOUT = 15.0


def find_nginx() -> str:
    found = shutil.which("nginx") or (
        "/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None
    )
    if found is None:
        raise ServerStartError("nginx is not installed (Debian: apt-get install nginx-light)")
    return found


def _config(root: Path, port: int, upstreams: list[int]) -> str:
    servers = "\n".join(f"        server {LOOPBACK}:{p};" for p in upstreams)
    user = "user root root;\n" if os.geteuid() == 0 else ""
    return f"""{user}worker_processes 1;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{ worker_connections 256; }}
http {{
    client_body_temp_path {root}/body;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    log_format upstream '$upstream_addr $request_method $status';
    access_log {root}/access.log upstream;
    upstream replicas {{
{servers}
        keepalive 32;
    }}
    server {{
        listen {LOOPBACK}:{port};
        location / {{
            proxy_pass http://replicas;
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_cache off;
            proxy_read_timeout 300s;
            proxy_next_upstream off;
        }}
    }}
}}
"""


class RoundRobinBalancer:
    """nginx in front of `upstreams`, on a port of its own (`port`)."""

    def __init__(self, upstreams: list[int]) -> None:
        self.upstreams = upstreams
        self.root = scratch_dir("mf-nginx-")
        self.port = free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def access_log(self) -> Path:
        return self.root / "access.log"

    def start(self) -> RoundRobinBalancer:
        config = self.root / "nginx.conf"
        config.write_text(_config(self.root, self.port, self.upstreams), "utf-8")
        argv = [find_nginx(), "-p", str(self.root), "-c", str(config), "-g", "daemon off;"]
        with (self.root / "stderr.log").open("wb") as log:
            self._process = subprocess.Popen(argv, stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise ServerStartError("nginx exited: " + tail(self.root / "error.log"))
            if (self.root / "nginx.pid").exists():
                return self
            time.sleep(0.05)
        raise ServerStartError("nginx did not start: " + tail(self.root / "error.log"))

    def served(self, since: int = 0) -> list[tuple[int, str, int]]:
        """(upstream port, method, status) of each request logged after the first `since`."""
        lines = self.access_log.read_text("utf-8").splitlines() if self.access_log.exists() else []
        rows = []
        for line in lines[since:]:
            address, method, status = line.split()
            rows.append((int(address.rsplit(":", 1)[1]), method, int(status)))
        return rows

    def stop(self) -> None:
        if self._process is not None:
            terminate(self._process)
            self._process = None
        shutil.rmtree(self.root, ignore_errors=True)
