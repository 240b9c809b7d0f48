"""The test authorization server as a process of its own.

Run as `python -m servers.oauth_main CONFIG.json` with `tests/` on the path. The config file,
written by `servers.oauth.OAuthServer`, holds the control secret, the introspection client's
credentials and the initial settings. The server binds 127.0.0.1 on a port the system picks,
then prints `ready PORT` on stdout.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from werkzeug.serving import make_server

from .oauth_app import create_app
from .oauth_state import Client, Store


def main(config_path: str) -> None:
    config = json.loads(Path(config_path).read_text())
    # Request lines carry codes and tokens in query strings: the server logs none of them.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    httpd = make_server("127.0.0.1", 0, lambda env, start: app(env, start), threaded=True)
    store = Store(issuer=f"http://127.0.0.1:{httpd.port}")
    store.rotate_refresh = bool(config["rotate_refresh_tokens"])
    store.device_interval = int(config["device_interval"])
    client_id, secret = config["introspection_client"]
    store.clients[client_id] = Client(client_id, secret, grant_types=[])
    app = create_app(store, config["control_secret"])

    def stop(signum: int, frame: FrameType | None) -> None:
        threading.Thread(target=httpd.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    print(f"ready {httpd.port}", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1])
