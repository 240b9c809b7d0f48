"""The test model provider as a process of its own.

Run as `python -m servers.model_provider_main CONFIG.json` with `tests/` on the path. The
config file, written by `servers.model_provider.ModelProvider`, holds the control secret, the
bearer key it accepts, the starting models and the port to bind on 127.0.0.1 (0: one the system
picks); once it listens it prints `ready PORT` on stdout.
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

from .model_provider_app import create_app


def main(config_path: str) -> None:
    settings = json.loads(Path(config_path).read_text())
    # Request lines and bodies are the tests' business: the server logs none of them.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    app = create_app(settings)
    httpd = make_server("127.0.0.1", int(settings.get("port") or 0), app, threaded=True)

    def stop(signum: int, frame: FrameType | None) -> None:
        threading.Thread(target=httpd.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    print(f"ready {httpd.port}", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1])
